import RxCrypto

/// A vault's ways in as a whole: its key slots (slot 1 alone before format 4) with the format and
/// vault id their wrapped root keys are bound to, and what unwraps the root key from a passphrase
/// or a recovery code. The vault header holds one (`VaultHeader.slotSet`), and so does a backup's
/// age header (`BackupWaysIn`): a backup then opens with what opens the vault, once the vault
/// file is lost, at the same cost to a guesser.
struct KeySlotSet: Sendable {
    let formatVersion: Int
    let vaultID: [UInt8]
    let slots: [KeySlot]

    /// The associated data of a slot's wrapped root key: slot 1 keeps the header's (format 1 to
    /// 3 had only it); the others bind purpose, format, vault, slot id, kind and derivation.
    func associatedData(of slot: KeySlot) -> [UInt8] {
        if slot.id == 1, let kdf = slot.kdf {
            return VaultHeader.rootKeyAssociatedData(
                formatVersion: formatVersion, vaultID: vaultID, kdf: kdf, salt: slot.salt)
        }
        return KeySlot.associatedData(
            formatVersion: formatVersion, vaultID: vaultID, id: slot.id, kind: slot.kind, algorithm: slot.algorithm,
            opsLimit: slot.kdf?.opsLimit ?? 0, memLimit: slot.kdf?.memLimit ?? 0, salt: slot.salt)
    }

    /// The root key, the key-encryption key it was unwrapped with and the slot that opened.
    /// Every passphrase slot is tried in turn, slot 1 first, as LUKS does: a wrong passphrase
    /// costs one derivation per slot.
    func unwrapRootKeyAndKEK(passphrase: SecretBytes) throws(VaultError) -> (
        rootKey: SecretBytes, kek: SecretBytes, slot: Int
    ) {
        for slot in slots where slot.kind == .passphrase {
            guard let kdf = slot.kdf else { continue }
            let kek: SecretBytes
            do { kek = try kdf.deriveKey(passphrase: passphrase, salt: slot.salt) } catch {
                throw .internalError(error.description)
            }
            if let rootKey = try? AEAD.open(slot.wrappedRootKey, key: kek, associatedData: associatedData(of: slot)) {
                return (rootKey, kek, slot.id)
            }
        }
        throw .wrongPassphrase(recoverySlot: slots.contains { $0.kind == .recovery })
    }

    /// Unwraps the root key with a recovery code; returns it and the slot that opened.
    func unwrapRootKey(recoveryCode: RecoveryCode) throws(VaultError) -> (rootKey: SecretBytes, slot: Int) {
        let recovery = slots.filter { $0.kind == .recovery }
        guard !recovery.isEmpty else {
            throw .wrongRecoveryCode(
                "this vault has no recovery key"
                    + (formatVersion < 4 ? " (it is in format \(formatVersion); recovery keys came with format 4)" : "")
            )
        }
        for slot in recovery {
            let kek: SecretBytes
            do {
                kek = try RecoveryKDF.deriveKey(
                    secret: recoveryCode.secret,
                    context: KeySlot.recoveryContext(vaultID: vaultID, id: slot.id, salt: slot.salt))
            } catch {
                throw .internalError(error.description)
            }
            if let rootKey = try? AEAD.open(slot.wrappedRootKey, key: kek, associatedData: associatedData(of: slot)) {
                return (rootKey, slot.id)
            }
        }
        throw .wrongRecoveryCode(
            "the recovery code does not open this vault (it is another vault's, or its slot was removed)")
    }
}
