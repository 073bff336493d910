import RxStore

/// `ClientStore` and `GrantStore`: `client` and `access_grant`. (The audit log is written once for
/// both engines, `SQLStatements+Tables.swift`.)
extension PostgresRecordStore {
    public func clients() throws(StoreError) -> [ClientRecord] {
        try records("SELECT \(ClientRecord.columnList) FROM client ORDER BY position")
    }

    public func client(withLookup key: [UInt8]) throws(StoreError) -> ClientRecord? {
        try record("SELECT \(ClientRecord.columnList) FROM client WHERE lookup = $1", [.bytes(key)])
    }

    public func insert(_ client: ClientRecord) throws(StoreError) {
        try insertRow(client)
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
            "SELECT \(GrantRecord.columnList) FROM access_grant WHERE ($1::text IS NULL OR client_id = $1)"
        if let references {
            let placeholders = references.indices.map { "$\($0 + 2)" }.joined(separator: ", ")
            sql += " AND reference IN (\(placeholders))"
            values += references.map { .text($0) }
        }
        return try records(sql + " ORDER BY position", values)
    }

    public func upsert(_ grant: GrantRecord) throws(StoreError) {
        try insertRow(
            grant,
            then: """
                 ON CONFLICT (reference) DO UPDATE SET
                    id = excluded.id, client_id = excluded.client_id, sealed_keys = excluded.sealed_keys,
                    info = excluded.info, mac = excluded.mac
                """)
    }

    public func deleteGrant(_ id: GrantID) throws(StoreError) {
        try session.query("DELETE FROM access_grant WHERE id = $1", [.text(id.hex)])
    }
}
