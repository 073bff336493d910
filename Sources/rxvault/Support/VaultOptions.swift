import ArgumentParser
import RxVault

/// Options every command takes, before or after the subcommand name.
struct VaultOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp(
        "The vault file.",
        discussion: "Default: $RXVAULT_PATH, else $XDG_DATA_HOME/rxvault/vault.rxv, else ~/.local/share/rxvault/vault.rxv.",
        valueName: "path"), completion: .file())
    var vault: String?

    @Option(name: .long, help: ArgumentHelp("Read the passphrase from the first line of this file (or set RXVAULT_PASSPHRASE_FILE).", valueName: "file"),
            completion: .file())
    var passphraseFile: String?

    @Option(name: .long, help: ArgumentHelp("Read the passphrase from this open file descriptor (e.g. 3, with 3<file).", valueName: "n"))
    var passphraseFd: Int32?

    @Flag(name: .long, help: "Never prompt: fail if a passphrase is needed and no file gives it.")
    var noInput = false

    var vaultPath: String { vault ?? Environment.defaultVaultPath }

    /// Opens the vault, asking for the passphrase from the configured source.
    func openVault() throws -> Vault {
        let path = vaultPath
        // Say "no vault" before asking for a passphrase that could not open anything.
        _ = try VaultHeader.read(at: path)
        let passphrase = try PassphraseSource.existing(self)
        return try Vault.open(at: path, passphrase: passphrase, clock: Environment.clock(),
                              busyTimeoutMilliseconds: try Environment.busyTimeoutMilliseconds())
    }
}

/// `--format` for commands that print records.
enum OutputFormat: String, ExpressibleByArgument, CaseIterable {
    case table, json, csv
}
