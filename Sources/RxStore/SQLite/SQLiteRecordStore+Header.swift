/// `VaultHeaderStore`: the one `vault_header` row.
extension SQLiteRecordStore {
    public func header() throws(StoreError) -> VaultHeaderRecord {
        let header = try statement(
            """
            SELECT format_version, vault_id, kdf_algorithm, kdf_ops_limit, kdf_mem_limit, kdf_salt, wrapped_root_key,
                   max_attachment_bytes, audit_public_key
            FROM vault_header WHERE singleton = 1
            """
        ).first { s throws(StoreError) in
            let row = s.row(of: "vault_header", keyColumns: 0)
            return VaultHeaderRecord(
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
        try database.prepare(
            """
            UPDATE vault_header SET kdf_ops_limit = ?, kdf_mem_limit = ?, kdf_salt = ?, wrapped_root_key = ? WHERE singleton = 1
            """
        ).run([.integer(Int64(opsLimit)), .integer(Int64(memLimit)), .blob(salt), .blob(wrapped)])
    }

    public func setMaxAttachmentBytes(_ bytes: Int) throws(StoreError) {
        try database.prepare("UPDATE vault_header SET max_attachment_bytes = ? WHERE singleton = 1").run([
            .integer(Int64(bytes))
        ])
    }
}
