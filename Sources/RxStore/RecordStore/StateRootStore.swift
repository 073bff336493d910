/// The owner's state root (`vault_state`, one row) and the manifest it covers (`manifest`, 256
/// buckets): format 2 on. RxVault encodes and MACs both; the store only keeps them.
public protocol StateRootStore: AnyObject {
    /// The state root row, nil when there is none (or before format 2).
    func vaultState() throws(StoreError) -> VaultStateRecord?
    /// The state root's counter and MAC alone: what a server compares on every request, so it
    /// must be cheap and must not hold a read snapshot open after it returns.
    func vaultStateStamp() throws(StoreError) -> (counter: Int, mac: [UInt8])?
    func setVaultState(_ state: VaultStateRecord) throws(StoreError)
    /// Every stored manifest bucket, by number (none before format 2).
    func manifestBuckets() throws(StoreError) -> [(Int, [UInt8])]
    func manifestBucket(_ bucket: Int) throws(StoreError) -> [UInt8]?
    /// Stores a manifest bucket; `nil` deletes it (no prescription left in it).
    func setManifestBucket(_ bucket: Int, to content: [UInt8]?) throws(StoreError)
}

/// The owner's state root (format 2): the write counter and the committed state, MAC'd by the
/// owner (RxVault encodes `state` and checks `mac`; the store only keeps them).
public struct VaultStateRecord: Sendable, Equatable {
    public var writeCounter: Int
    public var state: [UInt8]
    public var mac: [UInt8]

    public init(writeCounter: Int, state: [UInt8], mac: [UInt8]) {
        self.writeCounter = writeCounter
        self.state = state
        self.mac = mac
    }
}
