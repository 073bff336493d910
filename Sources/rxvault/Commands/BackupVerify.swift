import ArgumentParser
import Foundation
import RxCrypto
import RxVault

#if canImport(Glibc)
    import Glibc
#endif

extension RxVaultCommand {
    struct BackupVerify: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "verify",
            abstract: "Decrypt a backup and check every object in it, without restoring.",
            discussion: flowing(
                """
                Exits 0 when everything verifies, 76 when anything does not (77 when the key does not
                open it). A backup opens with a passphrase of the day it was made, or with
                --recovery / --recovery-key-file and a recovery code the vault had then; one locked
                with a passphrase alone (--passphrase-only) only with that passphrase, and one to
                recipients alone needs --age-identity as well. Says what opens it.
                """))

        @Argument(help: "The backup file.") var file: String
        @Option(
            help: ArgumentHelp(
                "Open the age layer with this identity file (backups made with --recipient).", valueName: "file"))
        var ageIdentity: String?
        @Option(help: ArgumentHelp("Open the age layer with the passphrase in this file.", valueName: "file"))
        var agePassphraseFile: String?
        @OptionGroup var recovery: RecoveryCodeOptions
        @OptionGroup var options: VaultOptions

        func run() throws {
            try CommandRunner.run {
                let scratch = try Scratch()
                defer { scratch.remove() }
                let inner = scratch.path + "/vault.rxv"
                let key = try Restore.openBackup(
                    file, into: inner, ageIdentity: ageIdentity, agePassphraseFile: agePassphraseFile,
                    recovery: recovery, options: options, purpose: .verify)
                let verification = try Restore.verifyVault(at: inner, of: file, key: key)
                for stage in verification.report.stages {
                    Terminal.out("\(stage.errors.isEmpty ? "ok  " : "FAIL") \(stage.name): \(stage.checked) checked")
                    for error in stage.errors { Terminal.out("     error: \(error)") }
                }
                guard verification.report.isClean else {
                    throw CLIError(.integrity, "the backup has integrity errors (listed above)")
                }
                Terminal.out("the backup verifies: it restores \(Restore.describe(verification))")
                Terminal.out(Restore.opensWith(file))
            }
        }
    }
}
