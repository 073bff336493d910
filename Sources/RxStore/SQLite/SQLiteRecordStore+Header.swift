/// `VaultHeaderStore`: the one `vault_header` row.
extension SQLiteRecordStore {
    public func header() throws(StoreError) -> VaultHeaderRecord {
        let header = try statement("SELECT \(VaultHeaderRecord.columnList) FROM vault_header WHERE singleton = 1")
            .record(as: VaultHeaderRecord.self)
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
