import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// One accepted connection to an agent: who is there (SO_PEERCRED), one request, one reply,
/// and the key when the service hands it. Shared by the agent's accept loop and anything else
/// that answers the protocol (`rxvault serve`).
public enum AgentConnection {
    /// How long a peer has to send its request and read the reply.
    public static let timeoutSeconds = 5

    /// Serves `fd` (a connected Unix socket) for `service`; does not close it. Returns what was
    /// asked, for the caller's loop (nil when the peer sent nothing usable).
    @discardableResult
    public static func serve(_ fd: Int32, service: AgentService) -> AgentRequest.Operation? {
        AgentFrame.setTimeouts(fd, seconds: timeoutSeconds)
        let peer: AgentPeer
        do { peer = try AgentPeer.of(socket: fd) } catch { return nil }
        // Another user learns nothing, not even what the agent holds. Its request is read (and
        // not looked at) so that closing the connection does not reset it before the refusal arrives.
        guard peer.isSameUser else {
            _ = try? AgentFrame.receive(AgentRequest.self, from: fd)
            try? AgentFrame.send(service.answer(AgentRequest(.status), from: peer).reply, to: fd)
            return nil
        }
        let request: AgentRequest
        do { request = try AgentFrame.receive(AgentRequest.self, from: fd) } catch {
            try? AgentFrame.send(AgentReply.refusal(.badRequest, "not a request of the rxvault agent protocol"), to: fd)
            return nil
        }
        let (reply, key) = service.answer(request, from: peer)
        do {
            try AgentFrame.send(reply, to: fd)
            if let key { try AgentFrame.send(key: key, to: fd) }
        } catch {}
        return request.op
    }
}
