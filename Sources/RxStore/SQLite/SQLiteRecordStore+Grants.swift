/// `GrantStore`: `access_grant` (the reference column is `prescription_id` before format 3, `Schema`).
extension SQLiteRecordStore {
    public func grants(clientID: ClientID?, references: [String]?) throws(StoreError) -> [GrantRecord] {
        if let references, references.isEmpty { return [] }
        let version = try schemaVersion()
        let reference = Schema.grantReferenceColumn(version)
        // References are few (one per client at most): bound one by one, no string-built IN list.
        let placeholders = references.map { Array(repeating: "?", count: $0.count).joined(separator: ", ") }
        let sql = """
            SELECT \(grantColumns(version)) FROM access_grant
            WHERE (?1 IS NULL OR client_id = ?1)\(placeholders.map { " AND \(reference) IN (\($0))" } ?? "")
            ORDER BY rowid
            """
        var values: [Statement.Value] = [clientID.map { .text($0.hex) } ?? .null]
        values += (references ?? []).map { .text($0) }
        return try statement(sql).records(values)
    }

    /// `GrantRecord.columns` as a file of schema version `version` names them.
    private func grantColumns(_ version: Int) -> String {
        GrantRecord.columns.map { $0 == "reference" ? Schema.grantReferenceColumn(version) : $0 }
            .joined(separator: ", ")
    }

    public func upsert(_ grant: GrantRecord) throws(StoreError) {
        let version = try schemaVersion()
        let unique = version >= 3 ? "reference" : "client_id, prescription_id"
        try statement(
            """
            INSERT INTO access_grant (\(grantColumns(version))) VALUES (?, ?, ?, ?, ?, ?)
            ON CONFLICT (\(unique)) DO UPDATE SET
                id = excluded.id, client_id = excluded.client_id, sealed_keys = excluded.sealed_keys, info = excluded.info, mac = excluded.mac
            """
        ).run(grant.storedValues)
    }

    public func deleteGrant(_ id: GrantID) throws(StoreError) {
        try statement("DELETE FROM access_grant WHERE id = ?").run([.text(id.hex)])
    }
}
