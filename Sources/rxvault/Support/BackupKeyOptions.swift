import ArgumentParser
import Foundation
import RxCrypto
import RxVault

#if canImport(Glibc)
    import Glibc
#endif

extension RxVaultCommand {
    /// The keys `--verify` opens backups with, shared by `backup list` and `backup prune`.
    struct BackupKeyOptions: ParsableArguments {
        @Flag(
            help:
                "Open every backup and check every object in it (needs the keys: the vault's passphrase or recovery code, and --age-identity for backups to recipients)."
        )
        var verify = false
        @Option(
            help: ArgumentHelp(
                "With --verify: open backups made to recipients with this identity file.", valueName: "file"))
        var ageIdentity: String?
        @Option(
            help: ArgumentHelp(
                "With --verify: open passphrase backups with the passphrase in this file (made with --age-passphrase-file).",
                valueName: "file")) var agePassphraseFile: String?
        @OptionGroup var recovery: RecoveryCodeOptions

        /// The keys read (the passphrase or recovery code asked for as the one of `label`), as
        /// RxVault's `BackupCheck` takes them.
        func checker(options: VaultOptions, label: String) throws -> BackupCheck {
            // The files first: a bad one is told before the passphrase is asked for.
            let identities = try ageIdentity.map { try KeyFile.identities($0, what: "age identity") }
            let agePassphrase = try agePassphraseFile.map {
                try PassphraseSource.read(file: $0, what: "age passphrase")
            }
            return BackupCheck(
                vaultKey: try recovery.backupVaultKey(options: options, label: label), agePassphrase: agePassphrase,
                identities: identities)
        }

        func validate() throws {
            if !verify && (ageIdentity != nil || agePassphraseFile != nil) {
                throw ValidationError("--age-identity and --age-passphrase-file are for --verify")
            }
            if !verify && recovery.isGiven {
                throw ValidationError("--recovery and --recovery-key-file are for --verify")
            }
        }
    }
}

extension BackupFolder {
    /// `body`'s answer; a folder that cannot be read is "no vault" (66) with a hint about backup
    /// folders, not the vault's "create one with rxvault init".
    static func readable<Value>(_ folder: String, _ body: () throws -> Value) throws -> Value {
        do { return try body() } catch VaultError.noVault(let why) {
            throw CLIError(
                .noVault, why,
                hint: "give the folder that 'rxvault backup FOLDER' writes the backups to")
        }
    }
}
