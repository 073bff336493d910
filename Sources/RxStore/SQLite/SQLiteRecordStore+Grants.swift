/// What `GrantStore` does the file's own way: the upsert, whose conflict target is the grant's
/// reference from format 3 and its client and prescription before. The rest is written once for
/// both engines (`SQLStatements+Sharing.swift`).
extension SQLiteRecordStore {
    public func upsert(_ grant: GrantRecord) throws(StoreError) {
        let version = try schemaVersion()
        let unique = version >= 3 ? "reference" : "client_id, prescription_id"
        let columns = try storedColumns(of: GrantRecord.self).joined(separator: ", ")
        try statement(
            """
            INSERT INTO access_grant (\(columns)) VALUES (?, ?, ?, ?, ?, ?)
            ON CONFLICT (\(unique)) DO UPDATE SET
                id = excluded.id, client_id = excluded.client_id, sealed_keys = excluded.sealed_keys, info = excluded.info, mac = excluded.mac
            """
        ).run(grant.storedValues)
    }
}
