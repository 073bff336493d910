/// `SQLStatements`: how the table requirements written once (`Sources/RxStore/SQL/`) run on
/// the file: reusable statements (`statement`), SQLite's `?1` parameters, and the tables a file
/// of an older format does not have yet.
extension SQLiteRecordStore: SQLStatements {
    public static func placeholder(_ number: Int) -> String { "?\(number)" }

    public func fetch<T>(
        _ sql: String, _ values: [StoredValue], table: String, keyColumns: Int,
        _ read: (StoredRow) throws(StoreError) -> T
    ) throws(StoreError) -> [T] {
        var results: [T] = []
        try statement(sql).forEach(values) { s throws(StoreError) in
            results.append(try read(s.row(of: table, keyColumns: Int32(keyColumns))))
        }
        return results
    }

    public func run(_ sql: String, _ values: [StoredValue]) throws(StoreError) {
        try statement(sql).run(values)
    }

    public func runCountingChanges(_ sql: String, _ values: [StoredValue]) throws(StoreError) -> Int {
        try statement(sql).run(values)
        return database.changes
    }

    public static let insertionOrder = "rowid"

    public func storedName(of column: String, in table: String) throws(StoreError) -> String {
        switch (table, column) {
        case ("client", "lookup"): Schema.clientLookupColumn(try schemaVersion())
        case ("access_grant", "reference"): Schema.grantReferenceColumn(try schemaVersion())
        default: column
        }
    }

    /// A table an upgrade creates is there before `user_version` moves, inside its transaction.
    public func holds(_ table: StoredTable) throws(StoreError) -> Bool {
        if try schemaVersion() >= table.format { return true }
        return try tableExists(table.name)
    }
}
