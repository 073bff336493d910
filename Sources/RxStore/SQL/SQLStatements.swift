/// An engine that speaks SQL, as the table requirements written once need it
/// (`SQLStatements+*.swift`): a way to run a statement and read its rows (`Row`, the engine's
/// `StoredRowReading`), how it numbers parameters, how it spells a table, how it sends the
/// inserts a write repeats, and which tables and column names an older vault has. An engine that
/// adopts it gets every table requirement of `RecordStore` written once; what it writes itself is
/// this connection, its row reader and its dialect (DESIGN.md, "RxStore").
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
    /// The statements that create `table` and its indexes, in the engine's SQL (its types for
    /// `StoredColumn.Kind`): what a table a vault does not hold yet is made with (`makeIfMissing`).
    static func createStatements(_ table: StoredTable) -> [String]
    /// Inserts one row through `insert` (`values` in the order of its columns), one of the many
    /// a write may repeat (`RowInsert.prescription`...): the engine's bulk-insert mechanics. By
    /// default the one-row statement, at once (SQLite keeps it prepared). An engine a round trip
    /// away may keep the row and send it with others before the write's next statement or its
    /// commit (PostgreSQL's `InsertBuffer`); an error (a key stored twice) is then reported there
    /// and rolls the whole write back, as it would have at the row.
    func insertRepeated(_ values: [StoredValue], through insert: RowInsert) throws(StoreError)
    /// Stores `version` where the engine keeps the format its tables are in, which
    /// `SchemaStore.schemaVersion` reads (SQLite's `user_version`; PostgreSQL's `rxvault_schema`).
    func setSchemaVersion(_ version: Int) throws(StoreError)
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

    public func insertRepeated(_ values: [StoredValue], through insert: RowInsert) throws(StoreError) {
        try run(insert, values)
    }

    /// Runs `insert` for one row, at once.
    func run(_ insert: RowInsert, _ values: [StoredValue]) throws(StoreError) {
        try run(insert.statement(rows: 1, placeholder: Self.placeholder), values)
    }

    /// Inserts `record` as a row of its table.
    func insertRecord<R: StoredRecord>(_ record: R) throws(StoreError) {
        try run(RowInsert(R.self), record.storedValues)
    }

    /// Inserts `record`, or replaces the columns of the row with the same `key`.
    func upsertRecord<R: StoredRecord>(_ record: R, key: String) throws(StoreError) {
        try run(RowInsert(R.self, replacingOn: [key]), record.storedValues)
    }

    /// Creates `table` when the vault does not hold it: a vault file made before an rxvault
    /// that knew the table gets it at the first write that stores a row in it. Inside a write.
    func makeIfMissing(_ table: StoredTable) throws(StoreError) {
        guard try !holds(table) else { return }
        for statement in Self.createStatements(table) { try run(statement, []) }
    }

    /// Whether grants name their prescription in the clear: a vault file before format 3, whose
    /// `access_grant.reference` is `prescription_id` (one grant per client and prescription).
    func grantsNamePrescriptions() throws(StoreError) -> Bool {
        try storedName(of: "reference", in: GrantRecord.table) != "reference"
    }
}
