/// What can go wrong in RxStore, whatever the engine. Carries the engine's code and message and
/// the statement's SQL, never bound values (which are ciphertext or ids, but the rule keeps logs
/// safe by construction).
public enum StoreError: Error, Sendable, CustomStringConvertible {
    /// What is at the location is no vault: not a database of the engine, or not one made by rxvault.
    case notAVault(path: String, reason: String)
    /// There is no vault at the location.
    case missing(path: String)
    /// Another writer held the vault longer than the busy timeout.
    case busy
    /// The disk or the file system refused a write (full, read-only, quota).
    case cannotWrite(String)
    /// The stored schema is newer than this rxvault understands.
    case unsupportedVersion(found: Int, supported: Int)
    /// Any other failure the engine reports: its name, its code (SQLite's extended result code; a
    /// server's SQLSTATE), its message.
    case engine(name: String, code: String, message: String, sql: String?)
    /// A row that breaks the schema's rules (wrong length, missing header).
    case corrupt(String)
    /// The vault's location cannot be read as one (a database URL with a password in it, an
    /// unknown parameter, a bad port).
    case badLocation(String)
    /// There is a vault at the location already, or for a file anything at all (`init`, `copy`
    /// and a snapshot never replace what is there). Each engine tells it by its own codes, never
    /// by a message's text: a file by `access`/`link`'s EEXIST, PostgreSQL by the marker table
    /// or, for two `init`s racing, SQLSTATE 42P07 (duplicate table) or 23505 (its catalog row).
    case alreadyExists(path: String)
    /// The database server holding the vault cannot be reached, or refused the login.
    case unreachable(String)
    /// The database refused the role it was logged in as a privilege the statement needs
    /// (PostgreSQL's 42501): what was refused, and the GRANT (or the role) that gives it.
    case permissionDenied(String, remedy: String)

    public var description: String {
        switch self {
        case .notAVault(let path, let reason): return "\(path) is not an rxvault vault (\(reason))"
        case .missing(let path): return "no vault at \(path)"
        case .busy: return "the vault is busy: another rxvault process is using it"
        case .cannotWrite(let reason): return "cannot write to the vault: \(reason)"
        case .unsupportedVersion(let found, let supported):
            guard found > supported else {
                return
                    "format version \(found) cannot be made or upgraded here (upgrade the vault file first, 'rxvault upgrade')"
            }
            return
                "the vault was made by a newer rxvault: it has format version \(found), and this rxvault reads up to version \(supported); install a newer rxvault"
        case .engine(let name, let code, let message, let sql):
            return "\(name) error \(code): \(message)" + (sql.map { " (in: \($0))" } ?? "")
        case .corrupt(let what): return "the vault file is damaged: \(what)"
        case .badLocation(let why): return why
        case .alreadyExists(let path): return "\(path) already exists; rxvault never replaces it"
        case .unreachable(let why): return why
        case .permissionDenied(let what, _): return what
        }
    }
}
