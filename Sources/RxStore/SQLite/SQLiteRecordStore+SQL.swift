/// `SQLStatements`: how the table requirements written once (`Sources/RxStore/SQL/`) run on
/// the file: reusable statements (`statement`), SQLite's `?1` parameters, its CREATE statements
/// (`SQLiteDialect`), and the tables and column names of a file of an older format. Repeated
/// inserts run one row at a time (the default `insertRepeated`): a statement kept prepared is
/// a function call away, so batching rows would save nothing.
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

    /// A table an upgrade creates is there before `user_version` moves, inside its transaction;
    /// one a file gets at its first write that needs it may be missing at any format
    /// (`Schema.madeAtFirstUse`).
    public func holds(_ table: StoredTable) throws(StoreError) -> Bool {
        if try schemaVersion() >= table.format, !Schema.madeAtFirstUse.contains(table.name) { return true }
        return try tableExists(table.name)
    }

    public static func createStatements(_ table: StoredTable) -> [String] { SQLiteDialect.create(table) }
}
