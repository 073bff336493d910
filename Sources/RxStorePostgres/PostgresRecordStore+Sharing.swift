import RxStore

/// `ClientStore`, `GrantStore` and `AuditLogStore`: `client`, `access_grant`, `audit_entry` and
/// the one `audit_head` row.
extension PostgresRecordStore {
    private static func clientRecord(_ row: PostgresStoredRow) throws(StoreError) -> ClientRecord {
        ClientRecord(id: try row.id(0), lookup: try row.blob(1, count: 32), info: try row.blob(2), mac: try row.blob(3))
    }

    public func clients() throws(StoreError) -> [ClientRecord] {
        try rows("SELECT id, lookup, info, mac FROM client ORDER BY position", table: "client", Self.clientRecord)
    }

    public func client(withLookup key: [UInt8]) throws(StoreError) -> ClientRecord? {
        try first(
            "SELECT id, lookup, info, mac FROM client WHERE lookup = $1", [.bytes(key)], table: "client",
            Self.clientRecord)
    }

    public func insert(_ client: ClientRecord) throws(StoreError) {
        try session.query(
            "INSERT INTO client (id, lookup, info, mac) VALUES ($1, $2, $3, $4)",
            [.text(client.id.hex), .bytes(client.lookup), .bytes(client.info), .bytes(client.mac)])
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
            "SELECT id, client_id, reference, sealed_keys, info, mac FROM access_grant WHERE ($1::text IS NULL OR client_id = $1)"
        if let references {
            let placeholders = references.indices.map { "$\($0 + 2)" }.joined(separator: ", ")
            sql += " AND reference IN (\(placeholders))"
            values += references.map { .text($0) }
        }
        return try rows(sql + " ORDER BY position", values, table: "access_grant") { row throws(StoreError) in
            GrantRecord(
                id: try row.id(0), clientID: try row.id(1), reference: try row.hexDigits(2),
                sealedKeys: try row.blob(3), info: try row.blob(4), mac: try row.blob(5))
        }
    }

    public func upsert(_ grant: GrantRecord) throws(StoreError) {
        try session.query(
            """
            INSERT INTO access_grant (id, client_id, reference, sealed_keys, info, mac) VALUES ($1, $2, $3, $4, $5, $6)
            ON CONFLICT (reference) DO UPDATE SET
                id = excluded.id, client_id = excluded.client_id, sealed_keys = excluded.sealed_keys,
                info = excluded.info, mac = excluded.mac
            """,
            [
                .text(grant.id.hex), .text(grant.clientID.hex), .text(grant.reference), .bytes(grant.sealedKeys),
                .bytes(grant.info), .bytes(grant.mac)
            ])
    }

    public func deleteGrant(_ id: GrantID) throws(StoreError) {
        try session.query("DELETE FROM access_grant WHERE id = $1", [.text(id.hex)])
    }

    // MARK: - Audit log

    private static func auditRecord(_ row: PostgresStoredRow) throws(StoreError) -> AuditEntryRecord {
        AuditEntryRecord(
            sequence: try row.integer(0, in: StoredRange.auditEntry), entry: try row.blob(1),
            hash: try row.blob(2, count: 32), mac: try row.optionalBlob(3))
    }

    public func auditEntries() throws(StoreError) -> [AuditEntryRecord] {
        try rows("SELECT seq, entry, hash, mac FROM audit_entry ORDER BY seq", table: "audit_entry", Self.auditRecord)
    }

    public func auditEntries(after sequence: Int) throws(StoreError) -> [AuditEntryRecord] {
        try rows(
            "SELECT seq, entry, hash, mac FROM audit_entry WHERE seq > $1 ORDER BY seq", [.integer(Int64(sequence))],
            table: "audit_entry", Self.auditRecord)
    }

    public func auditEntry(_ sequence: Int) throws(StoreError) -> AuditEntryRecord? {
        try first(
            "SELECT seq, entry, hash, mac FROM audit_entry WHERE seq = $1", [.integer(Int64(sequence))],
            table: "audit_entry", Self.auditRecord)
    }

    public func auditEntryHash(_ sequence: Int) throws(StoreError) -> [UInt8]? {
        try first(
            "SELECT seq, hash FROM audit_entry WHERE seq = $1", [.integer(Int64(sequence))], table: "audit_entry"
        ) { row throws(StoreError) in try row.blob(1, count: 32) }
    }

    public func lastAuditEntry() throws(StoreError) -> AuditEntryRecord? {
        try first(
            "SELECT seq, entry, hash, mac FROM audit_entry ORDER BY seq DESC LIMIT 1", table: "audit_entry",
            Self.auditRecord)
    }

    public func append(_ entry: AuditEntryRecord) throws(StoreError) {
        try session.query(
            "INSERT INTO audit_entry (seq, entry, hash, mac) VALUES ($1, $2, $3, $4)",
            [
                .integer(Int64(entry.sequence)), .bytes(entry.entry), .bytes(entry.hash),
                entry.mac.map { .bytes($0) } ?? .null
            ])
    }

    public func setAuditMAC(sequence: Int, mac: [UInt8]) throws(StoreError) {
        try session.query("UPDATE audit_entry SET mac = $1 WHERE seq = $2", [.bytes(mac), .integer(Int64(sequence))])
    }

    public func auditHead() throws(StoreError) -> (sequence: Int, hash: [UInt8], mac: [UInt8])? {
        try first("SELECT seq, hash, mac FROM audit_head WHERE singleton = 1", table: "audit_head", keyColumns: 0) {
            row throws(StoreError) in
            (try row.integer(0, in: StoredRange.counter), try row.blob(1, count: 32), try row.blob(2))
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
