/// `VaultHeaderStore`, `KeySlotStore`, `StateRootStore`, `SearchIndexStore`, `AuditLogStore`
/// and a format step (`SchemaStore.advanceFormat`), written once for every engine that speaks
/// SQL (`SQLStatements`): the same statements, each engine numbering its parameters its own way.
extension VaultHeaderStore where Self: SQLStatements {
    public func header() throws(StoreError) -> VaultHeaderRecord {
        guard
            let header = try fetchRecord(
                Self.select(VaultHeaderRecord.self, "WHERE singleton = 1"), as: VaultHeaderRecord.self)
        else { throw StoreError.corrupt("the vault header is missing") }
        return header
    }

    public func replaceHeaderKey(opsLimit: UInt64, memLimit: UInt64, salt: [UInt8], wrapped: [UInt8]) throws(StoreError)
    {
        let p = Self.placeholder
        try run(
            "UPDATE vault_header SET kdf_ops_limit = \(p(1)), kdf_mem_limit = \(p(2)), kdf_salt = \(p(3)), "
                + "wrapped_root_key = \(p(4)) WHERE singleton = 1",
            [.integer(Int64(opsLimit)), .integer(Int64(memLimit)), .blob(salt), .blob(wrapped)])
    }

    public func setMaxAttachmentBytes(_ bytes: Int) throws(StoreError) {
        try run(
            "UPDATE vault_header SET max_attachment_bytes = \(Self.placeholder(1)) WHERE singleton = 1",
            [.integer(Int64(bytes))])
    }
}

extension KeySlotStore where Self: SQLStatements {
    public func keySlots() throws(StoreError) -> [KeySlotRecord] {
        guard try holds(StoredSchema.keySlot) else { return [] }
        return try fetchRecords(Self.select(KeySlotRecord.self, "ORDER BY id"))
    }

    public func upsert(_ slot: KeySlotRecord) throws(StoreError) { try upsertRecord(slot, key: "id") }

    public func deleteKeySlot(_ id: Int) throws(StoreError) {
        try run("DELETE FROM key_slot WHERE id = \(Self.placeholder(1))", [.integer(Int64(id))])
    }

    public func keyRing() throws(StoreError) -> KeyRingRecord? {
        guard try holds(StoredSchema.keyRing) else { return nil }
        return try fetchRecord(Self.select(KeyRingRecord.self, "WHERE singleton = 1"))
    }

    public func setKeyRing(_ ring: KeyRingRecord) throws(StoreError) { try upsertRecord(ring, key: "singleton") }
}

extension StateRootStore where Self: SQLStatements {
    public func vaultState() throws(StoreError) -> VaultStateRecord? {
        guard try holds(StoredSchema.vaultState) else { return nil }
        return try fetchRecord(Self.select(VaultStateRecord.self, "WHERE singleton = 1"))
    }

    /// One statement, reset when its row is read (SQLite's is kept prepared): `rxvault serve`
    /// asks on every request, and must not hold a read snapshot open after.
    public func vaultStateStamp() throws(StoreError) -> (counter: Int, mac: [UInt8])? {
        try fetch(
            "SELECT write_counter, mac FROM vault_state WHERE singleton = 1", [], table: "vault_state", keyColumns: 0
        ) { row throws(StoreError) in try row.stateStamp() }.first
    }

    public func setVaultState(_ state: VaultStateRecord) throws(StoreError) {
        try upsertRecord(state, key: "singleton")
    }

    public func manifestBuckets() throws(StoreError) -> [(Int, [UInt8])] {
        guard try holds(StoredSchema.manifest) else { return [] }
        return try buckets(of: StoredSchema.manifest)
    }

    public func manifestBucket(_ bucket: Int) throws(StoreError) -> [UInt8]? {
        try storedBucket(bucket, of: StoredSchema.manifest)
    }

    public func setManifestBucket(_ bucket: Int, to content: [UInt8]?) throws(StoreError) {
        guard let content else {
            try run("DELETE FROM manifest WHERE bucket = \(Self.placeholder(1))", [.integer(Int64(bucket))])
            return
        }
        try setBucket(bucket, of: StoredSchema.manifest, to: content)
    }
}

extension SearchIndexStore where Self: SQLStatements {
    public func indexBuckets() throws(StoreError) -> [(Int, [UInt8])] { try buckets(of: StoredSchema.searchIndex) }

    public func indexBucket(_ bucket: Int) throws(StoreError) -> [UInt8]? {
        try storedBucket(bucket, of: StoredSchema.searchIndex)
    }

    public func setIndexBucket(_ bucket: Int, to sealed: [UInt8]) throws(StoreError) {
        try setBucket(bucket, of: StoredSchema.searchIndex, to: sealed)
    }

    public func clearIndex() throws(StoreError) { try run("DELETE FROM search_index", []) }
}

/// The two bucket tables (`search_index`, `manifest`): the table is one of those, named by the
/// description, never by input.
extension SQLStatements {
    func buckets(of table: StoredTable) throws(StoreError) -> [(Int, [UInt8])] {
        try fetch("SELECT bucket, content FROM \(table.name) ORDER BY bucket", [], table: table.name, keyColumns: 1) {
            row throws(StoreError) in try row.bucket()
        }
    }

    func storedBucket(_ bucket: Int, of table: StoredTable) throws(StoreError) -> [UInt8]? {
        try fetch(
            "SELECT bucket, content FROM \(table.name) WHERE bucket = \(Self.placeholder(1))",
            [.integer(Int64(bucket))],
            table: table.name, keyColumns: 1
        ) { row throws(StoreError) in try row.blob(1) }.first
    }

    func setBucket(_ bucket: Int, of table: StoredTable, to content: [UInt8]) throws(StoreError) {
        let p = Self.placeholder
        try run(
            "INSERT INTO \(table.name) (bucket, content) VALUES (\(p(1)), \(p(2))) "
                + "ON CONFLICT (bucket) DO UPDATE SET content = excluded.content",
            [.integer(Int64(bucket)), .blob(content)])
    }
}

extension AuditLogStore where Self: SQLStatements {
    public func auditEntries() throws(StoreError) -> [AuditEntryRecord] {
        try fetchRecords(Self.select(AuditEntryRecord.self, "ORDER BY seq"))
    }

    public func auditEntries(after sequence: Int) throws(StoreError) -> [AuditEntryRecord] {
        try fetchRecords(
            Self.select(AuditEntryRecord.self, "WHERE seq > \(Self.placeholder(1)) ORDER BY seq"),
            [.integer(Int64(sequence))])
    }

    public func auditEntry(_ sequence: Int) throws(StoreError) -> AuditEntryRecord? {
        try fetchRecord(
            Self.select(AuditEntryRecord.self, "WHERE seq = \(Self.placeholder(1))"), [.integer(Int64(sequence))])
    }

    public func auditEntryHash(_ sequence: Int) throws(StoreError) -> [UInt8]? {
        try fetch(
            "SELECT seq, hash FROM audit_entry WHERE seq = \(Self.placeholder(1))", [.integer(Int64(sequence))],
            table: "audit_entry", keyColumns: 1
        ) { row throws(StoreError) in try row.blob(1, count: 32) }.first
    }

    public func lastAuditEntry() throws(StoreError) -> AuditEntryRecord? {
        try fetchRecord(Self.select(AuditEntryRecord.self, "ORDER BY seq DESC LIMIT 1"))
    }

    public func append(_ entry: AuditEntryRecord) throws(StoreError) { try insertRecord(entry) }

    public func setAuditMAC(sequence: Int, mac: [UInt8]) throws(StoreError) {
        let p = Self.placeholder
        try run("UPDATE audit_entry SET mac = \(p(1)) WHERE seq = \(p(2))", [.blob(mac), .integer(Int64(sequence))])
    }

    public func auditHead() throws(StoreError) -> (sequence: Int, hash: [UInt8], mac: [UInt8])? {
        try fetch("SELECT seq, hash, mac FROM audit_head WHERE singleton = 1", [], table: "audit_head", keyColumns: 0) {
            row throws(StoreError) in try row.auditHead()
        }.first
    }

    public func setAuditHead(sequence: Int, hash: [UInt8], mac: [UInt8]) throws(StoreError) {
        let p = Self.placeholder
        try run(
            "INSERT INTO audit_head (singleton, seq, hash, mac) VALUES (1, \(p(1)), \(p(2)), \(p(3))) "
                + "ON CONFLICT (singleton) DO UPDATE SET seq = excluded.seq, hash = excluded.hash, mac = excluded.mac",
            [.integer(Int64(sequence)), .blob(hash), .blob(mac)])
    }
}

extension SchemaStore where Self: SQLStatements {
    /// The step's tables in the engine's SQL, then the schema version where the engine keeps it
    /// (`setSchemaVersion`) and the header's format, in the caller's write.
    public func advanceFormat(to version: Int, adding tables: [StoredTable]) throws(StoreError) {
        guard version <= StoredSchema.currentFormat else {
            throw StoreError.unsupportedVersion(found: version, supported: StoredSchema.currentFormat)
        }
        guard try schemaVersion() == version - 1 else {
            throw StoreError.corrupt("the schema to upgrade is not version \(version - 1)")
        }
        for statement in tables.flatMap(Self.createStatements) { try run(statement, []) }
        try setSchemaVersion(version)
        try run(
            "UPDATE vault_header SET format_version = \(Self.placeholder(1)) WHERE singleton = 1",
            [.integer(Int64(version))])
    }
}
