/// Why an age file could not be opened. The cases follow the age test kit's categories, so a
/// conformance test can tell a malformed header from a wrong key from a damaged payload.
public enum AgeError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The header is malformed, uses a feature we refuse, or a stanza is invalid.
    case header(String)
    /// No identity or passphrase given opens any recipient stanza.
    case noMatch
    /// The header's MAC does not verify (the header was altered).
    case hmac
    /// The payload is damaged, truncated or has trailing data.
    case payload(String)
    /// The ASCII armor is malformed.
    case armor(String)

    public var description: String {
        switch self {
        case .header(let why): return "the age header is invalid: \(why)"
        case .noMatch: return "no identity or passphrase given matches any recipient of the age file"
        case .hmac: return "the age header's MAC does not verify: the file was altered"
        case .payload(let why): return "the age payload is damaged: \(why)"
        case .armor(let why): return "the age armor is invalid: \(why)"
        }
    }
}
