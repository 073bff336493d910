import RxStore

/// `ClientStore`, `GrantStore` and `AuditLogStore`: `client`, `access_grant`, `audit_entry` and
/// the one `audit_head` row.
extension PostgresRecordStore {
    public func clients() throws(StoreError) -> [ClientRecord] {
        try records("SELECT \(ClientRecord.columnList) FROM client ORDER BY position")
    }

    public func client(withLookup key: [UInt8]) throws(StoreError) -> ClientRecord? {
        try record("SELECT \(ClientRecord.columnList) FROM client WHERE lookup = $1", [.bytes(key)])
    }

    public func insert(_ client: ClientRecord) throws(StoreError) {
        try insertRow(client)
    }

    public func deleteClient(_ id: ClientID) throws(StoreError) {
        // Its grants go with it (ON DELETE CASCADE).
        try session.query("DELETE FROM client WHERE id = $1", [.text(id.hex)])
    }

    // MARK: - Grants

    public func grants(clientID: ClientID?, references: [String]?) throws(StoreError) -> [GrantRecord] {
        if let references, references.isEmpty { return [] }
        var values: [BoundValue] = [clientID.map { .text($0.hex) } ?? .null]
        var sql =
            "SELECT \(GrantRecord.columnList) FROM access_grant WHERE ($1::text IS NULL OR client_id = $1)"
        if let references {
            let placeholders = references.indices.map { "$\($0 + 2)" }.joined(separator: ", ")
            sql += " AND reference IN (\(placeholders))"
            values += references.map { .text($0) }
        }
        return try records(sql + " ORDER BY position", values)
    }

    public func upsert(_ grant: GrantRecord) throws(StoreError) {
        try insertRow(
            grant,
            then: """
                 ON CONFLICT (reference) DO UPDATE SET
                    id = excluded.id, client_id = excluded.client_id, sealed_keys = excluded.sealed_keys,
                    info = excluded.info, mac = excluded.mac
                """)
    }

    public func deleteGrant(_ id: GrantID) throws(StoreError) {
        try session.query("DELETE FROM access_grant WHERE id = $1", [.text(id.hex)])
    }

    // MARK: - Audit log

    private static let entryColumns = AuditEntryRecord.columnList

    public func auditEntries() throws(StoreError) -> [AuditEntryRecord] {
        try records("SELECT \(Self.entryColumns) FROM audit_entry ORDER BY seq")
    }

    public func auditEntries(after sequence: Int) throws(StoreError) -> [AuditEntryRecord] {
        try records(
            "SELECT \(Self.entryColumns) FROM audit_entry WHERE seq > $1 ORDER BY seq", [.integer(Int64(sequence))])
    }

    public func auditEntry(_ sequence: Int) throws(StoreError) -> AuditEntryRecord? {
        try record("SELECT \(Self.entryColumns) FROM audit_entry WHERE seq = $1", [.integer(Int64(sequence))])
    }

    public func auditEntryHash(_ sequence: Int) throws(StoreError) -> [UInt8]? {
        try first(
            "SELECT seq, hash FROM audit_entry WHERE seq = $1", [.integer(Int64(sequence))], table: "audit_entry"
        ) { row throws(StoreError) in try row.blob(1, count: 32) }
    }

    public func lastAuditEntry() throws(StoreError) -> AuditEntryRecord? {
        try record("SELECT \(Self.entryColumns) FROM audit_entry ORDER BY seq DESC LIMIT 1")
    }

    public func append(_ entry: AuditEntryRecord) throws(StoreError) {
        try insertRow(entry)
    }

    public func setAuditMAC(sequence: Int, mac: [UInt8]) throws(StoreError) {
        try session.query("UPDATE audit_entry SET mac = $1 WHERE seq = $2", [.bytes(mac), .integer(Int64(sequence))])
    }

    public func auditHead() throws(StoreError) -> (sequence: Int, hash: [UInt8], mac: [UInt8])? {
        try first("SELECT seq, hash, mac FROM audit_head WHERE singleton = 1", table: "audit_head", keyColumns: 0) {
            row throws(StoreError) in try row.auditHead()
        }
    }

    public func setAuditHead(sequence: Int, hash: [UInt8], mac: [UInt8]) throws(StoreError) {
        try session.query(
            """
            INSERT INTO audit_head (singleton, seq, hash, mac) VALUES (1, $1, $2, $3)
            ON CONFLICT (singleton) DO UPDATE SET seq = excluded.seq, hash = excluded.hash, mac = excluded.mac
            """, [.integer(Int64(sequence)), .bytes(hash), .bytes(mac)])
    }
}
