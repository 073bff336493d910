/// What each client may read (`access_grant`): one grant per client and prescription, found by
/// its reference.
public protocol GrantStore: AnyObject {
    /// Grants in the order they were stored, optionally only one client's, or only those with one
    /// of `references` (format 1 and 2: prescription ids; format 3: grant references).
    func grants(clientID: ClientID?, references: [String]?) throws(StoreError) -> [GrantRecord]
    /// Inserts or replaces the grant with the same reference (one per client and prescription).
    func upsert(_ grant: GrantRecord) throws(StoreError)
    func deleteGrant(_ id: GrantID) throws(StoreError)
}

/// A grant: the keys a client may use (sealed to its public key), the owner's sealed view of
/// the grant (dates, scope; from format 3 also its prescription) and a MAC over the whole row
/// under the grant sub-key.
public struct GrantRecord: Sendable, Equatable {
    public var id: GrantID
    public var clientID: ClientID
    /// 32 lower-case hex digits. Format 1 and 2: the prescription id. Format 3: the grant's
    /// reference, a keyed hash of its client and prescription that only the owner can compute.
    public var reference: String
    public var sealedKeys: [UInt8]
    public var info: [UInt8]
    public var mac: [UInt8]

    public init(id: GrantID, clientID: ClientID, reference: String, sealedKeys: [UInt8], info: [UInt8], mac: [UInt8]) {
        self.id = id
        self.clientID = clientID
        self.reference = reference
        self.sealedKeys = sealedKeys
        self.info = info
        self.mac = mac
    }
}
