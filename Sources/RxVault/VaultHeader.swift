import RxCrypto
import RxStore
import RxValidate

/// What anyone can read from a vault file without the passphrase (`rxvault status`).
public struct VaultHeader: Sendable {
    /// The on-disk format version (docs/format.md).
    public static let currentFormatVersion = 8
    /// The newest format that changed how the root key is wrapped (key slots, format 4).
    static let newestKeyFormat = 4
    public static let vaultIDLength = 16
    /// The Argon2id costs a header may ask for: every preset (`init --kdf`) with room to spare
    /// (sensitive is ops 4, 1 GiB), and nothing that would take minutes or more than 4 GiB.
    static let acceptedOpsLimits: ClosedRange<UInt64> = 1...16
    static let acceptedMemLimits: ClosedRange<UInt64> = (8 << 10)...(4 << 30)

    public let formatVersion: Int
    public let vaultID: [UInt8]
    public let kdf: PasswordKDF
    public let kdfAlgorithm: String
    /// Largest attachment this vault accepts, in bytes.
    public let maxAttachmentBytes: Int
    /// What clients seal their audit entries to.
    public let auditPublicKey: [UInt8]
    /// Every way in (format 4): slot 1 is the header's own passphrase (absent once removed), the
    /// others are `key_slot` rows. Before format 4, slot 1 alone. Read without a key, so not
    /// trusted until the owner's key ring verifies them (`Vault.verifyKeyRing`).
    public let slots: [KeySlot]
    let record: VaultHeaderRecord

    init(_ record: VaultHeaderRecord, slots slotRecords: [KeySlotRecord] = []) throws(VaultError) {
        guard record.formatVersion <= Self.currentFormatVersion else {
            throw .unsupportedVersion(
                "the vault was made by a newer rxvault: it has format version \(record.formatVersion), and this rxvault reads up to \(Self.currentFormatVersion); install a newer rxvault"
            )
        }
        guard record.formatVersion >= 1, record.vaultID.count == Self.vaultIDLength,
            record.kdfAlgorithm == PasswordKDF.algorithmName, record.kdfSalt.count == PasswordKDF.saltLength,
            record.wrappedRootKey.count == KeySlot.wrappedLength
                || (record.formatVersion >= 4 && record.wrappedRootKey.isEmpty)
        else {
            throw .integrity("the vault header is malformed")
        }
        // The KDF parameters are authenticated (the root key's associated data), but only after
        // the derivation they ask for has run: bound them first, so a hostile header cannot make
        // every command allocate gigabytes or spin for hours before the forgery shows.
        let kdf = PasswordKDF(opsLimit: record.kdfOpsLimit, memLimit: record.kdfMemLimit)
        guard kdf.isWithinLibraryLimits, Self.acceptedOpsLimits.contains(kdf.opsLimit),
            Self.acceptedMemLimits.contains(kdf.memLimit)
        else {
            throw .integrity(
                "the vault header has KDF parameters rxvault never writes (ops \(record.kdfOpsLimit), memory \(record.kdfMemLimit) bytes)"
            )
        }
        // Read before any key: refuse what rxvault never writes. From format 4 the owner's key ring
        // authenticates it (an edit fails every owner command and `check`); before, nothing did.
        guard ValidationLimits.maxBytesRange.contains(record.maxAttachmentBytes) else {
            throw .integrity(
                "the vault header's attachment size limit (\(record.maxAttachmentBytes) bytes) is outside what rxvault writes"
            )
        }
        var slots: [KeySlot] = []
        if !record.wrappedRootKey.isEmpty {
            slots.append(
                KeySlot(
                    id: 1, kind: .passphrase, algorithm: record.kdfAlgorithm, kdf: kdf, salt: record.kdfSalt,
                    wrappedRootKey: record.wrappedRootKey, info: []))
        }
        for row in slotRecords {
            slots.append(try KeySlot(row, after: slots.last?.id ?? 1))
        }
        self.slots = slots
        self.record = record
        self.formatVersion = record.formatVersion
        self.vaultID = record.vaultID
        self.kdf = kdf
        self.kdfAlgorithm = record.kdfAlgorithm
        self.maxAttachmentBytes = record.maxAttachmentBytes
        self.auditPublicKey = record.auditPublicKey
    }

    public var vaultIDHex: String { vaultID.map { String($0, radix: 16).padding(2) }.joined() }

    /// The format number a wrapped root key binds: the vault's format up to 4, then 4. Format 5
    /// changed nothing about key wrapping, and binding it would have made every slot but the one
    /// that opened unreadable after an upgrade (a recovery code's slot cannot be wrapped again
    /// without the code). The header's format is bound instead by the state root's schema, which
    /// the owner MACs (`VaultState.schema(forFormat:)`): an edited format fails at the first read.
    static func keyFormat(_ formatVersion: Int) -> Int { min(formatVersion, newestKeyFormat) }

    /// Whether a vault in this format opens with its root key alone (the agent's, or a copy's):
    /// the steps left to the current format re-wrap no key (format 4 on).
    public var upgradesWithoutPassphrase: Bool { formatVersion >= Self.newestKeyFormat }

    /// Associated data of the wrapped root key: every header field that decides how the key is
    /// derived, so a header edited to weaker KDF parameters (or another vault's id) fails to open.
    static func rootKeyAssociatedData(formatVersion: Int, vaultID: [UInt8], kdf: PasswordKDF, salt: [UInt8]) -> [UInt8]
    {
        AssociatedData.build(
            .rootKey,
            [
                .int(keyFormat(formatVersion)), .bytes(vaultID), .text(PasswordKDF.algorithmName),
                .integer(kdf.opsLimit), .integer(kdf.memLimit), .bytes(salt)
            ])
    }

    var rootKeyAssociatedData: [UInt8] {
        Self.rootKeyAssociatedData(formatVersion: formatVersion, vaultID: vaultID, kdf: kdf, salt: record.kdfSalt)
    }

    /// A digest of everything that decides which passphrase opens the vault: the format, vault
    /// id, KDF algorithm, costs and salt, and the wrapped root key of every key slot. It changes
    /// when a passphrase changes (`passwd`), a slot is added or removed (`key add`, `key
    /// remove`), the vault is upgraded to format 4 or earlier (not to 5, which wraps no key
    /// anew), or another vault is put at the path, and not when
    /// prescriptions are written. The agent compares it (docs/format.md, DESIGN.md "Agent").
    public var keyWrappingDigest: [UInt8] {
        let hash = SHA256()
        hash.update(rootKeyAssociatedData)
        hash.update(record.wrappedRootKey)
        for slot in slots where slot.id > 1 {
            hash.update(associatedData(of: slot))
            hash.update(slot.wrappedRootKey)
        }
        return hash.finalBytes()
    }

    /// The ways in, with what their wrapped root keys are bound to.
    var slotSet: KeySlotSet { KeySlotSet(formatVersion: formatVersion, vaultID: vaultID, slots: slots) }

    /// The associated data of a slot's wrapped root key (`KeySlotSet.associatedData(of:)`).
    func associatedData(of slot: KeySlot) -> [UInt8] { slotSet.associatedData(of: slot) }

    /// Derives the key-encryption key from `passphrase` and unwraps the root key (`unlock` hands
    /// it to the agent; `Vault.open(at:with: .rootKey)` opens with it). Any passphrase slot opens it.
    public func unwrapRootKey(passphrase: SecretBytes) throws(VaultError) -> SecretBytes {
        try unwrapRootKeyAndKEK(passphrase: passphrase).rootKey
    }

    /// The root key, the key-encryption key it was unwrapped with (the upgrade from an older
    /// format re-wraps the root key) and the slot that opened (`KeySlotSet`).
    func unwrapRootKeyAndKEK(passphrase: SecretBytes) throws(VaultError) -> (
        rootKey: SecretBytes, kek: SecretBytes, slot: Int
    ) {
        try slotSet.unwrapRootKeyAndKEK(passphrase: passphrase)
    }

    /// Unwraps the root key with a recovery code; returns it and the slot that opened.
    public func unwrapRootKey(recoveryCode: RecoveryCode) throws(VaultError) -> (rootKey: SecretBytes, slot: Int) {
        try slotSet.unwrapRootKey(recoveryCode: recoveryCode)
    }

    /// Reads the header of the vault at `path` (no passphrase needed).
    public static func read(at path: String) throws(VaultError) -> VaultHeader {
        do {
            let store = try engine(at: path, busyTimeoutMilliseconds: Database.defaultBusyTimeoutMilliseconds)
            return try VaultHeader(store.header(), slots: store.keySlots())
        } catch let error as StoreError {
            throw VaultError.from(error)
        } catch {
            throw VaultError.wrap(error)
        }
    }
}

extension VaultHeader {
    /// Opens the store at `path` and reads its header: the first step of every way into a vault
    /// (owner and client), so both report a missing file, a non-vault or a busy one alike.
    /// Everything after works on `RecordStore`.
    static func openStore(at path: String, busyTimeoutMilliseconds: Int32) throws(VaultError) -> (
        any RecordStore, VaultHeader
    ) {
        do {
            let store = try engine(at: path, busyTimeoutMilliseconds: busyTimeoutMilliseconds)
            let header = try VaultHeader(store.header(), slots: store.keySlots())
            // The header's format is authenticated (in the root key's associated data up to format
            // 4, by the root's schema byte from 5: `VaultHeader.keyFormat`); the schema version
            // is not, and says which tables to read: they must agree.
            let schema = try store.schemaVersion()
            guard schema == header.formatVersion else {
                throw VaultError.integrity(
                    "the vault's schema version (\(schema)) is not its format version (\(header.formatVersion)): the file was altered"
                )
            }
            return (store, header)
        } catch {
            throw VaultError.wrap(error)
        }
    }

    /// Opens the storage engine at a vault's location (every reader goes through here; making
    /// one is `Vault.create`'s).
    static func engine(at path: String, busyTimeoutMilliseconds: Int32) throws -> any RecordStore {
        try VaultLocation.openStore(at: path, busyTimeoutMilliseconds: busyTimeoutMilliseconds)
    }
}
