/// What can go wrong in RxStore. Carries SQLite's code and message and the statement's SQL,
/// never bound values (which are ciphertext or ids, but the rule keeps logs safe by construction).
public enum StoreError: Error, Sendable, CustomStringConvertible {
    /// The file is not an SQLite database, or not one made by rxvault.
    case notAVault(path: String, reason: String)
    /// There is no file at the path.
    case missing(path: String)
    /// Another process held the vault longer than the busy timeout.
    case busy
    /// The disk or the file system refused a write (full, read-only, quota).
    case cannotWrite(String)
    /// The file's schema is newer than this rxvault understands.
    case unsupportedVersion(found: Int, supported: Int)
    /// Any other SQLite failure.
    case sqlite(code: Int32, message: String, sql: String?)
    /// A row that breaks the schema's rules (wrong length, missing header).
    case corrupt(String)

    public var description: String {
        switch self {
        case let .notAVault(path, reason): return "\(path) is not an rxvault vault (\(reason))"
        case let .missing(path): return "no vault at \(path)"
        case .busy: return "the vault is busy: another rxvault process is using it"
        case let .cannotWrite(reason): return "cannot write to the vault: \(reason)"
        case let .unsupportedVersion(found, supported):
            return "the vault has format version \(found); this rxvault reads up to version \(supported)"
        case let .sqlite(code, message, sql):
            return "SQLite error \(code): \(message)" + (sql.map { " (in: \($0))" } ?? "")
        case let .corrupt(what): return "the vault file is damaged: \(what)"
        }
    }
}
