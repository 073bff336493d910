import CRxAgent
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The agent's socket and accept loop: one connection at a time (each is one short request),
/// until the service locks (idle timeout, maximum lifetime, `lock`, the vault file changed),
/// SIGTERM, SIGINT or SIGHUP arrives, or its socket is removed. On the way out the key is wiped
/// and the socket removed (only if it is still this agent's).
public final class AgentServer {
    public let socketPath: String
    public let service: AgentService
    private let listener: Int32
    private let signals: Int32
    private let watchingSignals: Bool
    /// The socket file's device and inode, to tell it from a newer agent's at the same path.
    private let socketFile: (UInt64, UInt64)
    /// How often the loop wakes to look at the vault file and the socket between connections.
    public static let checkIntervalSeconds = 2.0

    /// Listens at `socketPath` (in a folder `AgentDirectory.prepare` checked). The socket is
    /// bound under a temporary name, then linked into place, which fails if the name exists:
    /// two `unlock`s at once cannot both publish, and the published socket is always listening.
    /// A live agent there throws `.alreadyRunning`; a stale socket (no one listening) is removed.
    ///
    /// `watchingSignals` false leaves SIGTERM, SIGINT and SIGHUP to the host process (`rxvault
    /// serve`, which runs this loop on a thread and ends it with `service.lock`).
    public init(socketPath: String, service: AgentService, watchingSignals: Bool = true) throws(AgentError) {
        self.socketPath = socketPath
        self.service = service
        signal(SIGPIPE, SIG_IGN)
        let signalFD = watchingSignals ? rx_agent_signal_fd() : open("/dev/null", O_RDONLY | O_CLOEXEC)
        guard signalFD >= 0 else { throw .errno("cannot watch for signals", code: -signalFD) }
        let temporary = "\(socketPath).\(getpid()).tmp"
        unlink(temporary)
        let fd = rx_agent_listen(temporary, 64)
        guard fd >= 0 else {
            close(signalFD)
            throw .errno("cannot listen at \(temporary)", code: -fd)
        }
        defer { unlink(temporary) }
        do {
            try Self.publish(temporary, at: socketPath)
        } catch {
            close(fd)
            close(signalFD)
            throw error
        }
        guard let numbers = Self.socketNumbers(socketPath) else {
            close(fd)
            close(signalFD)
            throw .system("the agent's socket \(socketPath) disappeared as it was made")
        }
        listener = fd
        signals = signalFD
        self.watchingSignals = watchingSignals
        socketFile = numbers
    }

    deinit {
        service.lock(reason: "the agent stopped")
        stopListening()
        close(signals)
    }

    private var listening = true

    /// Removes the socket (only if it is still this agent's: a newer agent's at the same path
    /// stays), then closes the listener, which resets connections still waiting to be accepted.
    private func stopListening() {
        guard listening else { return }
        listening = false
        if Self.socketNumbers(socketPath).map({ $0 == socketFile }) == true { unlink(socketPath) }
        close(listener)
    }

    private static func publish(_ temporary: String, at socketPath: String) throws(AgentError) {
        for _ in 0..<40 {
            if link(temporary, socketPath) == 0 { return }
            guard errno == EEXIST else { throw .errno("cannot publish the agent's socket at \(socketPath)") }
            switch AgentClient(socketPath: socketPath).probe() {
            case .live(let status): throw .alreadyRunning(status)
            // Removed (stale), or an agent that has just locked and is removing it: try again.
            case .none: usleep(25_000)
            case .unreachable(let why): throw .system("cannot use \(socketPath): \(why)")
            }
        }
        throw .system("cannot publish the agent's socket at \(socketPath): it keeps reappearing")
    }

    static func socketNumbers(_ path: String) -> (UInt64, UInt64)? {
        var info = stat()
        guard lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFSOCK else { return nil }
        return (UInt64(info.st_dev), UInt64(info.st_ino))
    }

    /// Serves until the agent locks; returns why it stopped. The socket goes at once, whatever
    /// keeps this object alive after (`rxvault serve` keeps its agent until it stops): a command
    /// that comes after the lock (the vault file replaced, say) finds no agent and asks for the
    /// passphrase, instead of waiting `AgentClient.timeoutSeconds` on a socket nobody accepts on.
    public func run() -> String {
        defer { stopListening() }
        while true {
            let now = Date().timeIntervalSince1970
            service.lockIfDue(now: now)
            if let reason = service.lockReason { return reason }
            if Self.socketNumbers(socketPath).map({ $0 == socketFile }) != true {
                service.lock(reason: "its socket \(socketPath) was removed or replaced")
                continue
            }
            if let why = service.fileChange(headerToo: false) {
                service.lock(reason: why)
                continue
            }
            let wait = max(0, min(service.deadline - now, Self.checkIntervalSeconds))
            var fds = [
                pollfd(fd: listener, events: Int16(POLLIN), revents: 0),
                pollfd(fd: watchingSignals ? signals : -1, events: Int16(POLLIN), revents: 0)
            ]
            let ready = poll(&fds, 2, Int32((wait * 1000).rounded(.up)))
            if ready < 0 && errno != EINTR {
                service.lock(reason: "poll failed: \(String(cString: strerror(errno)))")
                continue
            }
            if fds[1].revents != 0 {
                let number = rx_agent_read_signal(signals)
                if number != 0 { service.lock(reason: "it received signal \(number)") }
                continue
            }
            if fds[0].revents & Int16(POLLIN) != 0 {
                let client = accept(listener, nil, nil)
                guard client >= 0 else { continue }
                _ = fcntl(client, F_SETFD, FD_CLOEXEC)
                AgentConnection.serve(client, service: service)
                close(client)
            }
        }
    }
}
