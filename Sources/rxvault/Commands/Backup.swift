import ArgumentParser
import Foundation
import RxCrypto
import RxVault

#if canImport(Glibc)
    import Glibc
#endif

extension RxVaultCommand {
    struct Backup: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "backup",
            abstract: "Back up the vault into an age file; list, prune or verify backups.",
            discussion: flowing(
                """
                A backup is a consistent snapshot of the vault (safe while another rxvault process
                writes) inside an age v1 file. The vault's own encryption stays inside it. The age
                layer opens with every way into the vault that day: any of its passphrases, or its
                recovery code (rxvault key add --recovery), alone restores it. Recipients (age1...
                keys, ssh-ed25519 public keys) are further ways in. None of them needs a secret to
                back up to; --passphrase-only locks it with the vault's passphrase alone.

                Examples:
                  rxvault backup ~/backups/rxvault    # a dated file in the folder
                  rxvault backup ~/backups/rxvault --recipients-file ~/backup-recipients
                  rxvault backup - --armor > rx.txt
                  rxvault backup list ~/backups/rxvault
                  rxvault backup prune ~/backups/rxvault --keep-daily 7 --keep-weekly 4
                  rxvault backup verify rx.txt
                  rxvault restore rx.txt --to ~/rx-restored.rxv
                  rxvault restore rx.txt --recovery-key-file code.txt   # passphrase forgotten
                """),
            subcommands: [BackupCreate.self, BackupVerify.self, BackupList.self, BackupPrune.self],
            defaultSubcommand: BackupCreate.self)
    }
}
