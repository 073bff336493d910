import ArgumentParser
import Foundation
import RxAgent
import RxCrypto
import RxVault

extension RxVaultCommand {
    struct Passwd: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "passwd",
            abstract: "Change a passphrase of the vault, or its key-derivation cost.",
            discussion: flowing(
                """
                Changes the passphrase of the key slot the current passphrase opens (slot 1 unless
                it is one added with 'rxvault key add'). Only the wrapping of the vault's root key
                changes; no prescription is rewritten, so this is instant whatever the vault holds.
                Afterwards the old passphrase no longer opens the vault. Backups made earlier still
                need the passphrase they were made with (their age layer and the vault inside them
                are locked with it): keep the old passphrase as long as you keep those backups, or
                make a new backup now.

                --kdf sets the slot's key-derivation cost (Argon2id): interactive, moderate or
                sensitive; to change only the cost, give the same passphrase as the new one.
                'rxvault status' shows each slot's cost.

                Forgotten passphrase: --recovery asks for the recovery code that 'rxvault key add
                --recovery' printed (--recovery-key-file reads it from a file) instead of a
                passphrase, and sets the new passphrase of slot 1.

                It always asks for the current passphrase (or the recovery code), even while the
                vault is unlocked ('rxvault unlock'): whoever changes it must know it. An unlocked
                vault is locked afterwards; unlock it again with the new passphrase.

                Examples:
                  rxvault passwd
                  rxvault passwd --kdf sensitive
                  rxvault passwd --recovery
                  rxvault passwd --recovery-key-file code.txt --new-passphrase-file new.txt
                """))

        @OptionGroup var options: VaultOptions

        @Option(
            help: ArgumentHelp("Read the new passphrase from the first line of this file.", valueName: "file"),
            completion: .file())
        var newPassphraseFile: String?

        @Option(help: "The new key-derivation cost: interactive, moderate or sensitive (default: the slot's own).")
        var kdf: PasswordKDF.Preset?

        @Flag(help: "Open the vault with its recovery code (asked for) instead of a passphrase.")
        var recovery = false

        @Option(
            help: ArgumentHelp("Open the vault with the recovery code in this file.", valueName: "file"),
            completion: .file())
        var recoveryKeyFile: String?

        func validate() throws {
            if recovery && recoveryKeyFile != nil {
                throw ValidationError("give --recovery or --recovery-key-file, not both")
            }
        }

        func run() throws {
            try CommandRunner.run {
                let vault: Vault
                if recovery || recoveryKeyFile != nil {
                    try options.requireOwner("passwd")
                    let path = options.vaultPath
                    _ = try options.readHeader(at: path)
                    let code = try RecoveryCodeSource.read(file: recoveryKeyFile, options: options, label: path)
                    vault = try options.openVault(with: .recoveryCode(code))
                    Terminal.err(
                        "rxvault: the recovery code of key slot \(vault.openedSlot ?? 0) opened the vault: choose the new passphrase of slot 1"
                    )
                } else {
                    vault = try options.openVault(command: "passwd", agent: false)
                }
                let agent = KeyChangeAgent(vault: vault, path: options.vaultPath)
                let newPassphrase = try PassphraseSource.new(
                    file: newPassphraseFile, options: options, prompt: "New passphrase: ")
                if newPassphrase.count < 10 {
                    Terminal.warning("the new passphrase is short (\(newPassphrase.count) bytes)")
                }
                let slot = try vault.changePassphrase(to: newPassphrase, kdf: kdf.map(PasswordKDF.init(preset:)))
                warnIfNotPurged(vault)
                let cost = vault.header.slots.first { $0.id == slot }?.kdf
                Terminal.out(
                    "passphrase changed (key slot \(slot), \(cost?.preset?.rawValue ?? "custom") key-derivation cost)")
                Terminal.err(
                    "rxvault: note: backups made before now still need the old passphrase (to open and to restore); "
                        + "keep it while you keep them, or make a new backup now ('rxvault backup DIR')")
                // Its agent would refuse from now on anyway (the key wrapping it unlocked is gone,
                // and it locks when it sees that): lock it now and say so.
                agent.lockAfterChange()
            }
        }
    }
}
