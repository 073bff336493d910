import RxStore

/// `VaultHeaderStore`, `KeySlotStore` and `SchemaStore`: the one `vault_header` row, `key_slot`,
/// the one `key_ring` row, and the schema version in `rxvault_schema`.
extension PostgresRecordStore {
    public func header() throws(StoreError) -> VaultHeaderRecord {
        let header = try record(
            "SELECT \(VaultHeaderRecord.columnList) FROM vault_header WHERE singleton = 1", as: VaultHeaderRecord.self)
        guard let header else { throw StoreError.corrupt("the vault header is missing") }
        return header
    }

    public func replaceHeaderKey(opsLimit: UInt64, memLimit: UInt64, salt: [UInt8], wrapped: [UInt8]) throws(StoreError)
    {
        try session.query(
            """
            UPDATE vault_header SET kdf_ops_limit = $1, kdf_mem_limit = $2, kdf_salt = $3, wrapped_root_key = $4
            WHERE singleton = 1
            """, [.integer(Int64(opsLimit)), .integer(Int64(memLimit)), .bytes(salt), .bytes(wrapped)])
    }

    public func setMaxAttachmentBytes(_ bytes: Int) throws(StoreError) {
        try session.query(
            "UPDATE vault_header SET max_attachment_bytes = $1 WHERE singleton = 1", [.integer(Int64(bytes))])
    }

    // MARK: - Key slots

    public func keySlots() throws(StoreError) -> [KeySlotRecord] {
        try records("SELECT \(KeySlotRecord.columnList) FROM key_slot ORDER BY id")
    }

    public func upsert(_ slot: KeySlotRecord) throws(StoreError) {
        try insertRow(
            slot,
            then: """
                 ON CONFLICT (id) DO UPDATE SET kind = excluded.kind, kdf_algorithm = excluded.kdf_algorithm,
                    kdf_ops_limit = excluded.kdf_ops_limit, kdf_mem_limit = excluded.kdf_mem_limit,
                    kdf_salt = excluded.kdf_salt, wrapped_root_key = excluded.wrapped_root_key, info = excluded.info
                """)
    }

    public func deleteKeySlot(_ id: Int) throws(StoreError) {
        try session.query("DELETE FROM key_slot WHERE id = $1", [.integer(Int64(id))])
    }

    public func keyRing() throws(StoreError) -> KeyRingRecord? {
        try record("SELECT \(KeyRingRecord.columnList) FROM key_ring WHERE singleton = 1")
    }

    public func setKeyRing(_ ring: KeyRingRecord) throws(StoreError) {
        try insertRow(
            ring,
            then: """
                 ON CONFLICT (singleton) DO UPDATE SET write_counter = excluded.write_counter,
                    content = excluded.content, mac = excluded.mac
                """)
    }

    // MARK: - Schema

    public func schemaVersion() throws(StoreError) -> Int {
        try first("SELECT version FROM rxvault_schema WHERE singleton = 1", table: "rxvault_schema", keyColumns: 0) {
            row throws(StoreError) in try row.integer(0, in: 0...Int64(Int32.max))
        } ?? 0
    }

    /// A database vault is created at format 4 or later (older vaults are upgraded as files, then
    /// copied in), so this is the only step it takes.
    public func advanceFormat(to version: Int, adding tables: [StoredTable]) throws(StoreError) {
        guard version <= PostgresSchema.version else {
            throw StoreError.unsupportedVersion(found: version, supported: PostgresSchema.version)
        }
        guard try schemaVersion() == version - 1 else {
            throw StoreError.corrupt("the schema to upgrade is not version \(version - 1)")
        }
        for statement in tables.flatMap(PostgresSchema.create) { try session.query(statement) }
        try session.query("UPDATE rxvault_schema SET version = $1 WHERE singleton = 1", [.integer(Int64(version))])
        try session.query(
            "UPDATE vault_header SET format_version = $1 WHERE singleton = 1", [.integer(Int64(version))])
    }
}
