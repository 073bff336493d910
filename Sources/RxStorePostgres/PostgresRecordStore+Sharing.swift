import RxStore

/// What `GrantStore` does PostgreSQL's own way: the upsert, on the grant's reference. The rest of
/// the client and grant tables is written once for both engines (`SQLStatements+Sharing.swift`).
extension PostgresRecordStore {
    public func upsert(_ grant: GrantRecord) throws(StoreError) {
        try insertRow(
            grant,
            then: """
                 ON CONFLICT (reference) DO UPDATE SET
                    id = excluded.id, client_id = excluded.client_id, sealed_keys = excluded.sealed_keys,
                    info = excluded.info, mac = excluded.mac
                """)
    }
}
