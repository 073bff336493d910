import CRxAgent

#if canImport(Glibc)
    import Glibc
#endif

/// The process at the other end of an agent connection, as the kernel recorded it at connect(2)
/// (SO_PEERCRED): it cannot be claimed in a message. Only `of(socket:)` makes one, so a server
/// cannot answer without having asked the kernel.
public struct AgentPeer: Sendable {
    public let uid: uid_t
    public let pid: pid_t

    public static func of(socket fd: Int32) throws(AgentError) -> AgentPeer {
        var uid: uid_t = 0
        var pid: pid_t = 0
        let status = rx_agent_peer(fd, &uid, &pid)
        guard status == 0 else { throw .errno("cannot learn who connected", code: -status) }
        return AgentPeer(uid: uid, pid: pid)
    }

    /// The same user as this process (root included only for root's own agent).
    public var isSameUser: Bool { uid == geteuid() }
}
