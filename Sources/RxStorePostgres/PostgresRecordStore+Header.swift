import RxStore

/// `VaultHeaderStore`, `KeySlotStore` and `SchemaStore`: the one `vault_header` row, `key_slot`,
/// the one `key_ring` row, and the schema version in `rxvault_schema`.
extension PostgresRecordStore {
    public func header() throws(StoreError) -> VaultHeaderRecord {
        let header = try first(
            """
            SELECT format_version, vault_id, kdf_algorithm, kdf_ops_limit, kdf_mem_limit, kdf_salt, wrapped_root_key,
                   max_attachment_bytes, audit_public_key
            FROM vault_header WHERE singleton = 1
            """, table: "vault_header", keyColumns: 0
        ) { row throws(StoreError) in
            VaultHeaderRecord(
                formatVersion: try row.integer(0, in: StoredRange.positive), vaultID: try row.blob(1, count: 16),
                kdfAlgorithm: try row.text(2), kdfOpsLimit: try row.unsigned(3), kdfMemLimit: try row.unsigned(4),
                kdfSalt: try row.blob(5), wrappedRootKey: try row.blob(6),
                maxAttachmentBytes: try row.integer(7, in: StoredRange.positive),
                auditPublicKey: try row.blob(8, count: 32))
        }
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
        try rows(
            """
            SELECT id, kind, kdf_algorithm, kdf_ops_limit, kdf_mem_limit, kdf_salt, wrapped_root_key, info
            FROM key_slot ORDER BY id
            """, table: "key_slot"
        ) { row throws(StoreError) in
            KeySlotRecord(
                id: try row.integer(0, in: StoredRange.keySlot), kind: try row.text(1), kdfAlgorithm: try row.text(2),
                kdfOpsLimit: try row.unsigned(3), kdfMemLimit: try row.unsigned(4), kdfSalt: try row.blob(5),
                wrappedRootKey: try row.blob(6), info: try row.blob(7))
        }
    }

    public func upsert(_ slot: KeySlotRecord) throws(StoreError) {
        try session.query(
            """
            INSERT INTO key_slot (id, kind, kdf_algorithm, kdf_ops_limit, kdf_mem_limit, kdf_salt, wrapped_root_key, info)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
            ON CONFLICT (id) DO UPDATE SET kind = excluded.kind, kdf_algorithm = excluded.kdf_algorithm,
                kdf_ops_limit = excluded.kdf_ops_limit, kdf_mem_limit = excluded.kdf_mem_limit,
                kdf_salt = excluded.kdf_salt, wrapped_root_key = excluded.wrapped_root_key, info = excluded.info
            """,
            [
                .integer(Int64(slot.id)), .text(slot.kind), .text(slot.kdfAlgorithm), .integer(Int64(slot.kdfOpsLimit)),
                .integer(Int64(slot.kdfMemLimit)), .bytes(slot.kdfSalt), .bytes(slot.wrappedRootKey), .bytes(slot.info)
            ])
    }

    public func deleteKeySlot(_ id: Int) throws(StoreError) {
        try session.query("DELETE FROM key_slot WHERE id = $1", [.integer(Int64(id))])
    }

    public func keyRing() throws(StoreError) -> KeyRingRecord? {
        try first(
            "SELECT write_counter, content, mac FROM key_ring WHERE singleton = 1", table: "key_ring", keyColumns: 0
        ) { row throws(StoreError) in
            KeyRingRecord(
                writeCounter: try row.integer(0, in: StoredRange.counter), content: try row.blob(1),
                mac: try row.blob(2))
        }
    }

    public func setKeyRing(_ ring: KeyRingRecord) throws(StoreError) {
        try session.query(
            """
            INSERT INTO key_ring (singleton, write_counter, content, mac) VALUES (1, $1, $2, $3)
            ON CONFLICT (singleton) DO UPDATE SET write_counter = excluded.write_counter, content = excluded.content,
                mac = excluded.mac
            """, [.integer(Int64(ring.writeCounter)), .bytes(ring.content), .bytes(ring.mac)])
    }

    // MARK: - Schema

    public func schemaVersion() throws(StoreError) -> Int {
        try first("SELECT version FROM rxvault_schema WHERE singleton = 1", table: "rxvault_schema", keyColumns: 0) {
            row throws(StoreError) in try row.integer(0, in: 0...Int64(Int32.max))
        } ?? 0
    }

    /// A database vault is created at the current format: older vaults are upgraded as files,
    /// then copied in (`rxvault copy`).
    public func upgradeToFormat2(wrappedRootKey: [UInt8]) throws(StoreError) {
        throw .unsupportedVersion(found: try schemaVersion(), supported: PostgresSchema.version)
    }

    public func upgradeToFormat3(wrappedRootKey: [UInt8], clients: [ClientRecord], grants: [GrantRecord])
        throws(StoreError)
    {
        throw .unsupportedVersion(found: try schemaVersion(), supported: PostgresSchema.version)
    }

    public func createPatientTable() throws(StoreError) {
        throw .unsupportedVersion(found: try schemaVersion(), supported: PostgresSchema.version)
    }

    public func upgradeKeySlotsToFormat4() throws(StoreError) {
        throw .unsupportedVersion(found: try schemaVersion(), supported: PostgresSchema.version)
    }

    public func upgradeToFormat4(wrappedRootKey: [UInt8]) throws(StoreError) {
        throw .unsupportedVersion(found: try schemaVersion(), supported: PostgresSchema.version)
    }

    public func upgradeToFormat5() throws(StoreError) {
        guard try schemaVersion() == 4 else { throw StoreError.corrupt("the schema to upgrade is not version 4") }
        try session.query("UPDATE rxvault_schema SET version = 5 WHERE singleton = 1")
        try session.query("UPDATE vault_header SET format_version = 5 WHERE singleton = 1")
    }

    public func upgradeToFormat6() throws(StoreError) {
        guard try schemaVersion() == 5 else { throw StoreError.corrupt("the schema to upgrade is not version 5") }
        try session.query("UPDATE rxvault_schema SET version = 6 WHERE singleton = 1")
        try session.query("UPDATE vault_header SET format_version = 6 WHERE singleton = 1")
    }

    public func upgradeToFormat7() throws(StoreError) {
        guard try schemaVersion() == 6 else { throw StoreError.corrupt("the schema to upgrade is not version 6") }
        try session.query("UPDATE rxvault_schema SET version = 7 WHERE singleton = 1")
        try session.query("UPDATE vault_header SET format_version = 7 WHERE singleton = 1")
    }
}
