import ArgumentParser
import RxVault

extension RxVaultCommand {
    struct Passwd: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Change the vault's passphrase.",
            discussion: flowing("""
            Only the wrapping of the vault's root key changes; no prescription is rewritten, so
            this is instant whatever the vault holds. Afterwards the old passphrase no longer
            opens the vault. Backups made earlier still need the passphrase they were made with
            (their age layer and the vault inside them are locked with it): keep the old
            passphrase as long as you keep those backups, or make a new backup now.
            """))

        @OptionGroup var options: VaultOptions

        @Option(help: ArgumentHelp("Read the new passphrase from the first line of this file.", valueName: "file"),
                completion: .file())
        var newPassphraseFile: String?

        func run() throws {
            try CommandRunner.run {
                let vault = try options.openVault(command: "passwd")
                let newPassphrase = try PassphraseSource.new(file: newPassphraseFile, options: options, prompt: "New passphrase: ")
                if newPassphrase.count < 10 {
                    Terminal.warning("the new passphrase is short (\(newPassphrase.count) bytes)")
                }
                try vault.changePassphrase(to: newPassphrase)
                warnIfNotPurged(vault)
                Terminal.out("passphrase changed")
                Terminal.err("rxvault: note: backups made before now still need the old passphrase (to open and to restore); "
                             + "keep it while you keep them, or make a new backup now ('rxvault backup DIR')")
            }
        }
    }
}
