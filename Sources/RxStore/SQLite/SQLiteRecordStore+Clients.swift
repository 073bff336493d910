/// `ClientStore`: `client` (the lookup column is `public_key` before format 3, `Schema`).
extension SQLiteRecordStore {
    /// `ClientRecord.columns` as a file of schema version `version` names them.
    private func clientColumns(_ version: Int) -> String {
        ClientRecord.columns.map { $0 == "lookup" ? Schema.clientLookupColumn(version) : $0 }
            .joined(separator: ", ")
    }

    public func clients() throws(StoreError) -> [ClientRecord] {
        try statement("SELECT \(clientColumns(try schemaVersion())) FROM client ORDER BY rowid").records()
    }

    public func client(withLookup key: [UInt8]) throws(StoreError) -> ClientRecord? {
        let version = try schemaVersion()
        let lookup = Schema.clientLookupColumn(version)
        return try statement("SELECT \(clientColumns(version)) FROM client WHERE \(lookup) = ?").record([.blob(key)])
    }

    public func insert(_ client: ClientRecord) throws(StoreError) {
        try statement("INSERT INTO client (\(clientColumns(try schemaVersion()))) VALUES (?, ?, ?, ?)")
            .run(client.storedValues)
    }

    public func deleteClient(_ id: ClientID) throws(StoreError) {
        // Its grants go with it (ON DELETE CASCADE).
        try statement("DELETE FROM client WHERE id = ?").run([.text(id.hex)])
    }
}
