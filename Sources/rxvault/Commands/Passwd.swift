import ArgumentParser
import RxVault

extension RxVaultCommand {
    struct Passwd: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Change the vault's passphrase.",
            discussion: flowing("""
            Only the wrapping of the vault's root key changes; no prescription is rewritten, so
            this is instant whatever the vault holds. Afterwards the old passphrase no longer
            opens the vault. Backups made earlier still open with the passphrase they were made with.

            It always asks for the current passphrase, even while the vault is unlocked
            ('rxvault unlock'): whoever changes it must know it. An unlocked vault is locked
            afterwards; unlock it again with the new passphrase.
            """))

        @OptionGroup var options: VaultOptions

        @Option(help: ArgumentHelp("Read the new passphrase from the first line of this file.", valueName: "file"),
                completion: .file())
        var newPassphraseFile: String?

        func run() throws {
            try CommandRunner.run {
                let vault = try options.openVault(command: "passwd", agent: false)
                let newPassphrase = try PassphraseSource.new(file: newPassphraseFile, options: options, prompt: "New passphrase: ")
                if newPassphrase.count < 10 {
                    Terminal.warning("the new passphrase is short (\(newPassphrase.count) bytes)")
                }
                try vault.changePassphrase(to: newPassphrase)
                warnIfNotPurged(vault)
                Terminal.out("passphrase changed")
                // The agent would refuse anyway (the key wrapping it unlocked is gone); say so now.
                if let status = try? AgentAccess.lock(vaultIDHex: vault.header.vaultIDHex) {
                    Terminal.err("rxvault: \(status.path) was unlocked (agent pid \(status.pid)) and is locked now: 'rxvault unlock' asks for the new passphrase")
                }
            }
        }
    }
}
