/// `GrantStore`: `access_grant` (the reference column is `prescription_id` before format 3, `Schema`).
extension SQLiteRecordStore {
    public func grants(clientID: ClientID?, references: [String]?) throws(StoreError) -> [GrantRecord] {
        if let references, references.isEmpty { return [] }
        let reference = Schema.grantReferenceColumn(try schemaVersion())
        var records: [GrantRecord] = []
        // References are few (one per client at most): bound one by one, no string-built IN list.
        let placeholders = references.map { Array(repeating: "?", count: $0.count).joined(separator: ", ") }
        let sql = """
            SELECT id, client_id, \(reference), sealed_keys, info, mac FROM access_grant
            WHERE (?1 IS NULL OR client_id = ?1)\(placeholders.map { " AND \(reference) IN (\($0))" } ?? "")
            ORDER BY rowid
            """
        var values: [Statement.Value] = [clientID.map { .text($0.hex) } ?? .null]
        values += (references ?? []).map { .text($0) }
        try statement(sql).forEach(values) { s throws(StoreError) in
            // The reference is 32 hex digits in every format: a keyed hash's 16 bytes (3), a prescription id (1 and 2).
            let row = s.row(of: "access_grant")
            records.append(
                GrantRecord(
                    id: try row.id(0), clientID: try row.id(1), reference: try row.hexDigits(2),
                    sealedKeys: try row.blob(3), info: try row.blob(4), mac: try row.blob(5)))
        }
        return records
    }

    public func upsert(_ grant: GrantRecord) throws(StoreError) {
        let version = try schemaVersion()
        let reference = Schema.grantReferenceColumn(version)
        let unique = version >= 3 ? "reference" : "client_id, prescription_id"
        try statement(
            """
            INSERT INTO access_grant (id, client_id, \(reference), sealed_keys, info, mac) VALUES (?, ?, ?, ?, ?, ?)
            ON CONFLICT (\(unique)) DO UPDATE SET
                id = excluded.id, client_id = excluded.client_id, sealed_keys = excluded.sealed_keys, info = excluded.info, mac = excluded.mac
            """
        ).run([
            .text(grant.id.hex), .text(grant.clientID.hex), .text(grant.reference), .blob(grant.sealedKeys),
            .blob(grant.info), .blob(grant.mac)
        ])
    }

    public func deleteGrant(_ id: GrantID) throws(StoreError) {
        try statement("DELETE FROM access_grant WHERE id = ?").run([.text(id.hex)])
    }
}
