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
