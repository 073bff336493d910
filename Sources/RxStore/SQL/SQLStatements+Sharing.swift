/// `ClientStore` and most of `GrantStore`, written once for every engine that speaks SQL
/// (`SQLStatements`), with the columns named as the stored tables name them (a file before
/// format 3 has a client's public key and a grant's prescription where later ones have a lookup
/// tag and a reference).
extension ClientStore where Self: SQLStatements {
    public func clients() throws(StoreError) -> [ClientRecord] {
        let columns = try storedColumns(of: ClientRecord.self).joined(separator: ", ")
        return try fetchRecords("SELECT \(columns) FROM client ORDER BY \(Self.insertionOrder)")
    }

    public func client(withLookup key: [UInt8]) throws(StoreError) -> ClientRecord? {
        let columns = try storedColumns(of: ClientRecord.self).joined(separator: ", ")
        let lookup = try storedName(of: "lookup", in: ClientRecord.table)
        return try fetchRecord(
            "SELECT \(columns) FROM client WHERE \(lookup) = \(Self.placeholder(1))", [.blob(key)])
    }

    public func insert(_ client: ClientRecord) throws(StoreError) {
        let columns = try storedColumns(of: ClientRecord.self)
        let values = columns.indices.map { Self.placeholder($0 + 1) }.joined(separator: ", ")
        try run("INSERT INTO client (\(columns.joined(separator: ", "))) VALUES (\(values))", client.storedValues)
    }

    public func deleteClient(_ id: ClientID) throws(StoreError) {
        // Its grants go with it (ON DELETE CASCADE).
        try run("DELETE FROM client WHERE id = \(Self.placeholder(1))", [.text(id.hex)])
    }
}

extension GrantStore where Self: SQLStatements {
    public func grants(clientID: ClientID?, references: [String]?) throws(StoreError) -> [GrantRecord] {
        if let references, references.isEmpty { return [] }
        let columns = try storedColumns(of: GrantRecord.self).joined(separator: ", ")
        // References are few (one per client at most): bound one by one, no string-built IN list.
        var conditions: [String] = []
        var values: [StoredValue] = []
        if let clientID {
            values.append(.text(clientID.hex))
            conditions.append("client_id = \(Self.placeholder(values.count))")
        }
        if let references {
            var placeholders: [String] = []
            for reference in references {
                values.append(.text(reference))
                placeholders.append(Self.placeholder(values.count))
            }
            let column = try storedName(of: "reference", in: GrantRecord.table)
            conditions.append("\(column) IN (\(placeholders.joined(separator: ", ")))")
        }
        let filter = conditions.isEmpty ? "" : " WHERE " + conditions.joined(separator: " AND ")
        return try fetchRecords(
            "SELECT \(columns) FROM access_grant\(filter) ORDER BY \(Self.insertionOrder)", values)
    }

    /// One grant per reference from format 3; before, one per client and prescription (the
    /// column is then the prescription id, and the file's UNIQUE constraint is on both).
    public func upsert(_ grant: GrantRecord) throws(StoreError) {
        let key = try grantsNamePrescriptions() ? ["client_id", "prescription_id"] : ["reference"]
        let insert = RowInsert(
            table: GrantRecord.table, columns: try storedColumns(of: GrantRecord.self), replacingOn: key)
        try run(insert, grant.storedValues)
    }

    public func deleteGrant(_ id: GrantID) throws(StoreError) {
        try run("DELETE FROM access_grant WHERE id = \(Self.placeholder(1))", [.text(id.hex)])
    }
}
