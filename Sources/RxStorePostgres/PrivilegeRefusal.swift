import RxStore

/// PostgreSQL's "permission denied" (SQLSTATE 42501) told as the person who set the roles up
/// needs it: which role, which table (or schema), which statement, and the line of
/// docs/deploy.md that gives the privilege, or, for a write no role but the owner's may make,
/// that it takes the owner's role. The server's own words stay in the message.
struct PrivilegeRefusal {
    /// The server's message, e.g. `permission denied for table audit_entry`.
    let message: String
    /// The statement refused (rxvault's SQL; bound values never appear in it).
    let sql: String?
    /// The role rxvault logged in as.
    let role: String

    /// What the privilege is on: ("table", "audit_entry"), ("schema", "public"), ...; nil when the
    /// message names nothing this way.
    var object: (kind: String, name: String)? {
        let prefix = "permission denied for "
        guard message.hasPrefix(prefix) else { return nil }
        let words = message.dropFirst(prefix.count).split(separator: " ", maxSplits: 1)
        guard words.count == 2 else { return nil }
        return (String(words[0]), String(words[1].filter { $0 != "\"" }))
    }

    /// The statement's verb (SELECT, INSERT, UPDATE, DELETE, LOCK, CREATE...).
    var verb: String {
        let trimmed = (sql ?? "").drop { $0 == " " || $0 == "\n" || $0 == "(" }
        return String(trimmed.prefix { $0.isLetter }).uppercased()
    }

    var error: StoreError {
        let what: String
        if let object {
            what =
                "PostgreSQL refused the role \(role) \(verb.isEmpty ? "access" : verb) on \(object.kind) \(object.name)"
        } else {
            what = "PostgreSQL refused the role \(role) a privilege"
        }
        return .permissionDenied("\(what) (42501: \(message))", remedy: remedy)
    }

    /// The privilege to give, as docs/deploy.md (section 1) gives it to `serve`'s role, or the
    /// owner's role for what only the owner does.
    var remedy: String {
        switch (object?.kind, verb) {
        case ("schema"?, _):
            return
                "as the database's superuser: GRANT USAGE ON SCHEMA \(object!.name) TO \(role); (docs/deploy.md, section 1)"
        case ("table"?, "SELECT"):
            return
                "as the database's superuser: GRANT SELECT ON ALL TABLES IN SCHEMA public TO \(role); (docs/deploy.md, section 1)"
        case ("table"?, "INSERT") where object!.name == "audit_entry":
            return "as the database's superuser: GRANT INSERT ON audit_entry TO \(role); (docs/deploy.md, section 1)"
        default:
            return "only the role that owns the vault's database may change it (docs/deploy.md, section 1: "
                + "CREATE DATABASE rx OWNER rx_owner): run the owner's commands as that role, not as \(role)"
        }
    }
}
