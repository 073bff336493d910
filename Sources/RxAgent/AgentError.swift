#if canImport(Glibc)
    import Glibc
#endif

/// What can go wrong between the CLI and an agent. Messages name paths and system errors,
/// never key material.
public enum AgentError: Error, Sendable, CustomStringConvertible, Equatable {
    /// The folder for agent sockets is not the user's own private folder.
    case unsafeDirectory(String)
    /// A socket path longer than a Unix socket address holds.
    case socketPathTooLong(String)
    /// A system call failed: what was being done, and why.
    case system(String)
    /// The other side sent something that is not this protocol.
    case protocolError(String)
    /// The agent answered no: `code` is machine-readable, `message` says why; `locked` when the
    /// agent locked itself (wiped its key and exited) because of what it found.
    case refused(code: String, message: String, locked: Bool)
    /// An agent already holds this vault (a second one does not start).
    case alreadyRunning(AgentStatus)

    public var description: String {
        switch self {
        case .unsafeDirectory(let why), .socketPathTooLong(let why), .system(let why): return why
        case .protocolError(let why): return "the agent's answer is not understood (\(why))"
        case .refused(_, let message, _): return message
        case .alreadyRunning(let status): return "an agent already holds \(status.path) (pid \(status.pid))"
        }
    }

    /// `what` failed with the current errno (or `code`, a positive errno value).
    static func errno(_ what: String, code: Int32 = Glibc.errno) -> AgentError {
        .system("\(what): \(String(cString: strerror(code)))")
    }
}
