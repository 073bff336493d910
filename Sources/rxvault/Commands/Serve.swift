import ArgumentParser
import Dispatch
import Foundation
import Logging
import RxAgent
import RxCrypto
import RxServe
import RxVault

extension RxVaultCommand {
    struct Serve: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Serve a read-only FHIR R4 API to client apps (what each was granted, nothing else).",
            discussion: flowing("""
            Asks for the passphrase once and serves until SIGTERM or Ctrl-C (requests in flight
            finish; the reads served are written to the audit log). Clients prove they hold their
            age identity, get a 15-minute token, and read what the owner granted them as it is
            now: a revoke, a removal or an expiry counts at the next request. docs/api.md has the
            protocol, curl examples and a reference client (examples/rxvault_client.py).

            By default it listens on a Unix socket only the owner can reach
            ($XDG_RUNTIME_DIR/rxvault/serve.sock). --listen 127.0.0.1:8080 serves TCP on loopback;
            any other address needs --tls-cert and --tls-key.

            Examples:
              rxvault serve
              rxvault serve --socket /run/user/1000/rxvault.sock
              rxvault serve --listen 127.0.0.1:8443 --tls-cert cert.pem --tls-key key.pem
            """))

        @Option(help: ArgumentHelp("Listen on this Unix socket (mode 0600).", valueName: "path")) var socket: String?
        @Option(help: ArgumentHelp("Listen on TCP instead, e.g. 127.0.0.1:8080 or [::1]:8080.", valueName: "host:port")) var listen: String?
        @Option(help: ArgumentHelp("PEM certificate chain for TLS.", valueName: "file")) var tlsCert: String?
        @Option(help: ArgumentHelp("PEM private key for TLS.", valueName: "file")) var tlsKey: String?
        @Option(help: ArgumentHelp("How much to log on stderr: info (a line per request), notice, error.", valueName: "level"))
        var logLevel: String = "info"
        @OptionGroup var options: VaultOptions

        func validate() throws {
            if socket != nil && listen != nil { throw ValidationError("give --socket or --listen, not both") }
            if (tlsCert == nil) != (tlsKey == nil) { throw ValidationError("--tls-cert and --tls-key go together") }
            if tlsCert != nil && listen == nil { throw ValidationError("TLS is for --listen (a Unix socket needs none)") }
            if let listen, Self.parseListen(listen) == nil {
                throw ValidationError("--listen '\(listen)': give HOST:PORT with a port from 1 to 65535, e.g. 127.0.0.1:8080")
            }
            if !["info", "notice", "error", "debug"].contains(logLevel) { throw ValidationError("--log-level: info, notice, error or debug") }
        }

        static func parseListen(_ text: String) -> (String, Int)? {
            guard let colon = text.lastIndex(of: ":") else { return nil }
            var host = String(text[..<colon])
            if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
            guard !host.isEmpty, let port = Int(text[text.index(after: colon)...]), (1...65535).contains(port) else { return nil }
            return (host, port)
        }

        func settings() throws -> ServeSettings {
            var settings: ServeSettings
            if let listen, let (host, port) = Self.parseListen(listen) {
                settings = ServeSettings(address: .tcp(host: host, port: port))
            } else {
                settings = ServeSettings(address: .unixSocket(path: try socket ?? Self.defaultSocketPath()))
            }
            settings.tlsCertificate = tlsCert
            if let idle = try Environment.serveIdleTimeoutSeconds() { settings.idleTimeoutSeconds = idle }
            settings.busyTimeoutMilliseconds = try Environment.busyTimeoutMilliseconds()
            settings.tlsKey = tlsKey
            if settings.needsTLS && tlsCert == nil {
                throw CLIError(.usage, "serving on \(listen ?? "") without TLS would send tokens and prescriptions in the clear",
                               hint: "give --tls-cert and --tls-key, or listen on 127.0.0.1 / ::1")
            }
            return settings
        }

        /// `$XDG_RUNTIME_DIR/rxvault/serve.sock`, else `/tmp/rxvault-UID/serve.sock`; the folder is
        /// made 0700 and must be the user's own.
        static func defaultSocketPath() throws -> String {
            let base = ProcessInfo.processInfo.environment["XDG_RUNTIME_DIR"].flatMap { $0.isEmpty ? nil : $0 }
            let folder = base.map { $0 + "/rxvault" } ?? "/tmp/rxvault-\(getuid())"
            if mkdir(folder, 0o700) != 0 && errno != EEXIST {
                throw CLIError(.cannotWrite, "cannot create \(folder): \(String(cString: strerror(errno)))")
            }
            var info = stat()
            guard lstat(folder, &info) == 0, info.st_mode & S_IFMT == S_IFDIR, info.st_uid == getuid(), info.st_mode & 0o077 == 0 else {
                throw CLIError(.cannotWrite, "\(folder) is not a folder of yours with mode 0700; give --socket PATH")
            }
            return folder + "/serve.sock"
        }

        func run() throws {
            try CommandRunner.run {
                let settings = try settings()
                let level = Logger.Level(rawValue: logLevel) ?? .info
                LoggingSystem.bootstrap { label in
                    var handler = ServeLogHandler(label: label)
                    handler.logLevel = level
                    return handler
                }
                let (vault, agent) = try Self.openVaultAndAgent(options)
                defer { agent?.stop() }
                let vaultID = vault.header.vaultIDHex
                let outcome = ServeOutcome()
                let done = DispatchSemaphore(value: 0)
                nonisolated(unsafe) let opened = vault
                Task {
                    do {
                        try await RxServer.run(vault: opened, settings: settings, logger: Logger(label: "rxvault.serve")) { address in
                            Terminal.err("rxvault: serving vault \(vaultID.prefix(8)) at \(address) (Ctrl-C or SIGTERM to stop)")
                        }
                    } catch {
                        outcome.error = error
                    }
                    done.signal()
                }
                done.wait()
                if let error = outcome.error {
                    switch error as? RxServer.StartError {
                    case .socketPathInUse(let why): throw CLIError(.alreadyExists, why)
                    case .tls(let why): throw CLIError(.invalidInput, why)
                    case nil:
                        if "\(error)".contains("Address already in use") {
                            throw CLIError(.alreadyExists, "\(listen ?? "the address") is already in use by another program")
                        }
                        throw CLIError(.failure, "the server stopped: \(error)")
                    }
                }
                Terminal.err("rxvault: stopped; served reads are in the audit log")
            }
        }
    }
}

extension RxVaultCommand.Serve {
    /// Opens the vault for the server. With an agent already holding it (`rxvault unlock`), from
    /// that agent; else with the passphrase, and then the server is the vault's agent while it
    /// runs (issue 11: one unlock for the server and the owner's commands), on the same socket
    /// `rxvault unlock` would use, locked when the server stops.
    static func openVaultAndAgent(_ options: VaultOptions) throws -> (Vault, ServeAgent?) {
        try options.requireOwner("serve")
        let path = options.vaultPath
        let header = try VaultHeader.read(at: path)
        if let agentKey = try options.ownerKey(header: header, passphrase: .never) {
            return (try options.openVault(with: agentKey), nil)
        }
        guard header.formatVersion == VaultHeader.currentFormatVersion else {
            // An older format is upgraded by the first write; the agent holds only current vaults.
            return (try options.openVault(command: "serve", agent: false), nil)
        }
        let passphrase = try PassphraseSource.existing(options)
        let unwrapped = try header.unwrapRootKey(passphrase: passphrase)
        let rootKey = SecretBytes(lockedCount: unwrapped.count)
        rootKey.withUnsafeMutableBytes { target in unwrapped.withUnsafeBytes { source in target.copyMemory(from: source) } }
        let vault = try Vault.open(at: path, with: .rootKey(rootKey), clock: Environment.clock(),
                                   busyTimeoutMilliseconds: try Environment.busyTimeoutMilliseconds(), anchor: Environment.rollbackAnchor)
        if let rollback = vault.rollback {
            Terminal.warning("this vault is older than a copy of it this computer has seen (it is at write \(rollback.found), this computer saw write \(rollback.seen)): changes, and the reads served, are refused until you run 'rxvault check --accept-rollback'")
        }
        // The agent gets a copy: it wipes its key when it locks (`rxvault lock`, the file
        // replaced), and the server goes on with its own (it opens a replaced file with it).
        let agentKey = SecretBytes(lockedCount: rootKey.count)
        agentKey.withUnsafeMutableBytes { target in rootKey.withUnsafeBytes { source in target.copyMemory(from: source) } }
        return (vault, ServeAgent.start(vaultPath: RxVaultCommand.Unlock.absolute(path), vaultIDHex: header.vaultIDHex, rootKey: agentKey))
    }
}

/// The agent a running server answers as (`rxvault unlock`'s protocol, on a thread of its own),
/// so the owner's commands need no passphrase while it serves.
final class ServeAgent: @unchecked Sendable {
    let server: AgentServer
    let thread: Thread
    private let finished = DispatchSemaphore(value: 0)

    private init(server: AgentServer) {
        self.server = server
        let done = finished
        nonisolated(unsafe) let loop = server   // used only by that thread until `stop`
        thread = Thread {
            // The loop removes the socket as it ends. Said when it ends while the server goes on
            // (the vault file replaced or removed, `rxvault lock`, the idle limit).
            let why = loop.run()
            if why != Self.stopReason {
                Terminal.err("rxvault: the vault is locked for owner commands (\(why)); the server goes on serving")
            }
            done.signal()
        }
    }

    static let stopReason = "the server stopped"

    /// Starts answering; on failure (another agent for this vault, an unsafe folder) says why
    /// and serves without it.
    static func start(vaultPath: String, vaultIDHex: String, rootKey: SecretBytes) -> ServeAgent? {
        do {
            try AgentAccess.directory.prepare()
            let socket = try AgentAccess.directory.socketPath(vaultIDHex: vaultIDHex)
            // A day without use, or the server's whole life (a year), whichever comes first.
            let service = try AgentService(vaultPath: vaultPath, rootKey: rootKey, idleTimeout: 24 * 3600, maxLifetime: 365 * 24 * 3600)
            let agent = ServeAgent(server: try AgentServer(socketPath: socket, service: service, watchingSignals: false))
            agent.thread.start()
            Terminal.err("rxvault: the vault is unlocked while the server runs (owner commands need no passphrase; 'rxvault lock' ends it)")
            return agent
        } catch {
            Terminal.warning("serving without unlocking the vault for owner commands: \(error)")
            return nil
        }
    }

    /// Locks (wipes the key) and waits for the loop to remove its socket (it removes only its
    /// own: after an early lock, a newer agent may hold the path).
    func stop() {
        server.service.lock(reason: Self.stopReason)
        // The loop sees the lock within its check interval; its socket goes with it.
        _ = finished.wait(timeout: .now() + .seconds(Int(AgentServer.checkIntervalSeconds) + 3))
    }
}

/// How the server task ended (read after it signalled).
final class ServeOutcome: @unchecked Sendable {
    var error: (any Error)?
}
