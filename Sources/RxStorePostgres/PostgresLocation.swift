import RxStore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Where a vault in PostgreSQL is, read as libpq reads it: a `postgres://` or `postgresql://`
/// URL, with what it leaves out taken from `PGHOST`, `PGPORT`, `PGUSER`, `PGDATABASE`,
/// `PGSSLMODE` and `PGSSLROOTCERT`, then libpq's defaults (the local socket folder, port 5432,
/// the login name). A password is never part of it: a URL that carries one is refused, so that
/// no password is ever on a command line or in a message; it comes from `PGPASSWORD`,
/// `PGPASSFILE` or `~/.pgpass` (`PasswordFile`).
public struct PostgresLocation: Sendable, Equatable {
    /// A host name or address, or (starting with "/") the folder of the server's Unix socket.
    public var host: String
    public var port: Int
    public var user: String
    public var database: String
    public var sslMode: SSLMode
    /// The certificates a server's is checked against (`verify-ca`, `verify-full`).
    public var sslRootCert: String?

    /// libpq's `sslmode`, the ones rxvault offers. `prefer` (libpq's default) tries TLS and goes
    /// on without it; `require` insists on TLS without checking the certificate (as libpq does
    /// when no root certificate is given); `verify-ca` checks the chain, `verify-full` the chain
    /// and the host name.
    public enum SSLMode: String, Sendable, CaseIterable {
        case disable, prefer, require
        case verifyCA = "verify-ca"
        case verifyFull = "verify-full"
    }

    /// Whether `location` names a database rather than a file: a file is never looked for at
    /// such a path (a folder named `postgres:` is not what anyone meant).
    public static func isDatabaseURL(_ location: String) -> Bool {
        let lower = location.lowercased()
        return lower.hasPrefix("postgres://") || lower.hasPrefix("postgresql://")
    }

    /// How the vault is named in messages, in backups' notes and as the rollback anchor's key:
    /// the URL with every part filled in, and never a password.
    public var display: String {
        let shownHost = host.hasPrefix("/") ? "" : (host.contains(":") ? "[\(host)]" : host)
        var url = "postgres://\(Self.escape(user))@\(shownHost):\(port)/\(Self.escape(database))"
        if host.hasPrefix("/") { url += "?host=\(Self.escape(host))" }
        return url
    }

    /// Reads `url` with `environment` (the process's, in the CLI) for what it leaves out.
    public init(url: String, environment: [String: String]) throws(StoreError) {
        // Never a part of the URL in a message: a password typed into it unescaped could be cut
        // anywhere by the parsing below.
        guard Self.isDatabaseURL(url), let scheme = url.range(of: "://") else {
            throw .badLocation("not a postgres:// or postgresql:// URL")
        }
        let rest = String(url[scheme.upperBound...])
        // An "@" belongs only between the user and the host. Anywhere else it is most likely
        // part of a password with a "/", "?" or "#" in it, which would cut the URL there.
        let authorityEnd = rest.firstIndex { "/?#".contains($0) } ?? rest.endIndex
        if rest[authorityEnd...].contains("@") || rest[..<authorityEnd].contains("#") {
            throw .badLocation(
                "the URL has an '@' or '#' outside its user@host part (a password?): write them as %40 and %23, and give the password in PGPASSWORD, PGPASSFILE or ~/.pgpass"
            )
        }
        var authorityAndPath = rest
        var query = ""
        if let mark = rest.firstIndex(of: "?") {
            authorityAndPath = String(rest[..<mark])
            query = String(rest[rest.index(after: mark)...])
        }
        var authority = authorityAndPath
        var path = ""
        if let slash = authorityAndPath.firstIndex(of: "/") {
            authority = String(authorityAndPath[..<slash])
            path = String(authorityAndPath[authorityAndPath.index(after: slash)...])
        }
        var user: String?
        if let at = authority.lastIndex(of: "@") {
            let userInfo = String(authority[..<at])
            authority = String(authority[authority.index(after: at)...])
            if userInfo.contains(":") {
                throw .badLocation(
                    "the URL carries a password: give it in PGPASSWORD, PGPASSFILE or ~/.pgpass, never on the command line"
                )
            }
            user = try Self.unescape(userInfo)
        }
        var host: String?
        var port: String?
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { throw .badLocation("unclosed [ in the URL's host") }
            host = String(authority[authority.index(after: authority.startIndex)..<close])
            let after = authority[authority.index(after: close)...]
            if after.hasPrefix(":") { port = String(after.dropFirst()) }
        } else if let colon = authority.lastIndex(of: ":") {
            host = try Self.unescape(String(authority[..<colon]))
            port = String(authority[authority.index(after: colon)...])
        } else if !authority.isEmpty {
            host = try Self.unescape(authority)
        }
        if host?.isEmpty == true { host = nil }
        if port?.isEmpty == true { port = nil }
        var database = path.isEmpty ? nil : try Self.unescape(path)
        var sslMode: String?
        var sslRootCert: String?
        for pair in query.split(separator: "&") where !pair.isEmpty {
            let parts = pair.split(separator: "=", maxSplits: 1).map(String.init)
            let key = parts[0]
            let value = try Self.unescape(parts.count > 1 ? parts[1] : "")
            // As libpq: an empty value is no value (the default stands).
            if value.isEmpty && key != "password" { continue }
            switch key {
            case "host": host = value
            case "port": port = value
            case "user": user = value
            case "dbname": database = value
            case "sslmode": sslMode = value
            case "sslrootcert": sslRootCert = value
            case "password":
                throw .badLocation(
                    "the URL carries a password: give it in PGPASSWORD, PGPASSFILE or ~/.pgpass, never on the command line"
                )
            case "application_name", "connect_timeout": continue
            default:
                throw .badLocation(
                    "the URL's parameter \"\(key)\" is not one rxvault reads (host, port, user, dbname, sslmode, sslrootcert)"
                )
            }
        }
        self.host = host ?? environment["PGHOST"].flatMap { $0.isEmpty ? nil : $0 } ?? "/var/run/postgresql"
        let portText = port ?? environment["PGPORT"].flatMap { $0.isEmpty ? nil : $0 } ?? "5432"
        guard let portNumber = Int(portText), (1...65535).contains(portNumber) else {
            throw .badLocation("the URL's port (or PGPORT) is not a number from 1 to 65535")
        }
        self.port = portNumber
        let resolvedUser = user ?? environment["PGUSER"].flatMap { $0.isEmpty ? nil : $0 } ?? Self.loginName()
        guard let resolvedUser, !resolvedUser.isEmpty else {
            throw .badLocation("no user name: put one in the URL (postgres://USER@HOST/DB) or in PGUSER")
        }
        self.user = resolvedUser
        self.database = database ?? environment["PGDATABASE"].flatMap { $0.isEmpty ? nil : $0 } ?? resolvedUser
        let modeText = sslMode ?? environment["PGSSLMODE"].flatMap { $0.isEmpty ? nil : $0 } ?? "prefer"
        if modeText == "allow" {
            self.sslMode = .prefer
        } else {
            guard let mode = SSLMode(rawValue: modeText) else {
                throw .badLocation(
                    "the URL's sslmode (or PGSSLMODE) is not one of disable, allow, prefer, require, verify-ca, verify-full"
                )
            }
            self.sslMode = mode
        }
        self.sslRootCert = sslRootCert ?? environment["PGSSLROOTCERT"].flatMap { $0.isEmpty ? nil : $0 }
        if self.sslRootCert == nil, self.sslMode == .verifyCA || self.sslMode == .verifyFull,
            let home = environment["HOME"]
        {
            self.sslRootCert = home + "/.postgresql/root.crt"
        }
    }

    /// The name of the user running this process (libpq's default user).
    private static func loginName() -> String? {
        guard let entry = getpwuid(geteuid()), let name = entry.pointee.pw_name else { return nil }
        return String(cString: name)
    }

    /// Percent-decoding; a malformed escape is refused rather than kept as typed.
    static func unescape(_ text: String) throws(StoreError) -> String {
        var bytes: [UInt8] = []
        var utf8 = Array(text.utf8)[...]
        while let byte = utf8.popFirst() {
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                continue
            }
            guard utf8.count >= 2, let value = UInt8(String(decoding: utf8.prefix(2), as: UTF8.self), radix: 16) else {
                throw .badLocation("a malformed %-escape in the URL")
            }
            bytes.append(value)
            utf8 = utf8.dropFirst(2)
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Percent-encodes what a URL's part cannot hold as it is.
    static func escape(_ text: String) -> String {
        var out = ""
        for byte in text.utf8 {
            let c = Character(Unicode.Scalar(byte))
            if byte < 0x80, c.isLetter || c.isNumber || "-._~".contains(c) {
                out.append(c)
            } else {
                out += "%" + (byte < 16 ? "0" : "") + String(byte, radix: 16, uppercase: true)
            }
        }
        return out
    }
}
