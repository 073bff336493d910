/// A record that is one row of one vault table, mapped to and from it once for every engine:
/// which columns it is, how it is read from a row (`init(row:)`, every value checked as
/// `StoredRowReading` says) and what is bound to write it (`storedValues`). An engine only says
/// in its own SQL which rows it wants, and hands the rows to `init(row:)`.
public protocol StoredRecord {
    /// The table its rows are in.
    static var table: String { get }
    /// Its columns, in the order `init(row:)` reads them and `storedValues` lists them. A table
    /// of one row (`keyColumns` 0) has its `singleton` key besides them, always 1.
    static var columns: [String] { get }
    /// How many leading columns are its key, which messages name a row by (0: the table's one row).
    static var keyColumns: Int { get }
    /// Reads the record from a row of `columns`, in their order.
    init(row: some StoredRowReading) throws(StoreError)
    /// The values of `columns`, in their order.
    var storedValues: [StoredValue] { get }
}

extension StoredRecord {
    public static var keyColumns: Int { 1 }

    /// `columns` as a select or insert list.
    public static var columnList: String { columns.joined(separator: ", ") }

    /// `INSERT INTO table (columns) VALUES (...)`, each value's parameter spelled by
    /// `placeholder` (numbered from 1: `?` for SQLite, `$1` for PostgreSQL); a one-row table's
    /// with its `singleton` key, 1 (`RowInsert`, for one row).
    public static func insertStatement(placeholder: (Int) -> String) -> String {
        RowInsert(Self.self).statement(rows: 1, placeholder: placeholder)
    }
}
