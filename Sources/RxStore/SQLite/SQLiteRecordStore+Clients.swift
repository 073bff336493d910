/// `ClientStore`: `client` (the lookup column is `public_key` before format 3, `Schema`).
extension SQLiteRecordStore {
    public func clients() throws(StoreError) -> [ClientRecord] {
        let lookup = Schema.clientLookupColumn(try schemaVersion())
        var records: [ClientRecord] = []
        try statement("SELECT id, \(lookup), info, mac FROM client ORDER BY rowid").forEach { row throws(StoreError) in
            records.append(try clientRecord(row))
        }
        return records
    }

    public func client(withLookup key: [UInt8]) throws(StoreError) -> ClientRecord? {
        let lookup = Schema.clientLookupColumn(try schemaVersion())
        return try statement("SELECT id, \(lookup), info, mac FROM client WHERE \(lookup) = ?").first([.blob(key)]) {
            row throws(StoreError) in
            try clientRecord(row)
        }
    }

    /// The lookup tag (format 3) and the public key before it are both 32 bytes.
    private func clientRecord(_ s: Statement) throws(StoreError) -> ClientRecord {
        let row = s.row(of: "client")
        return ClientRecord(
            id: try row.id(0), lookup: try row.blob(1, count: 32), info: try row.blob(2), mac: try row.blob(3))
    }

    public func insert(_ client: ClientRecord) throws(StoreError) {
        let lookup = Schema.clientLookupColumn(try schemaVersion())
        try statement("INSERT INTO client (id, \(lookup), info, mac) VALUES (?, ?, ?, ?)")
            .run([.text(client.id.hex), .blob(client.lookup), .blob(client.info), .blob(client.mac)])
    }

    public func deleteClient(_ id: ClientID) throws(StoreError) {
        // Its grants go with it (ON DELETE CASCADE).
        try statement("DELETE FROM client WHERE id = ?").run([.text(id.hex)])
    }
}
