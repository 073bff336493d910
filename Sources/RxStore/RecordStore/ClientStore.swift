/// The client apps the owner added (`client`). Deleting a client deletes its grants.
public protocol ClientStore: AnyObject {
    /// Every client, in the order they were added.
    func clients() throws(StoreError) -> [ClientRecord]
    /// The client whose `lookup` is `key` (format 1 and 2: its public key; format 3: its lookup tag).
    func client(withLookup key: [UInt8]) throws(StoreError) -> ClientRecord?
    /// Adds a client; a `lookup` already stored is refused (`StoreError`).
    func insert(_ client: ClientRecord) throws(StoreError)
    func deleteClient(_ id: ClientID) throws(StoreError)
}

/// A client app: how it is found when it opens the vault with its identity (`lookup`), its
/// owner-only info (name, added, and from format 3 its public key; sealed) and a MAC under the
/// grant sub-key.
public struct ClientRecord: Sendable, Equatable {
    public var id: ClientID
    /// 32 bytes. Format 1 and 2: the client's X25519 public key. Format 3: its lookup tag, which
    /// only the owner and the client can compute (the public key is then inside `info`).
    public var lookup: [UInt8]
    public var info: [UInt8]
    public var mac: [UInt8]

    public init(id: ClientID, lookup: [UInt8], info: [UInt8], mac: [UInt8]) {
        self.id = id
        self.lookup = lookup
        self.info = info
        self.mac = mac
    }
}
