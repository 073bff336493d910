import CSQLite

/// One result row of the vault file, as `StoredRowReading` says: each value checked for its
/// SQLite type (the storage class it holds, not the column's declared one), for NULL and for its
/// range or length where it is read (exit 76 in the CLI for a value rxvault never writes). The
/// tables are STRICT and have CHECK constraints, but anyone who can write the file can turn
/// both off (`PRAGMA ignore_check_constraints`, `PRAGMA writable_schema`).
public struct StoredRow: StoredRowReading {
    let statement: Statement
    /// The table the row is from, as messages name it.
    public let table: String
    /// How many leading result columns are the row's key, which messages name it by (0: the
    /// table's one row).
    let keyColumns: Int32

    public func integer(_ column: Int, in range: ClosedRange<Int64>) throws(StoreError) -> Int {
        try expect(column, SQLITE_INTEGER, "an integer")
        let value = sqlite3_column_int64(statement.handle, Int32(column))
        guard range.contains(value), let int = Int(exactly: value) else {
            throw bad(Int32(column), "is \(value), outside \(range.lowerBound)...\(range.upperBound)")
        }
        return int
    }

    public func text(_ column: Int) throws(StoreError) -> String {
        try expect(column, SQLITE_TEXT, "text")
        return String(decoding: bytes(Int32(column)), as: UTF8.self)
    }

    public func hexDigits(_ column: Int) throws(StoreError) -> String {
        try expect(column, SQLITE_TEXT, "text")
        let utf8 = bytes(Int32(column))
        guard Self.areHexDigits(utf8) else { throw bad(Int32(column), "is not an id (32 lower-case hex digits)") }
        return String(decoding: utf8, as: UTF8.self)
    }

    public func blob(_ column: Int, count: Int?) throws(StoreError) -> [UInt8] {
        try expect(column, SQLITE_BLOB, "a blob")
        let value = bytes(Int32(column))
        if let count, value.count != count { throw bad(Int32(column), "is \(value.count) bytes, not \(count)") }
        return value
    }

    public func isNull(_ column: Int) -> Bool { sqlite3_column_type(statement.handle, Int32(column)) == SQLITE_NULL }

    private func bytes(_ column: Int32) -> [UInt8] {
        // The pointer first, then the length (SQLite's documented order).
        guard let p = sqlite3_column_blob(statement.handle, column) else { return [] }
        return Array(UnsafeRawBufferPointer(start: p, count: Int(sqlite3_column_bytes(statement.handle, column))))
    }

    private func expect(_ column: Int, _ type: Int32, _ name: String) throws(StoreError) {
        let found = sqlite3_column_type(statement.handle, Int32(column))
        guard found == type else { throw bad(Int32(column), "is \(Self.typeName(found)), not \(name)") }
    }

    private static func typeName(_ type: Int32) -> String {
        switch type {
        case SQLITE_INTEGER: "an integer"
        case SQLITE_FLOAT: "a real number"
        case SQLITE_TEXT: "text"
        case SQLITE_BLOB: "a blob"
        default: "NULL"
        }
    }

    /// "prescription_version row (prescription_id '0123abcd…', version 2): version is -1, outside 1...2147483647".
    func bad(_ column: Int32, _ problem: String) -> StoreError {
        .corrupt("\(row): \(name(of: column)) \(problem)")
    }

    /// The table and the row's key as stored (whatever its type), so the message finds the row
    /// even when the key itself is the bad value.
    var row: String {
        guard keyColumns > 0 else { return "\(table) (its one row)" }
        let key = (0..<keyColumns).map { "\(name(of: $0)) \(describe($0))" }
        return "\(table) row (\(key.joined(separator: ", ")))"
    }

    private func name(of column: Int32) -> String {
        sqlite3_column_name(statement.handle, column).map { String(cString: $0) } ?? "column \(column)"
    }

    /// A stored value in a few printable characters: a text's first 8 (others as `?`), a blob's
    /// length.
    private func describe(_ column: Int32) -> String {
        let handle = statement.handle
        switch sqlite3_column_type(handle, column) {
        case SQLITE_INTEGER: return String(sqlite3_column_int64(handle, column))
        case SQLITE_FLOAT: return String(sqlite3_column_double(handle, column))
        case SQLITE_TEXT:
            let utf8 = bytes(column)
            let shown = utf8.prefix(8).map {
                (0x21...0x7e).contains($0) && $0 != 0x27 ? Character(Unicode.Scalar($0)) : "?"
            }
            return "'" + String(shown) + (utf8.count > 8 ? "…'" : "'")
        case SQLITE_BLOB: return "a blob of \(sqlite3_column_bytes(handle, column)) bytes"
        default: return "NULL"
        }
    }
}

extension Statement {
    /// The current result row as a row of `table` whose key is its first `keyColumns` columns.
    public func row(of table: String, keyColumns: Int32 = 1) -> StoredRow {
        StoredRow(statement: self, table: table, keyColumns: keyColumns)
    }
}
