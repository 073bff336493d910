import CSQLite

/// One result row read as the schema says its values are: each value checked for its SQLite
/// type, for NULL and for its range or length where it is read, so that a value rxvault never
/// writes is a `StoreError.corrupt` naming the table, the row and the column (exit 76 in the
/// CLI), never a number handed on for a later conversion or sum to trap on. The
/// tables are STRICT and have CHECK constraints, but anyone who can write the file can turn
/// both off (`PRAGMA ignore_check_constraints`, `PRAGMA writable_schema`).
public struct StoredRow {
    let statement: Statement
    /// The table the row is from, as messages name it.
    public let table: String
    /// How many leading result columns are the row's key, which messages name it by (0: the
    /// table's one row).
    let keyColumns: Int32

    /// A 64-bit integer within `range`.
    public func integer(_ column: Int32, in range: ClosedRange<Int64>) throws(StoreError) -> Int {
        try expect(column, SQLITE_INTEGER, "an integer")
        let value = sqlite3_column_int64(statement.handle, column)
        guard range.contains(value), let int = Int(exactly: value) else {
            throw bad(column, "is \(value), outside \(range.lowerBound)...\(range.upperBound)")
        }
        return int
    }

    /// A non-negative integer as `UInt64` (KDF costs).
    public func unsigned(_ column: Int32) throws(StoreError) -> UInt64 {
        UInt64(try integer(column, in: StoredRange.nonNegative))
    }

    /// Text (any, as UTF-8; invalid sequences repaired).
    public func text(_ column: Int32) throws(StoreError) -> String {
        try expect(column, SQLITE_TEXT, "text")
        return String(decoding: bytes(column), as: UTF8.self)
    }

    /// An id: 32 lower-case hex digits (128 random bits), as every id rxvault writes.
    public func id<ID: RecordIdentifier>(_ column: Int32, as kind: ID.Type = ID.self) throws(StoreError) -> ID {
        ID(checkedHex: try hexDigits(column))
    }

    /// 32 lower-case hex digits that are no row's id: a grant's reference (a keyed hash from
    /// format 3, a prescription id before).
    public func hexDigits(_ column: Int32) throws(StoreError) -> String {
        try expect(column, SQLITE_TEXT, "text")
        let utf8 = bytes(column)
        guard utf8.count == RecordID.length,
            utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) })
        else {
            throw bad(column, "is not an id (32 lower-case hex digits)")
        }
        return String(decoding: utf8, as: UTF8.self)
    }

    /// A blob, of exactly `count` bytes when given.
    public func blob(_ column: Int32, count: Int? = nil) throws(StoreError) -> [UInt8] {
        try expect(column, SQLITE_BLOB, "a blob")
        let value = bytes(column)
        if let count, value.count != count { throw bad(column, "is \(value.count) bytes, not \(count)") }
        return value
    }

    /// A blob or NULL (`audit_entry.mac` before the owner countersigns).
    public func optionalBlob(_ column: Int32, count: Int? = nil) throws(StoreError) -> [UInt8]? {
        sqlite3_column_type(statement.handle, column) == SQLITE_NULL ? nil : try blob(column, count: count)
    }

    private func bytes(_ column: Int32) -> [UInt8] {
        // The pointer first, then the length (SQLite's documented order).
        guard let p = sqlite3_column_blob(statement.handle, column) else { return [] }
        return Array(UnsafeRawBufferPointer(start: p, count: Int(sqlite3_column_bytes(statement.handle, column))))
    }

    private func expect(_ column: Int32, _ type: Int32, _ name: String) throws(StoreError) {
        let found = sqlite3_column_type(statement.handle, column)
        guard found == type else { throw bad(column, "is \(Self.typeName(found)), not \(name)") }
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
