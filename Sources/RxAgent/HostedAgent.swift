import Foundation
import RxCrypto

/// The agent of a process that holds an unlocked vault for work of its own (`rxvault serve`):
/// `rxvault unlock`'s protocol and policy (`AgentService`, `AgentServer`) on a thread of its
/// own, with signals left to the process, so the owner's commands need no passphrase while the
/// process runs (one unlock for the server and the owner's commands).
public final class HostedAgent: @unchecked Sendable {
    private let server: AgentServer
    private let thread: Thread
    private let ended = Flag()

    /// The lock reason `stop` gives (the one `onLock` is not told of).
    public static let stopReason = "the server stopped"

    /// Starts answering at the vault's socket in `directory` (prepared here) with `rootKey`,
    /// the agent's own copy (wiped when it locks: `rxvault lock`, the vault file replaced, the
    /// limits), for the vault at `vaultPath` (absolute). Throws when it cannot (another agent
    /// holds this vault, an unsafe folder): the process then goes on without one.
    ///
    /// `onLock` is called on the agent's thread, with the reason, when it locks while the
    /// process goes on (anything but `stop`); its socket is gone by then.
    public static func start(
        directory: AgentDirectory, vaultPath: String, vaultIDHex: String, rootKey: SecretBytes,
        idleTimeout: Double, maxLifetime: Double,
        onLock: @escaping @Sendable (String) -> Void
    ) throws -> HostedAgent {
        try directory.prepare()
        let socket = try directory.socketPath(vaultIDHex: vaultIDHex)
        let service = try AgentService(
            vaultPath: vaultPath, rootKey: rootKey, idleTimeout: idleTimeout, maxLifetime: maxLifetime)
        let agent = HostedAgent(
            server: try AgentServer(socketPath: socket, service: service, watchingSignals: false), onLock: onLock)
        agent.thread.start()
        return agent
    }

    private init(server: AgentServer, onLock: @escaping @Sendable (String) -> Void) {
        self.server = server
        nonisolated(unsafe) let loop = server // run only by that thread; `stop` locks its service, which is thread-safe
        let ended = self.ended
        thread = Thread {
            // The loop removes the socket as it ends.
            let why = loop.run()
            if why != Self.stopReason { onLock(why) }
            ended.set()
        }
    }

    /// Locks (wipes the key) and waits until the loop has removed its socket (it removes only
    /// its own: after an early lock, a newer agent may hold the path). The loop sees the lock
    /// within its check interval; it is not waited for longer than that and a margin.
    public func stop() async {
        server.service.lock(reason: Self.stopReason)
        let deadline = ContinuousClock.now + .seconds(AgentServer.checkIntervalSeconds + 3)
        while !ended.isSet, ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(10))
        }
    }
}

/// Set once, from any thread.
private final class Flag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false

    var isSet: Bool { lock.withLock { value } }
    func set() { lock.withLock { value = true } }
}
