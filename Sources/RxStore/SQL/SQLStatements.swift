/// An engine that speaks SQL, as the table requirements written once need it
/// (`SQLStatements+*.swift`): a way to run a statement and read its rows (`Row`, the engine's
/// `StoredRowReading`), how it numbers parameters, and which tables it holds. An engine that
/// adopts it gets those requirements for free; the rest it still writes in its own SQL.
public protocol SQLStatements: AnyObject {
    associatedtype Row: StoredRowReading
    /// Parameter `number` (from 1) as the engine spells it: `?1` for SQLite, `$1` for PostgreSQL.
    static func placeholder(_ number: Int) -> String
    /// The rows of `sql`, each read by `read` as a row of `table` whose key is its first
    /// `keyColumns` columns (0: the table's one row).
    func fetch<T>(
        _ sql: String, _ values: [StoredValue], table: String, keyColumns: Int, _ read: (Row) throws(StoreError) -> T
    ) throws(StoreError) -> [T]
    /// Runs `sql`, which returns no rows.
    func run(_ sql: String, _ values: [StoredValue]) throws(StoreError)
    /// Runs `sql` (an UPDATE or DELETE) and says how many rows it changed.
    func runCountingChanges(_ sql: String, _ values: [StoredValue]) throws(StoreError) -> Int
    /// What orders a table's rows as they were added (`StoredTable.keepsInsertionOrder`): SQLite's
    /// `rowid`, a column of its own in a server engine.
    static var insertionOrder: String { get }
    /// `column` of `table` as the stored tables name it: a file before format 3 calls
    /// `client.lookup` `public_key` and `access_grant.reference` `prescription_id`.
    func storedName(of column: String, in table: String) throws(StoreError) -> String
    /// Whether the vault holds `table`: a file older than the format that added it does not
    /// (`StoredTable.format`); a database is never older than format 4.
    func holds(_ table: StoredTable) throws(StoreError) -> Bool
}

extension SQLStatements {
    /// The rows of `sql` as records (`StoredRecord.init(row:)`).
    func fetchRecords<R: StoredRecord>(_ sql: String, _ values: [StoredValue] = [], as kind: R.Type = R.self)
        throws(StoreError) -> [R]
    {
        try fetch(sql, values, table: R.table, keyColumns: R.keyColumns) { row throws(StoreError) in try R(row: row) }
    }

    /// The first row of `sql` as a record, or nil.
    func fetchRecord<R: StoredRecord>(_ sql: String, _ values: [StoredValue] = [], as kind: R.Type = R.self)
        throws(StoreError) -> R?
    {
        try fetchRecords(sql, values, as: kind).first
    }

    /// `SELECT` every column of `R` from its table, then `rest` (a `WHERE`, an `ORDER BY`).
    static func select<R: StoredRecord>(_ kind: R.Type, _ rest: String) -> String {
        "SELECT \(R.columnList) FROM \(R.table) \(rest)"
    }

    /// `R.columns` as the stored table names them (`storedName`).
    func storedColumns<R: StoredRecord>(of kind: R.Type) throws(StoreError) -> [String] {
        var names: [String] = []
        for column in R.columns { names.append(try storedName(of: column, in: R.table)) }
        return names
    }

    /// `count(*)` of `table`.
    func count(of table: StoredTable) throws(StoreError) -> Int {
        try fetch("SELECT count(*) FROM \(table.name)", [], table: table.name, keyColumns: 0) {
            row throws(StoreError) in try row.integer(0, in: 0...Int64.max)
        }.first ?? 0
    }

    /// Inserts `record` as a row of its table.
    func insertRecord<R: StoredRecord>(_ record: R) throws(StoreError) {
        try run(R.insertStatement(placeholder: Self.placeholder), record.storedValues)
    }

    /// Inserts `record`, or replaces the columns of the row with the same `key`.
    func upsertRecord<R: StoredRecord>(_ record: R, key: String) throws(StoreError) {
        let updates = R.columns.filter { $0 != key }.map { "\($0) = excluded.\($0)" }.joined(separator: ", ")
        try run(
            R.insertStatement(placeholder: Self.placeholder) + " ON CONFLICT (\(key)) DO UPDATE SET \(updates)",
            record.storedValues)
    }
}
