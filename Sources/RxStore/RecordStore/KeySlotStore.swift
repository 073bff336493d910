/// The ways into the vault besides the header's passphrase (`key_slot`), and the owner's
/// commitment to them (`key_ring`, one row). Format 4; before it there are none.
public protocol KeySlotStore: AnyObject {
    /// The key slots besides the header's, by id; empty before format 4.
    func keySlots() throws(StoreError) -> [KeySlotRecord]
    /// Inserts or replaces the slot with the same id.
    func upsert(_ slot: KeySlotRecord) throws(StoreError)
    func deleteKeySlot(_ id: Int) throws(StoreError)
    /// The key ring row, nil when there is none (or before format 4).
    func keyRing() throws(StoreError) -> KeyRingRecord?
    func setKeyRing(_ ring: KeyRingRecord) throws(StoreError)
}

/// A way into the vault besides the header's passphrase (format 4, `key_slot`): the root key
/// wrapped under a key derived from another passphrase or from a recovery code. The KDF fields
/// say how that key is derived; all of them are in the wrapped key's associated data.
public struct KeySlotRecord: Sendable, Equatable {
    /// 2...8 (slot 1 is the header's passphrase).
    public var id: Int
    /// "passphrase" or "recovery".
    public var kind: String
    public var kdfAlgorithm: String
    public var kdfOpsLimit: UInt64
    public var kdfMemLimit: UInt64
    public var kdfSalt: [UInt8]
    public var wrappedRootKey: [UInt8]
    /// The owner's sealed label and creation time.
    public var info: [UInt8]

    public init(
        id: Int, kind: String, kdfAlgorithm: String, kdfOpsLimit: UInt64, kdfMemLimit: UInt64,
        kdfSalt: [UInt8], wrappedRootKey: [UInt8], info: [UInt8]
    ) {
        self.id = id
        self.kind = kind
        self.kdfAlgorithm = kdfAlgorithm
        self.kdfOpsLimit = kdfOpsLimit
        self.kdfMemLimit = kdfMemLimit
        self.kdfSalt = kdfSalt
        self.wrappedRootKey = wrappedRootKey
        self.info = info
    }
}

/// The owner's commitment to the key slots and the header's settings (format 4, `key_ring`):
/// `content` lists what the owner wrote, `mac` binds it to the state root's write counter.
public struct KeyRingRecord: Sendable, Equatable {
    public var writeCounter: Int
    public var content: [UInt8]
    public var mac: [UInt8]

    public init(writeCounter: Int, content: [UInt8], mac: [UInt8]) {
        self.writeCounter = writeCounter
        self.content = content
        self.mac = mac
    }
}
