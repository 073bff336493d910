import CRxAgent
import RxCrypto

#if canImport(Glibc)
    import Glibc
#endif

/// The CLI's side of the agent protocol, for the agent at one socket path.
public struct AgentClient: Sendable {
    public let socketPath: String
    /// How long to wait for an agent's answer (it serves one connection at a time, each a
    /// few milliseconds).
    public static let timeoutSeconds = 10

    public init(socketPath: String) { self.socketPath = socketPath }

    /// What is at the socket path.
    public enum Probe: Sendable {
        /// No agent: no socket, a stale one (now removed), or an agent that has just locked.
        case none
        /// An agent that answered.
        case live(AgentStatus)
        /// Something there that cannot be used: why.
        case unreachable(String)
    }

    /// Asks the agent at the socket what it holds; removes a stale socket.
    public func probe() -> Probe {
        do {
            guard let status = try status() else { return .none }
            return .live(status)
        } catch {
            if case .refused(let code, _, _) = error, code == AgentReply.Code.locked.rawValue { return .none }
            // An agent that was exiting as we connected closes without answering, and its socket
            // goes with it.
            usleep(50_000)
            if AgentServer.socketNumbers(socketPath) == nil { return .none }
            return .unreachable(error.description)
        }
    }

    /// What the agent holds, or nil when no agent listens there (a stale socket is removed).
    public func status() throws(AgentError) -> AgentStatus? {
        guard let fd = try connect() else { return nil }
        defer { close(fd) }
        return try exchange(AgentRequest(.status), on: fd).status
    }

    /// The vault's root key for `file`, in locked memory; nil when no agent listens there.
    /// A refusal throws `.refused` (its `locked` says whether the agent locked itself).
    public func rootKey(for file: VaultFileIdentity) throws(AgentError) -> SecretBytes? {
        guard let fd = try connect() else { return nil }
        defer { close(fd) }
        _ = try exchange(AgentRequest(.rootKey, file: file), on: fd)
        return try AgentFrame.receiveKey(from: fd)
    }

    /// Tells the agent to wipe its key and exit; returns what it held (nil: no agent there).
    public func lock() throws(AgentError) -> AgentStatus? {
        guard let fd = try connect() else { return nil }
        defer { close(fd) }
        return try exchange(AgentRequest(.lock), on: fd).status
    }

    private func exchange(_ request: AgentRequest, on fd: Int32) throws(AgentError) -> AgentReply {
        try AgentFrame.send(request, to: fd)
        let reply = try AgentFrame.receive(AgentReply.self, from: fd)
        guard reply.ok else {
            throw .refused(
                code: reply.code ?? "refused", message: reply.message ?? "the agent refused",
                locked: reply.locked ?? false)
        }
        return reply
    }

    /// A connection to the agent, or nil when nothing listens at the path. A socket with no
    /// listener (its agent crashed or was killed) is removed, if it is still the same file.
    func connect() throws(AgentError) -> Int32? {
        let before = AgentServer.socketNumbers(socketPath)
        let fd = rx_agent_connect(socketPath)
        if fd >= 0 {
            AgentFrame.setTimeouts(fd, seconds: Self.timeoutSeconds)
            return fd
        }
        switch -fd {
        case ENOENT:
            return nil
        case ECONNREFUSED:
            if let before, AgentServer.socketNumbers(socketPath).map({ $0 == before }) == true { unlink(socketPath) }
            return nil
        default:
            throw .errno("cannot reach the agent at \(socketPath)", code: -fd)
        }
    }
}
