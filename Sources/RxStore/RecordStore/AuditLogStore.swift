/// The audit log (`audit_entry`) and the owner's head of it (`audit_head`, one row). Entries are
/// only appended; the owner countersigns those a client appended (`setAuditMAC`).
public protocol AuditLogStore: AnyObject {
    /// Every entry, by sequence number.
    func auditEntries() throws(StoreError) -> [AuditEntryRecord]
    /// Entries after `sequence` (what clients appended since the owner's last write).
    func auditEntries(after sequence: Int) throws(StoreError) -> [AuditEntryRecord]
    /// One entry, by its sequence number (a reader walking the log back from the head).
    func auditEntry(_ sequence: Int) throws(StoreError) -> AuditEntryRecord?
    /// One entry's stored hash alone (what the entry after it chains on), without its sealed bytes.
    func auditEntryHash(_ sequence: Int) throws(StoreError) -> [UInt8]?
    func lastAuditEntry() throws(StoreError) -> AuditEntryRecord?
    /// Appends an entry; a sequence number already stored is refused (`StoreError`), so two
    /// writers racing for the same number cannot both succeed.
    func append(_ entry: AuditEntryRecord) throws(StoreError)
    func setAuditMAC(sequence: Int, mac: [UInt8]) throws(StoreError)
    /// The last entry the owner saw (sequence 0 and a zero hash before any) and the owner's MAC.
    func auditHead() throws(StoreError) -> (sequence: Int, hash: [UInt8], mac: [UInt8])?
    func setAuditHead(sequence: Int, hash: [UInt8], mac: [UInt8]) throws(StoreError)
}

/// One audit-log entry: sealed to the vault's audit key, chained by hash, MAC'd by the owner
/// (nil until the owner's next write when a client wrote it).
public struct AuditEntryRecord: Sendable, Equatable {
    public var sequence: Int
    public var entry: [UInt8]
    /// 32 bytes.
    public var hash: [UInt8]
    public var mac: [UInt8]?

    public init(sequence: Int, entry: [UInt8], hash: [UInt8], mac: [UInt8]?) {
        self.sequence = sequence
        self.entry = entry
        self.hash = hash
        self.mac = mac
    }
}
