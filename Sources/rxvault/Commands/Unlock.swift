import ArgumentParser
import Foundation
import RxAgent
import RxCrypto
import RxVault

extension RxVaultCommand {
    struct Unlock: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "unlock",
            abstract: "Ask for the passphrase once; owner commands on this vault then need none until it locks.",
            discussion: flowing(
                """
                Starts an agent for this vault: a background process that keeps the vault's root key
                in locked memory and hands it, over a Unix socket only your user can reach, to the
                owner commands you run on this vault file. It locks (wipes the key and exits) after
                --timeout without use, after --max-lifetime in any case, on 'rxvault lock', or when
                the vault file is replaced or its passphrase changed. 'rxvault status' says until when.

                While it runs, any program running as your user can take the vault's key from it
                (SECURITY.md, "While a vault is unlocked"). A vault in a format before 4 must be
                upgraded first ('rxvault upgrade'); a format-4 vault is upgraded by the first write
                through the agent.

                Examples:
                  rxvault unlock
                  rxvault unlock --timeout 1h --max-lifetime 8h
                  rxvault lock
                """))

        @Option(
            help: ArgumentHelp(
                "Lock after this long without use: 90s, 15m, 2h (default 15m, up to 24h).", valueName: "duration"),
            transform: AgentDuration.parse)
        var timeout = AgentDuration(seconds: 15 * 60)

        @Option(
            help: ArgumentHelp(
                "Lock after this long in any case (default 4h, or --timeout if longer; up to 24h).",
                valueName: "duration"),
            transform: AgentDuration.parse)
        var maxLifetime: AgentDuration?

        @Flag(
            help:
                "If the vault is already unlocked, lock it and unlock it again (new timeouts; asks for the passphrase)."
        )
        var restart = false

        @OptionGroup var options: VaultOptions

        static let defaultLifetime = 4 * 3600.0

        func validate() throws {
            if let maxLifetime, maxLifetime.seconds < timeout.seconds {
                throw ValidationError("--timeout (\(timeout.text)) is longer than --max-lifetime (\(maxLifetime.text))")
            }
        }

        func run() throws {
            try CommandRunner.run {
                try options.requireOwner("unlock")
                let path = Self.absolute(options.vaultPath)
                let header = try options.readHeader(at: path)
                guard header.upgradesWithoutPassphrase else {
                    throw CLIError(
                        .usage,
                        "this vault is in format \(header.formatVersion); only a vault in format 4 or later can be unlocked",
                        hint:
                            "run 'rxvault upgrade' first (it asks for the passphrase; older rxvault versions cannot open the upgraded file)"
                    )
                }
                let directory = AgentAccess.directory
                try directory.prepare()
                let socket = try directory.socketPath(vaultIDHex: header.vaultIDHex)
                let file = try VaultFileIdentity(path: path, header: header)
                switch AgentClient(socketPath: socket).probe() {
                case .none:
                    break
                case .unreachable(let why):
                    throw CLIError(.failure, why)
                case .live(let status):
                    guard status.file == file else {
                        throw CLIError(
                            .busy, "another file of this vault is unlocked: \(status.path) (agent pid \(status.pid))",
                            hint: "lock it first: rxvault lock --vault \(status.path)")
                    }
                    if !restart {
                        Terminal.out("\(path) is already \(AgentAccess.describe(status))")
                        Terminal.err("rxvault: hint: 'rxvault unlock --restart' starts it again with new timeouts")
                        return
                    }
                    _ = try AgentAccess.lock(vaultIDHex: header.vaultIDHex)
                }
                let passphrase = try PassphraseSource.existing(options)
                let rootKey = try header.unwrapRootKey(passphrase: passphrase)
                let lifetime = maxLifetime?.seconds ?? max(Self.defaultLifetime, timeout.seconds)
                let settings = AgentProcess.Settings(
                    vaultPath: path, socketPath: socket, idleTimeout: timeout.seconds, maxLifetime: lifetime)
                let executable = try ParserFactory.selfExecutable()
                let status: AgentStatus
                do {
                    status = try AgentProcess.start(
                        executable: executable,
                        arguments: ["_agent"] + settings.arguments, rootKey: rootKey)
                } catch AgentError.alreadyRunning(let running) {
                    // Another unlock of this vault won the race: that agent stands.
                    Terminal.out("\(path) is already \(AgentAccess.describe(running))")
                    return
                }
                if !status.memoryLocked {
                    Terminal.warning(
                        "the agent could not lock its memory (RLIMIT_MEMLOCK, see 'ulimit -l'): the key may be written to swap"
                    )
                }
                Terminal.out(
                    "unlocked \(path) until \(AgentAccess.clockTime(status.until)) (after \(timeout.text) unused, at \(AgentAccess.clockTime(status.lifetimeUntil)) at the latest; agent pid \(status.pid))"
                )
            }
        }

        /// The agent runs in "/": a relative vault path is made absolute (links are kept, so the
        /// agent watches the path the user named).
        static func absolute(_ path: String) -> String {
            path.hasPrefix("/") || VaultLocation.isDatabase(path)
                ? path : FileManager.default.currentDirectoryPath + "/" + path
        }
    }
}
