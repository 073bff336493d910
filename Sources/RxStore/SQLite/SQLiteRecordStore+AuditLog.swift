/// `AuditLogStore`: `audit_entry` and the one `audit_head` row.
extension SQLiteRecordStore {
    private func auditRecord(_ s: Statement) throws(StoreError) -> AuditEntryRecord {
        let row = s.row(of: "audit_entry")
        return AuditEntryRecord(
            sequence: try row.integer(0, in: StoredRange.auditEntry), entry: try row.blob(1),
            hash: try row.blob(2, count: 32), mac: try row.optionalBlob(3))
    }

    public func auditEntries() throws(StoreError) -> [AuditEntryRecord] {
        var records: [AuditEntryRecord] = []
        try statement("SELECT seq, entry, hash, mac FROM audit_entry ORDER BY seq").forEach { row throws(StoreError) in
            records.append(try auditRecord(row))
        }
        return records
    }

    public func auditEntries(after sequence: Int) throws(StoreError) -> [AuditEntryRecord] {
        var records: [AuditEntryRecord] = []
        try statement("SELECT seq, entry, hash, mac FROM audit_entry WHERE seq > ? ORDER BY seq").forEach([
            .integer(Int64(sequence))
        ]) { row throws(StoreError) in
            records.append(try auditRecord(row))
        }
        return records
    }

    public func auditEntry(_ sequence: Int) throws(StoreError) -> AuditEntryRecord? {
        try statement("SELECT seq, entry, hash, mac FROM audit_entry WHERE seq = ?").first([.integer(Int64(sequence))])
        { row throws(StoreError) in
            try auditRecord(row)
        }
    }

    public func auditEntryHash(_ sequence: Int) throws(StoreError) -> [UInt8]? {
        try statement("SELECT seq, hash FROM audit_entry WHERE seq = ?").first([.integer(Int64(sequence))]) {
            row throws(StoreError) in
            try row.row(of: "audit_entry").blob(1, count: 32)
        }
    }

    public func lastAuditEntry() throws(StoreError) -> AuditEntryRecord? {
        try statement("SELECT seq, entry, hash, mac FROM audit_entry ORDER BY seq DESC LIMIT 1").first {
            row throws(StoreError) in try auditRecord(row)
        }
    }

    public func append(_ entry: AuditEntryRecord) throws(StoreError) {
        try statement("INSERT INTO audit_entry (seq, entry, hash, mac) VALUES (?, ?, ?, ?)")
            .run([
                .integer(Int64(entry.sequence)), .blob(entry.entry), .blob(entry.hash),
                entry.mac.map { .blob($0) } ?? .null
            ])
    }

    public func setAuditMAC(sequence: Int, mac: [UInt8]) throws(StoreError) {
        try statement("UPDATE audit_entry SET mac = ? WHERE seq = ?").run([.blob(mac), .integer(Int64(sequence))])
    }

    public func auditHead() throws(StoreError) -> (sequence: Int, hash: [UInt8], mac: [UInt8])? {
        try statement("SELECT seq, hash, mac FROM audit_head WHERE singleton = 1").first { s throws(StoreError) in
            let row = s.row(of: "audit_head", keyColumns: 0)
            return (try row.integer(0, in: StoredRange.counter), try row.blob(1, count: 32), try row.blob(2))
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
