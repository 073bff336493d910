import CRxAgent
import Foundation
import RxCrypto

#if canImport(Glibc)
    import Glibc
#endif

/// The agent as a process: `rxvault unlock` starts it (`start`), it runs `main`.
///
/// The root key goes from `unlock` to the agent through a pipe on the agent's stdin, never
/// argv, the environment or a file. The agent answers on its stdout with one JSON line (ready,
/// or why not), then closes it; it runs in a session of its own, its stderr on /dev/null, its
/// working directory "/", so it holds no terminal, no folder and no pipe of whoever ran `unlock`.
public enum AgentProcess {
    /// The one line the agent writes to `unlock` when it is listening, or why it is not.
    public struct StartReport: Codable, Sendable {
        public var ready: AgentStatus?
        public var error: String?
        /// Set when another agent already held the vault (a race of two `unlock`s).
        public var running: AgentStatus?
    }

    /// What the agent needs to be told (everything else it finds itself).
    public struct Settings: Sendable {
        public var vaultPath: String
        public var socketPath: String
        public var idleTimeout: Double
        public var maxLifetime: Double

        public init(vaultPath: String, socketPath: String, idleTimeout: Double, maxLifetime: Double) {
            self.vaultPath = vaultPath
            self.socketPath = socketPath
            self.idleTimeout = idleTimeout
            self.maxLifetime = maxLifetime
        }

        /// The arguments after the hidden subcommand's name.
        public var arguments: [String] {
            [
                "--vault-file", vaultPath, "--socket", socketPath, "--idle-seconds", String(idleTimeout),
                "--lifetime-seconds", String(maxLifetime)
            ]
        }
    }

    // MARK: - Parent side (`rxvault unlock`)

    /// Starts `executable arguments` (the hidden `_agent` command with `settings.arguments`),
    /// hands it `rootKey` and waits for it to listen. Returns what it holds; throws
    /// `.alreadyRunning` when another agent got there first.
    public static func start(
        executable: String, arguments: [String], rootKey: SecretBytes,
        timeoutSeconds: Int = 30
    ) throws(AgentError) -> AgentStatus {
        var keyPipe: [Int32] = [-1, -1]
        var readyPipe: [Int32] = [-1, -1]
        guard pipe(&keyPipe) == 0 else { throw .errno("cannot make a pipe") }
        guard pipe(&readyPipe) == 0 else {
            close(keyPipe[0])
            close(keyPipe[1])
            throw .errno("cannot make a pipe")
        }
        // Close-on-exec, so no other child of this process inherits them (the agent gets its
        // ends as 0 and 1 from posix_spawn).
        for fd in keyPipe + readyPipe { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        let devNull = open("/dev/null", O_RDWR | O_CLOEXEC)
        defer {
            close(devNull)
            close(readyPipe[0])
        }
        var pid: pid_t = 0
        // Only what the agent needs: no passphrase file, no vault path variables; for a vault
        // in PostgreSQL, what libpq's users set to reach the server and log in (the password
        // file is found from HOME).
        let passed = [
            "HOME", "PGHOST", "PGPORT", "PGUSER", "PGDATABASE", "PGSSLMODE", "PGSSLROOTCERT", "PGPASSFILE", "PGPASSWORD"
        ]
        let inherited = ProcessInfo.processInfo.environment
        let environment =
            ["PATH=/usr/bin:/bin", "LANG=C.UTF-8"]
            + passed.compactMap { name in
                inherited[name].map { "\(name)=\($0)" }
            }
        let argv = [executable] + arguments
        let status = withCStrings(argv) { cArgv in
            withCStrings(environment) { cEnv in
                rx_agent_spawn(executable, cArgv, cEnv, keyPipe[0], readyPipe[1], devNull, &pid)
            }
        }
        close(keyPipe[0])
        close(readyPipe[1])
        guard status == 0 else {
            close(keyPipe[1])
            throw .errno("cannot start the agent (\(executable))", code: -status)
        }
        // A failure to hand the key shows as the agent's report (it read too few bytes).
        try? AgentFrame.send(key: rootKey, to: keyPipe[1])
        close(keyPipe[1])
        guard let line = readLine(readyPipe[0], timeoutSeconds: timeoutSeconds) else {
            kill(pid, SIGTERM)
            throw .system("the agent did not start within \(timeoutSeconds) s")
        }
        guard let report = try? JSONDecoder().decode(StartReport.self, from: Data(line)) else {
            var exit: Int32 = 0
            let reaped = waitpid(pid, &exit, WNOHANG) == pid
            throw .system(
                "the agent did not start" + (reaped ? " (exit status \(exit >> 8 & 0xFF), signal \(exit & 0x7F))" : ""))
        }
        if let running = report.running { throw .alreadyRunning(running) }
        guard let ready = report.ready else { throw .system(report.error ?? "the agent did not start") }
        return ready
    }

    /// The bytes of one line from `fd` (without the newline), or nil at EOF or timeout.
    private static func readLine(_ fd: Int32, timeoutSeconds: Int) -> [UInt8]? {
        var line: [UInt8] = []
        let deadline = Date().addingTimeInterval(Double(timeoutSeconds))
        var byte: UInt8 = 0
        while line.count < 64 << 10 {
            var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let left = deadline.timeIntervalSinceNow
            guard left > 0 else { return nil }
            let ready = poll(&entry, 1, Int32(left * 1000) + 1)
            if ready < 0 && errno == EINTR { continue }
            guard ready > 0 else { return nil }
            let n = read(fd, &byte, 1)
            if n < 0 && errno == EINTR { continue }
            guard n == 1 else { return line.isEmpty ? nil : line }
            if byte == 0x0A { return line }
            line.append(byte)
        }
        return line
    }

    private static func withCStrings<R>(_ strings: [String], _ body: ([UnsafeMutablePointer<CChar>?]) -> R) -> R {
        let pointers = strings.map { strdup($0) } + [nil]
        defer { for p in pointers { free(p) } }
        return body(pointers)
    }

    // MARK: - Agent side (`rxvault _agent`)

    /// Runs the agent: reads the key from stdin, proves it opens the vault, listens, reports on
    /// stdout, serves until it locks. Returns the exit status. The process is already
    /// non-dumpable, as every rxvault process is from the start of `main` (the CLI's
    /// `ProcessProtection`): no core dump, no ptrace or /proc/PID/mem by the user's other processes.
    public static func main(_ settings: Settings) -> Int32 {
        let key: SecretBytes
        do { key = try AgentFrame.receiveKey(from: 0) } catch {
            report(StartReport(error: "the agent did not receive the key (\(error))"))
            return 1
        }
        redirectToNull(0)
        let service: AgentService
        do {
            service = try AgentService(
                vaultPath: settings.vaultPath, rootKey: key, idleTimeout: settings.idleTimeout,
                maxLifetime: settings.maxLifetime)
        } catch {
            key.wipe()
            report(StartReport(error: "the agent cannot hold this vault: \(error)"))
            return 1
        }
        let server: AgentServer
        do { server = try AgentServer(socketPath: settings.socketPath, service: service) } catch {
            service.lock(reason: "it could not listen")
            if case .alreadyRunning(let status) = error {
                report(StartReport(running: status))
            } else {
                report(StartReport(error: error.description))
            }
            return 1
        }
        report(StartReport(ready: service.status()))
        redirectToNull(1)
        _ = server.run()
        return 0
    }

    private static func report(_ report: StartReport) {
        guard var data = try? JSONEncoder().encode(report) else { return }
        data.append(0x0A)
        data.withUnsafeBytes { try? AgentFrame.writeAll($0, to: 1) }
    }

    private static func redirectToNull(_ fd: Int32) {
        let null = open("/dev/null", O_RDWR)
        if null >= 0 {
            dup2(null, fd)
            close(null)
        }
    }
}
