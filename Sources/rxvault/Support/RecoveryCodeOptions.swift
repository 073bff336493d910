import ArgumentParser
import RxVault

/// `--recovery` and `--recovery-key-file` where a backup is opened (`restore`, `backup verify`,
/// `backup list --verify`, `backup prune --verify`): the vault inside a backup has the key slots
/// the vault had that day, so a recovery code added before the backup opens it, and a person who
/// forgot the passphrase has their backups too. The age layer around it opens with the code as
/// well (the backup carries the vault's key slots: `BackupWaysIn`), unless it was locked with a
/// passphrase alone (RecoveryCodeOptions.passphraseLayerRefusal).
struct RecoveryCodeOptions: ParsableArguments {
    @Flag(help: "Open the backup with the vault's recovery code (asked for) instead of the passphrase.")
    var recovery = false

    @Option(
        help: ArgumentHelp("Open the backup with the vault's recovery code in this file.", valueName: "file"),
        completion: .file())
    var recoveryKeyFile: String?

    var isGiven: Bool { recovery || recoveryKeyFile != nil }

    func validate() throws {
        if recovery && recoveryKeyFile != nil {
            throw ValidationError("give --recovery or --recovery-key-file, not both")
        }
    }

    /// The code (asked for on the terminal as the code of `label`), or nil when none was asked
    /// for. A passphrase named on the same command line is refused: which one should open the
    /// vault would be a guess (RXVAULT_PASSPHRASE_FILE, set for every command, is just not used).
    func read(options: VaultOptions, label: String) throws -> RecoveryCode? {
        guard isGiven else { return nil }
        try requireAlone(options)
        return try RecoveryCodeSource.read(file: recoveryKeyFile, options: options, label: label)
    }

    /// What opens the vault inside a backup: the recovery code when one is asked for, else the
    /// vault's passphrase as it was the day the backup was made (asked for as the one of
    /// `label`). Either opens the age layer of a backup that carries the vault's key slots; only
    /// the passphrase opens one locked with a passphrase alone (`passphraseLayerRefusal`).
    func backupVaultKey(options: VaultOptions, label: String) throws -> VaultKey {
        if let code = try read(options: options, label: label) { return .recoveryCode(code) }
        return .passphrase(try PassphraseSource.existing(options, for: label))
    }

    /// Refuses a recovery code given with a passphrase on the command line (a usage error, told
    /// before anything about the backup).
    func requireAlone(_ options: VaultOptions) throws {
        if isGiven && (options.passphraseFile != nil || options.passphraseFd != nil) {
            throw CLIError(
                .usage, "give the vault's passphrase or its recovery code, not both",
                hint: "the passphrase of a backup's age layer goes in --age-passphrase-file")
        }
    }

    /// A recovery code given for a backup whose age layer is an scrypt stanza: the vault's
    /// passphrase of the day it was made (`--passphrase-only`, or any default backup before
    /// 0.5.0), or an --age-passphrase-file's. age allows no other stanza beside scrypt, so
    /// nothing a recovery slot holds can open that layer. `madeOn`: "on 2026-11-22".
    static func passphraseLayerRefusal(_ file: String, madeOn: String) -> CLIError {
        CLIError(
            .wrongPassphrase,
            "\(file) opens only with the passphrase the vault had \(madeOn) (or the one of --age-passphrase-file it was made with), never with a recovery code: it was made with --passphrase-only, --age-passphrase-file, or by rxvault before 0.5.0",
            hint: "give that passphrase (the vault's without --recovery, or --age-passphrase-file FILE); "
                + "backups made since without --passphrase-only open with the recovery code ('rxvault backup list DIR' says what opens each)"
        )
    }
}
