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
                writes) inside an age v1 file. The vault's own encryption stays inside it. With no
                --recipient, --recipients-file or --age-passphrase-file, the age layer uses the
                vault's passphrase as it is that day, so that passphrase alone restores it.
                Recipients (age1... keys, ssh-ed25519 public keys) need no secret to back up to.

                Examples:
                  rxvault backup ~/backups/rxvault    # a dated file in the folder
                  rxvault backup ~/backups/rxvault --recipients-file ~/backup-recipients
                  rxvault backup - --armor > rx.txt
                  rxvault backup list ~/backups/rxvault
                  rxvault backup prune ~/backups/rxvault --keep-daily 7 --keep-weekly 4
                  rxvault backup verify rx.txt
                  rxvault restore rx.txt --to ~/rx-restored.rxv
                """),
            subcommands: [BackupCreate.self, BackupVerify.self, BackupList.self, BackupPrune.self],
            defaultSubcommand: BackupCreate.self)
    }
}
