import ArgumentParser
import Foundation
import Logging
import RxAgent
import RxCrypto
import RxServe
import RxVault

extension RxVaultCommand {
    struct Serve: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "serve",
            abstract: "Serve a read-only FHIR R4 API to client apps (what each was granted, nothing else).",
            discussion: flowing(
                """
                Asks for the passphrase once and serves until SIGTERM or Ctrl-C (requests in flight
                finish; the reads served are written to the audit log). Clients prove they hold their
                age identity, get a 15-minute token, and read what the owner granted them as it is
                now: a revoke, a removal or an expiry counts at the next request. docs/api.md has the
                protocol, curl examples and a reference client (examples/rxvault_client.py).

                By default it listens on a Unix socket only the owner can reach
                ($XDG_RUNTIME_DIR/rxvault/serve.sock). --listen 127.0.0.1:8080 serves TCP on loopback;
                any other address needs --tls-cert and --tls-key. Behind a TLS proxy, give
                --public-url https://rx.example (the start of every link the server sends), or
                --trusted-proxy with the proxy's address to take the scheme and host it forwards.
                --sync REMOTE keeps this device in step with other devices while it serves, as
                'rxvault sync' does, at start and every --sync-every (a failed sync is said and
                tried again; a conflict is left for you).

                Examples:
                  rxvault serve
                  rxvault serve --socket /run/user/1000/rxvault.sock
                  rxvault serve --listen 127.0.0.1:8443 --tls-cert cert.pem --tls-key key.pem
                  rxvault serve --listen 127.0.0.1:8081 --public-url https://rx.example
                  rxvault serve --on-request 'notify-send "$RXVAULT_REQUEST_CLIENT asks"'
                  rxvault serve --sync /media/usb/rx-remote --sync-every 5m
                """))

        @Option(help: ArgumentHelp("Listen on this Unix socket (mode 0600).", valueName: "path")) var socket: String?
        @Option(help: ArgumentHelp("Listen on TCP instead, e.g. 127.0.0.1:8080 or [::1]:8080.", valueName: "host:port"))
        var listen: String?
        @Option(help: ArgumentHelp("PEM certificate chain for TLS.", valueName: "file")) var tlsCert: String?
        @Option(help: ArgumentHelp("PEM private key for TLS.", valueName: "file")) var tlsKey: String?
        @Option(
            help: ArgumentHelp(
                "How much to log on stderr: info (a line per request), notice, error.", valueName: "level"))
        var logLevel: String = "info"
        @Option(
            help: ArgumentHelp(
                "Run this shell command for each access request a client makes (e.g. notify-send), with RXVAULT_REQUEST_ID and RXVAULT_REQUEST_CLIENT set; it gets no prescription data and not the client's text.",
                valueName: "command"))
        var onRequest: String?
        @Option(
            help: ArgumentHelp(
                "The URL clients reach the server at (behind a TLS proxy: https://rx.example): the start of every link the server sends (Bundle pages, fullUrl, attachment URLs). Without it (and --trusted-proxy), links name the address the server listens on.",
                valueName: "url"))
        var publicURL: String?
        @Option(
            help: ArgumentHelp(
                "A proxy's IP address whose X-Forwarded-Proto and X-Forwarded-Host name the links' scheme and host; any other peer's are ignored. May be repeated.",
                valueName: "address"))
        var trustedProxy: [String] = []
        @Option(
            help: ArgumentHelp(
                "Keep this device in step with a remote while serving (a folder or a postgres:// vault, as 'rxvault sync'): synced at start and every --sync-every.",
                valueName: "remote"))
        var sync: String?
        @Option(
            help: ArgumentHelp("How often to sync with --sync: 90s, 5m, 1h (default 5m).", valueName: "time"),
            transform: AgentDuration.parse)
        var syncEvery: AgentDuration?
        @OptionGroup var options: VaultOptions

        func validate() throws {
            if sync == nil && syncEvery != nil {
                throw ValidationError("--sync-every goes with --sync REMOTE")
            }
            if sync != nil && VaultLocation.isDatabase(options.vaultPath) {
                throw ValidationError(
                    "--sync is for a device's vault file: a vault in a database is the shared copy (sync devices with it)"
                )
            }
            if socket != nil && listen != nil { throw ValidationError("give --socket or --listen, not both") }
            if (tlsCert == nil) != (tlsKey == nil) { throw ValidationError("--tls-cert and --tls-key go together") }
            if tlsCert != nil && listen == nil {
                throw ValidationError("TLS is for --listen (a Unix socket needs none)")
            }
            if let listen, Self.parseListen(listen) == nil {
                throw ValidationError(
                    "--listen '\(listen)': give HOST:PORT with a port from 1 to 65535, e.g. 127.0.0.1:8080")
            }
            if let publicURL, case .failure(let problem) = ServeSettings.publicURL(publicURL) {
                throw ValidationError("--public-url '\(publicURL)': \(problem)")
            }
            for address in trustedProxy where ServeSettings.proxyAddress(address) == nil {
                throw ValidationError(
                    "--trusted-proxy '\(address)': give the proxy's IP address, e.g. 127.0.0.1 or ::1 (no name, no port)"
                )
            }
            if !["info", "notice", "error", "debug"].contains(logLevel) {
                throw ValidationError("--log-level: info, notice, error or debug")
            }
        }

        static func parseListen(_ text: String) -> (String, Int)? {
            guard let colon = text.lastIndex(of: ":") else { return nil }
            var host = String(text[..<colon])
            if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
            guard !host.isEmpty, let port = Int(text[text.index(after: colon)...]), (1...65535).contains(port) else {
                return nil
            }
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
            if let publicURL, case .success(let base) = ServeSettings.publicURL(publicURL) { settings.publicURL = base }
            settings.trustedProxies = trustedProxy.compactMap(ServeSettings.proxyAddress)
            // On a database several instances may share the vault, each under a role that can
            // only read and append (docs/deploy.md): no owner writes there.
            settings.ownerWrites = !VaultLocation.isDatabase(options.vaultPath)
            if let onRequest, !onRequest.trimmingCharacters(in: .whitespaces).isEmpty {
                let notifier = RequestNotifier(command: onRequest)
                settings.onAccessRequest = { id, client in notifier.notify(requestID: id, clientName: client) }
            }
            if settings.needsTLS && tlsCert == nil {
                throw CLIError(
                    .usage, "serving on \(listen ?? "") without TLS would send tokens and prescriptions in the clear",
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
            guard lstat(folder, &info) == 0, info.st_mode & S_IFMT == S_IFDIR, info.st_uid == getuid(),
                info.st_mode & 0o077 == 0
            else {
                throw CLIError(.cannotWrite, "\(folder) is not a folder of yours with mode 0700; give --socket PATH")
            }
            return folder + "/serve.sock"
        }

        func run() async throws {
            try await CommandRunner.run {
                let settings = try settings()
                let level = Logger.Level(rawValue: logLevel) ?? .info
                LoggingSystem.bootstrap { label in
                    var handler = ServeLogHandler(label: label)
                    handler.logLevel = level
                    return handler
                }
                let (vault, agentKey) = try Self.openVault(options)
                // An older copy or another line of history may hold grants revoked since (issue
                // 48: a restored dump, a lagging desk's write): nothing is served from it.
                if let rollback = vault.rollback {
                    throw CLIError(
                        .integrity, "the server does not start on this state of the vault (see the warning above)",
                        hint: rollback.isFork
                            ? "'rxvault check --accept-fork' goes on from it, if it is the state to keep"
                            : "'rxvault check --accept-rollback' accepts it, if it was put back on purpose")
                }
                let vaultID = vault.header.vaultIDHex
                let syncing = try sync.map {
                    ServeSync(vault: try vault.reopened(), remote: $0, interval: syncEvery?.seconds ?? 300)
                }
                syncing?.start()
                defer { syncing?.stop() }
                let agent = agentKey.flatMap {
                    Self.startAgent(vaultPath: options.vaultPath, vaultIDHex: vaultID, rootKey: $0)
                }
                // The agent stops however the server ends.
                let served: Result<Void, any Error>
                do {
                    try await RxServer.run(vault: vault, settings: settings, logger: Logger(label: "rxvault.serve")) {
                        address in
                        Terminal.err(
                            "rxvault: serving vault \(vaultID.prefix(8)) at \(address) (Ctrl-C or SIGTERM to stop)")
                    }
                    served = .success(())
                } catch {
                    served = .failure(error)
                }
                await agent?.stop()
                switch served {
                case .success: break
                case .failure(let error as ServeStartError):
                    switch error {
                    case .socketPathInUse, .addressInUse: throw CLIError(.alreadyExists, error.description)
                    case .tls(let why): throw CLIError(.invalidInput, why)
                    }
                case .failure(let error): throw CLIError(.failure, "the server stopped: \(error)")
                }
                Terminal.err("rxvault: stopped; served reads are in the audit log")
            }
        }
    }
}

extension RxVaultCommand.Serve {
    /// Opens the vault for the server; returns it and, when the server should be the vault's
    /// agent while it runs (one unlock for the server and the owner's commands), the
    /// root key for that agent (a copy of its own: the agent wipes it when it locks, and the
    /// server goes on with its key, with which it opens a replaced file).
    ///
    /// With an agent already holding the vault (`rxvault unlock`) the key is that agent's, and
    /// the server needs no agent of its own. A format before 4 is opened with the passphrase and
    /// upgraded here, before the server's second connection opens: that connection's first
    /// audit write would upgrade it under the first, which reads a format-1 vault without a
    /// root and would not notice (a format-4 vault is followed: `Vault.adoptUpgradedHeader`).
    static func openVault(_ options: VaultOptions) throws -> (Vault, agentKey: SecretBytes?) {
        try options.requireOwner("serve")
        let path = options.vaultPath
        let header = try options.readHeader(at: path)
        let refused = "the server does not start"
        if let agentKey = try options.ownerKey(header: header, passphrase: .never) {
            return (try options.openVault(with: agentKey, refused: refused), nil)
        }
        guard header.upgradesWithoutPassphrase else {
            // An older format is upgraded with the passphrase's key (the agent holds only vaults
            // whose upgrade needs none), now, before the audit writer's connection opens.
            let vault = try options.openVault(command: "serve", agent: false, refused: refused)
            _ = try vault.upgrade()
            return (vault, nil)
        }
        // No agent holds it: the passphrase unwraps the root key, which the server's own agent holds too.
        let rootKey = try header.unwrapRootKey(passphrase: try PassphraseSource.existing(options)).lockedCopy()
        let vault = try options.openVault(with: .rootKey(rootKey), refused: refused)
        return (vault, rootKey.lockedCopy())
    }

    /// Starts answering as the vault's agent; on failure (another agent for this vault, an
    /// unsafe folder) says why and serves without it.
    static func startAgent(vaultPath: String, vaultIDHex: String, rootKey: SecretBytes) -> HostedAgent? {
        do {
            // A day without use, or the server's whole life (a year), whichever comes first.
            let agent = try HostedAgent.start(
                directory: AgentAccess.directory, vaultPath: RxVaultCommand.Unlock.absolute(vaultPath),
                vaultIDHex: vaultIDHex, rootKey: rootKey, idleTimeout: 24 * 3600, maxLifetime: 365 * 24 * 3600
            ) { why in
                // The vault file replaced or removed, `rxvault lock`, the idle limit.
                Terminal.err("rxvault: the vault is locked for owner commands (\(why)); the server goes on serving")
            }
            Terminal.err(
                "rxvault: the vault is unlocked while the server runs (owner commands need no passphrase; 'rxvault lock' ends it)"
            )
            return agent
        } catch {
            Terminal.warning("serving without unlocking the vault for owner commands: \(error)")
            return nil
        }
    }
}
