import RxCrypto

/// What opens a vault (`Vault.open(at:with:)`): a secret its owner holds, or the root key itself.
public enum VaultKey: Sendable {
    /// A passphrase of one of its key slots.
    case passphrase(SecretBytes)
    /// A recovery code (format 4): what opens the vault when the passphrase is forgotten. A vault
    /// in an older format has no recovery slot.
    case recoveryCode(RecoveryCode)
    /// The root key, as the agent hands it (`rxvault unlock`), so no passphrase and no Argon2id
    /// run are needed. It is proved right by the header's audit public key, which it must derive
    /// (a wrong key is an integrity error: the header cannot then be this vault's). Only a vault in
    /// format 4 or later opens this way: upgrading an older one re-wraps the root key, which needs
    /// the passphrase's key; the step from 4 to 5 wraps nothing (`VaultHeader.keyFormat`).
    case rootKey(SecretBytes)

    /// The passphrase, when this is one (it may open an age scrypt stanza too).
    public var passphrase: SecretBytes? {
        if case .passphrase(let passphrase) = self { return passphrase } else { return nil }
    }

    /// What opening with a key yields for one header: the root key, the passphrase's key while the
    /// vault is in an older format (an upgrade re-wraps the root key with it), and the key slot
    /// that opened it (nil: the root key was given).
    struct Unlocked {
        let rootKey: SecretBytes
        let upgradeKEK: SecretBytes?
        let slot: Int?
    }

    func unlock(_ header: VaultHeader) throws(VaultError) -> Unlocked {
        switch self {
        case .passphrase(let passphrase):
            let (rootKey, kek, slot) = try header.unwrapRootKeyAndKEK(passphrase: passphrase)
            return Unlocked(
                // Kept only for an upgrade that wraps the root key again (to format 4 or earlier).
                rootKey: rootKey, upgradeKEK: header.upgradesWithoutPassphrase ? nil : kek,
                slot: slot)
        case .recoveryCode(let code):
            let (rootKey, slot) = try header.unwrapRootKey(recoveryCode: code)
            return Unlocked(rootKey: rootKey, upgradeKEK: nil, slot: slot)
        case .rootKey(let rootKey):
            // From format 4 the steps to the current format re-wrap no key: the first owner
            // write upgrades without the passphrase.
            guard header.upgradesWithoutPassphrase else {
                throw .invalidInput(
                    "the vault is in format \(header.formatVersion) and opens with its root key only from format \(VaultHeader.newestKeyFormat): run 'rxvault upgrade' (it asks for the passphrase)"
                )
            }
            return Unlocked(rootKey: rootKey, upgradeKEK: nil, slot: nil)
        }
    }
}
