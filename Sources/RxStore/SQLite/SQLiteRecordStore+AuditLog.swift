/// `AuditLogStore`: `audit_entry` and the one `audit_head` row.
extension SQLiteRecordStore {
    private static let entryColumns = AuditEntryRecord.columnList

    public func auditEntries() throws(StoreError) -> [AuditEntryRecord] {
        try statement("SELECT \(Self.entryColumns) FROM audit_entry ORDER BY seq").records()
    }

    public func auditEntries(after sequence: Int) throws(StoreError) -> [AuditEntryRecord] {
        try statement("SELECT \(Self.entryColumns) FROM audit_entry WHERE seq > ? ORDER BY seq")
            .records([.integer(Int64(sequence))])
    }

    public func auditEntry(_ sequence: Int) throws(StoreError) -> AuditEntryRecord? {
        try statement("SELECT \(Self.entryColumns) FROM audit_entry WHERE seq = ?").record([.integer(Int64(sequence))])
    }

    public func auditEntryHash(_ sequence: Int) throws(StoreError) -> [UInt8]? {
        try statement("SELECT seq, hash FROM audit_entry WHERE seq = ?").first([.integer(Int64(sequence))]) {
            row throws(StoreError) in
            try row.row(of: "audit_entry").blob(1, count: 32)
        }
    }

    public func lastAuditEntry() throws(StoreError) -> AuditEntryRecord? {
        try statement("SELECT \(Self.entryColumns) FROM audit_entry ORDER BY seq DESC LIMIT 1").record()
    }

    public func append(_ entry: AuditEntryRecord) throws(StoreError) {
        try insertRow(entry)
    }

    public func setAuditMAC(sequence: Int, mac: [UInt8]) throws(StoreError) {
        try statement("UPDATE audit_entry SET mac = ? WHERE seq = ?").run([.blob(mac), .integer(Int64(sequence))])
    }

    public func auditHead() throws(StoreError) -> (sequence: Int, hash: [UInt8], mac: [UInt8])? {
        try statement("SELECT seq, hash, mac FROM audit_head WHERE singleton = 1").first { s throws(StoreError) in
            try s.row(of: "audit_head", keyColumns: 0).auditHead()
        }
    }

    public func setAuditHead(sequence: Int, hash: [UInt8], mac: [UInt8]) throws(StoreError) {
        try statement(
            """
            INSERT INTO audit_head (singleton, seq, hash, mac) VALUES (1, ?, ?, ?)
            ON CONFLICT (singleton) DO UPDATE SET seq = excluded.seq, hash = excluded.hash, mac = excluded.mac
            """
        ).run([.integer(Int64(sequence)), .blob(hash), .blob(mac)])
    }
}
