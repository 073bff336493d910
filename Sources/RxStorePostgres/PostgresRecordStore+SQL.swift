import RxStore

/// `SQLStatements`: how the table requirements written once (`Sources/RxStore/SQL/`) run on
/// the server: PostgreSQL's `$1` parameters, the session's queries, its CREATE statements
/// (`PostgresSchema`), repeated inserts sent many rows to a statement (`InsertBuffer`), and
/// every table there (a database is never older than format 4).
extension PostgresRecordStore: SQLStatements {
    public static func placeholder(_ number: Int) -> String { "$\(number)" }

    public func fetch<T>(
        _ sql: String, _ values: [StoredValue], table: String, keyColumns: Int,
        _ read: (PostgresStoredRow) throws(StoreError) -> T
    ) throws(StoreError) -> [T] {
        try rows(sql, values.map(BoundValue.init), table: table, keyColumns: keyColumns, read)
    }

    public func run(_ sql: String, _ values: [StoredValue]) throws(StoreError) {
        try session.query(sql, values.map(BoundValue.init))
    }

    /// The rows it changed, one returned for each.
    public func runCountingChanges(_ sql: String, _ values: [StoredValue]) throws(StoreError) -> Int {
        try session.query(sql + " RETURNING 1", values.map(BoundValue.init)).count
    }

    public static let insertionOrder = "position"

    /// A database is never older than format 4: every column has its current name.
    public func storedName(of column: String, in table: String) throws(StoreError) -> String { column }

    public func holds(_ table: StoredTable) throws(StoreError) -> Bool { true }

    public static func createStatements(_ table: StoredTable) -> [String] { PostgresSchema.create(table) }

    /// Kept and sent with the write's next statement (`InsertBuffer`): an import's thousands of
    /// rows go a thousand to a round trip.
    public func insertRepeated(_ values: [StoredValue], through insert: RowInsert) throws(StoreError) {
        try session.insert(insert, values.map(BoundValue.init))
    }
}
