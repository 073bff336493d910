import ArgumentParser
import Foundation
import RxCrypto
import RxVault

/// Options every command takes, before or after the subcommand name.
struct VaultOptions: ParsableArguments {
    @Option(
        name: .long,
        help: ArgumentHelp(
            "The vault: a file, or a postgres:// URL (docs/deploy.md).",
            discussion:
                "Default: $RXVAULT_PATH, else $XDG_DATA_HOME/rxvault/vault.rxv, else ~/.local/share/rxvault/vault.rxv.",
            valueName: "path"), completion: .file())
    var vault: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Read the passphrase from the first line of this file (or set RXVAULT_PASSPHRASE_FILE).", valueName: "file"),
        completion: .file())
    var passphraseFile: String?

    @Option(
        name: .long,
        help: ArgumentHelp("Read the passphrase from this open file descriptor (e.g. 3, with 3<file).", valueName: "n"))
    var passphraseFd: Int32?

    @Flag(name: .long, help: "Never prompt: fail if a passphrase is needed and no file gives it.")
    var noInput = false

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Read as a client app with this age identity file instead of the passphrase.", valueName: "file"),
        completion: .file())
    var identity: String?

    @Flag(
        name: .long,
        help: "Use a passphrase file that its group or others can read (refused without this; exit 77).")
    var allowSharedPassphraseFile = false

    @Flag(
        name: .long,
        help: "Do not use an unlocked agent ('rxvault unlock'): ask for the passphrase (or set RXVAULT_NO_AGENT=1).")
    var noAgent = false

    var vaultPath: String { vault ?? Environment.defaultVaultPath }

    /// Notes, before any command runs, that messages go to a client app (it may give
    /// `--identity` before or after the command name: either group sets it), and that a shared
    /// passphrase file may be used.
    func validate() throws {
        if identity != nil { Audience.isClient = true }
        if allowSharedPassphraseFile { KeyFile.sharedPassphraseFileAllowed = true }
    }

    /// Refuses early (before any other work) when a client identity runs an owner command.
    func requireOwner(_ command: String) throws {
        if identity != nil { throw VaultError.ownerOnly(command) }
    }

    /// Reads the header of the vault at `path` (default: the one the options name), which needs
    /// no key: the first thing a command that opens the vault does, so "no vault" is said before
    /// a passphrase is asked for. On a terminal, the conflict copies beside a vault file are
    /// named here once (`ConflictCopyNotice`), before any prompt.
    func readHeader(at path: String? = nil) throws -> VaultHeader {
        let path = path ?? vaultPath
        let header = try VaultHeader.read(at: path)
        ConflictCopyNotice.sayOnce(vaultPath: path, header: header)
        return header
    }

    /// Opens the vault as the owner, with the key `ownerKey` finds (the agent's, else the
    /// passphrase; not the agent's when `agent` is false). Refused with a client identity: only
    /// the owner changes the vault. `anchored` false skips the rollback anchor (as `backup`
    /// always has).
    func openVault(
        command: String = "this command", agent: Bool = true, anchored: Bool = true,
        refused: String = "changes are refused"
    ) throws -> Vault {
        try requireOwner(command)
        // Say "no vault" before asking for a passphrase that could not open anything.
        let header = try readHeader()
        // A passphrase typed at the prompt may be mistyped: asked again, as sudo does. One from
        // a file or descriptor is what it is, and is refused at once.
        let prompted = !PassphraseSource.isGivenWithoutPrompt(self)
        var attempt = 1
        while true {
            guard let key = try ownerKey(header: header, agent: agent) else {
                throw CLIError(.usage, "a passphrase is needed")
            }
            do {
                return try openVault(with: key, anchored: anchored, refused: refused)
            } catch VaultError.wrongPassphrase(let recoverySlot)
                where prompted && attempt < PassphraseSource.promptTries
            {
                guard case .passphrase = key else { throw VaultError.wrongPassphrase(recoverySlot: recoverySlot) }
                Terminal.err("rxvault: that passphrase does not open the vault; try again")
                attempt += 1
            }
        }
    }

    /// Opens the vault as the owner with `key` (from `ownerKey`, or a recovery code), warning
    /// when it is older than a copy of it this computer has seen; `refused` says what the
    /// rolled-back vault refuses (a server refuses its reads too).
    func openVault(with key: VaultKey, anchored: Bool = true, refused: String = "changes are refused") throws -> Vault {
        let vault = try Vault.open(
            at: vaultPath, with: key, clock: Environment.clock(),
            busyTimeoutMilliseconds: try Environment.busyTimeoutMilliseconds(),
            anchor: anchored ? Environment.rollbackAnchor : nil)
        if let rollback = vault.rollback {
            Terminal.warning(Vault.historyWarning(rollback, refused: refused))
            if let history = rollback.history {
                let holders = ConflictCopies.find(besideVaultAt: vaultPath, vaultID: vault.header.vaultID).filter {
                    $0.knowledge.map(history.isHeld) ?? false
                }
                if !holders.isEmpty {
                    Terminal.err(
                        "rxvault: the writes it lacks are in \(holders.map(\.name).joined(separator: ", ")) beside it (as \(holders.count == 1 ? "that copy says" : "those copies say"); open it with --vault to see them)"
                    )
                }
                let backups =
                    Environment.rollbackAnchor.map {
                        BackupMemory(anchor: $0, vaultIDHex: vault.header.vaultIDHex).holding(history)
                    } ?? []
                if let newest = backups.first {
                    let older = backups.count > 1 ? " (and \(backups.count - 1) older)" : ""
                    Terminal.err(
                        "rxvault: the writes it lacks are in the backup \(newest.path) made here at \(newest.time)\(older): 'rxvault merge \(newest.path)' brings them in"
                    )
                }
            }
        }
        return vault
    }

    /// Opens the vault for reading: as a client when `--identity` is given, else as the owner.
    func openReader() throws -> any VaultReader {
        identity == nil ? try openVault() : try openClient()
    }

    /// Opens the vault as the client whose identity `--identity` names (a usage error without it).
    func openClient() throws -> ClientVault {
        guard let identity else { throw CLIError(.usage, "give --identity KEY to read as a client") }
        guard let first = try KeyFile.identities(identity).first else {
            throw CLIError(.usage, "\(identity) holds no identity")
        }
        _ = try readHeader()
        return try ClientVault.open(
            at: vaultPath, identity: first, clock: Environment.clock(),
            busyTimeoutMilliseconds: try Environment.busyTimeoutMilliseconds())
    }
}

/// `--format` for commands that print a set of records (`list`, `query`): rows as a table, JSON,
/// CSV or one JSON object per line.
enum OutputFormat: String, ExpressibleByArgument, CaseIterable {
    case table, json, csv, ndjson
}

/// `--format` for commands that print one document (`show`, `history`, `attachments`, `grants`,
/// `log`, `check`, `client list`): a table or JSON. Its own type, so `--help` offers and the parser
/// accepts exactly these two, instead of offering csv and then refusing it.
enum DocumentFormat: String, ExpressibleByArgument, CaseIterable {
    case table, json
}
