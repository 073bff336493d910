import ArgumentParser
import RxAgent
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
                // The agent of this file, if it is unlocked (one holding another copy of the vault stays).
                let file = VaultFileIdentity.fileNumbers(options.vaultPath)
                let agent = (try? AgentAccess.status(vaultIDHex: vault.header.vaultIDHex)).flatMap { $0 }
                    .flatMap { status in file.map { $0 == (status.file.device, status.file.inode) } == true ? status : nil }
                let newPassphrase = try PassphraseSource.new(file: newPassphraseFile, options: options, prompt: "New passphrase: ")
                if newPassphrase.count < 10 {
                    Terminal.warning("the new passphrase is short (\(newPassphrase.count) bytes)")
                }
                try vault.changePassphrase(to: newPassphrase)
                warnIfNotPurged(vault)
                Terminal.out("passphrase changed")
                Terminal.err("rxvault: note: backups made before now still need the old passphrase (to open and to restore); "
                             + "keep it while you keep them, or make a new backup now ('rxvault backup DIR')")
                // Its agent would refuse from now on anyway (the key wrapping it unlocked is gone,
                // and it locks when it sees that): lock it now and say so.
                if let agent {
                    _ = try? AgentAccess.lock(vaultIDHex: vault.header.vaultIDHex)
                    Terminal.err("rxvault: \(agent.path) was unlocked (agent pid \(agent.pid)) and is locked now: 'rxvault unlock' asks for the new passphrase")
                }
            }
        }
    }
}
