import RxCrypto
import RxVault

/// What opens the vault inside a backup: the vault's passphrase as it was the day the backup was
/// made, or a recovery code the vault had then. The backup holds the vault still encrypted, with
/// all its key slots, so either opens it; only the passphrase can also open a default backup's
/// age layer (RecoveryCodeOptions.passphraseLayerRefusal).
enum BackupVaultKey {
    case passphrase(SecretBytes)
    case recoveryCode(RecoveryCode)

    /// The passphrase that may open an age scrypt stanza too.
    var passphrase: SecretBytes? {
        if case .passphrase(let passphrase) = self { return passphrase } else { return nil }
    }

    /// The passphrase asked for as the one of `label`, or the recovery code when one is given.
    static func read(_ recovery: RecoveryCodeOptions, options: VaultOptions, label: String) throws -> BackupVaultKey {
        if let code = try recovery.read(options: options, label: label) { return .recoveryCode(code) }
        return .passphrase(try PassphraseSource.existing(options, for: label))
    }

    /// Opens and checks the decrypted vault at `path` (BackupFile.verify).
    func verify(path: String) throws(VaultError) -> BackupFile.Verification {
        switch self {
        case .passphrase(let passphrase): return try BackupFile.verify(path: path, passphrase: passphrase)
        case .recoveryCode(let code): return try BackupFile.verify(path: path, recoveryCode: code)
        }
    }

    /// Opens the restored vault at `path`, with the rollback anchor.
    func open(at path: String, anchor: RollbackAnchor?) throws(VaultError) -> Vault {
        switch self {
        case .passphrase(let passphrase): return try Vault.open(at: path, passphrase: passphrase, anchor: anchor)
        case .recoveryCode(let code): return try Vault.open(at: path, recoveryCode: code, anchor: anchor)
        }
    }
}
