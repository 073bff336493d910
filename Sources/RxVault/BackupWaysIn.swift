import RxCrypto
import RxStore

/// The ways into a backup (docs/format.md, "Backup files"; DESIGN.md, "Backups"): what opens
/// the vault opens its backups, when the vault file is gone. The age header carries, beside any
/// recipients, one `rxvault-slot` stanza per key slot (the slot's salt, costs and wrapped root
/// key, exactly as the vault file holds them) and one `rxvault-rootkey` stanza: the file key
/// wrapped as age wraps it to an X25519 recipient, to the vault's audit public key (its secret
/// is a sub-key of the root key), under a stanza type and HKDF info of its own. A passphrase or a
/// recovery code unwraps the root key from its slot's stanza, as it does from the vault; the
/// root key gives the secret that opens the file key.
///
/// Nothing here needs a secret to write: the slots and the audit public key are in the vault
/// file, so a backup made without the passphrase (a timer) has every way in too. A guesser who
/// holds the backup pays what one holding the vault file pays: the same Argon2id, costs and
/// salt, against the same wrapped root key. A stanza edited (lower costs, another slot id) no
/// longer unwraps (all of it is bound in the wrapped key's associated data), costs outside what
/// rxvault writes are refused before any derivation, and the header MAC, checked once the file
/// key is known, covers every stanza.
public enum BackupWaysIn {
    public static let slotStanzaType = "rxvault-slot"
    /// Also the HKDF info of its wrap key: no other use of the audit key pair derives it.
    public static let rootKeyStanzaType = "rxvault-rootkey"
    static let version = "v1"

    /// One way in, as a backup's header states it.
    public struct Way: Sendable, Equatable, CustomStringConvertible {
        public let slot: Int
        public let kind: KeySlot.Kind

        public var description: String {
            kind == .passphrase ? "passphrase of slot \(slot)" : "recovery code of slot \(slot)"
        }
    }

    /// The stanzas for a vault with this header: one per key slot, then the root key's.
    static func stanzas(for header: VaultHeader) -> [AgeFile.Recipient] {
        let set = header.slotSet
        let slots: [AgeFile.Recipient] = set.slots.map { slot in
            .label(
                type: slotStanzaType,
                arguments: [
                    version, String(VaultHeader.keyFormat(set.formatVersion)), Hex.encode(set.vaultID), String(slot.id),
                    slot.kind.rawValue, slot.algorithm, String(slot.kdf?.opsLimit ?? 0),
                    String(slot.kdf?.memLimit ?? 0), Base64.standard.encode(slot.salt)
                ],
                body: slot.wrappedRootKey)
        }
        return slots + [.typedX25519(type: rootKeyStanzaType, publicKey: header.auditPublicKey)]
    }

    /// The ways in a header states, in slot order; empty for a backup without slot stanzas (one
    /// locked with a passphrase alone, or to recipients alone). Read without a key, so a claim
    /// until the backup opens; a stanza rxvault would not write is an integrity error.
    public static func ways(in stanzas: [AgeFile.StanzaSummary]) throws(VaultError) -> [Way] {
        (try slotSet(in: stanzas)?.slots ?? []).map { Way(slot: $0.id, kind: $0.kind) }
    }

    /// The key slots of a backup's header, checked as the vault file's are; nil when it has none.
    static func slotSet(in stanzas: [AgeFile.StanzaSummary]) throws(VaultError) -> KeySlotSet? {
        let found = stanzas.filter { $0.type == slotStanzaType }
        guard !found.isEmpty else { return nil }
        guard stanzas.filter({ $0.type == rootKeyStanzaType }).count == 1 else {
            throw .integrity("the backup's header has key slots without one \(rootKeyStanzaType) stanza")
        }
        var slots: [KeySlot] = []
        var place: (format: Int, vaultID: [UInt8])?
        for stanza in found {
            let a = stanza.arguments
            guard a.count == 9, a[0] == version, let format = decimal(a[1]),
                (1...VaultHeader.newestKeyFormat).contains(format),
                let vaultID = Hex.decode(a[2]), vaultID.count == VaultHeader.vaultIDLength,
                let id = decimal(a[3]), let ops = decimal(a[6]), let mem = decimal(a[7]),
                let salt = Base64.standard.decode(Array(a[8].utf8))
            else {
                throw .integrity("the backup's header has a malformed \(slotStanzaType) stanza")
            }
            if let place, place.format != format || place.vaultID != vaultID {
                throw .integrity("the backup's key slots name more than one vault")
            }
            place = (format, vaultID)
            // The vault file's own rules: ids in order, known kinds, costs rxvault writes (so an
            // edited cost cannot make a restore run for hours or ask for more than 4 GiB).
            slots.append(
                try KeySlot(
                    KeySlotRecord(
                        id: id, kind: a[4], kdfAlgorithm: a[5], kdfOpsLimit: UInt64(ops), kdfMemLimit: UInt64(mem),
                        kdfSalt: salt, wrappedRootKey: stanza.body, info: []),
                    after: slots.last?.id ?? 0, headerSlot: true))
        }
        guard let place else { return nil }
        return KeySlotSet(formatVersion: place.format, vaultID: place.vaultID, slots: slots)
    }

    /// The age key that opens a backup through its ways in with `key`: the root key is
    /// unwrapped from the slot stanzas (`VaultError.wrongPassphrase` or `.wrongRecoveryCode`
    /// when none opens), then the root key stanza with the audit secret key.
    public static func ageKey(_ key: VaultKey) -> AgeFile.Key {
        .fromHeader { stanzas in try ageKey(key, in: stanzas) }
    }

    /// The same, for a header already read: no match (`.identities([])`) when it has no slots.
    public static func ageKey(_ key: VaultKey, in stanzas: [AgeFile.StanzaSummary]) throws(VaultError)
        -> AgeFile.Key
    {
        guard let set = try slotSet(in: stanzas) else { return .identities([]) }
        let rootKey: SecretBytes
        switch key {
        case .passphrase(let passphrase): rootKey = try set.unwrapRootKeyAndKEK(passphrase: passphrase).rootKey
        case .recoveryCode(let code): rootKey = try set.unwrapRootKey(recoveryCode: code).rootKey
        case .rootKey(let given): rootKey = given
        }
        // Derived here, zeroed with the SecretBytes when the decryption is done with it.
        do {
            return .typedX25519(type: rootKeyStanzaType, secretKey: try Subkey.auditSealing.derive(from: rootKey))
        } catch { throw .internalError(error.description) }
    }

    /// A decimal number as rxvault writes one (digits only, no leading zero, at most 12 digits).
    static func decimal(_ text: String) -> Int? {
        guard !text.isEmpty, text.count <= 12, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
            text == "0" || text.first != "0"
        else { return nil }
        return Int(text)
    }
}
