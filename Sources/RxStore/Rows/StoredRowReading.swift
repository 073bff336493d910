/// One result row of a vault table, read as the schema says its values are, whatever the
/// engine: each value checked for its type, for NULL and for its range or length where it is
/// read, so that a value rxvault never writes is `StoreError.corrupt` naming the table, the row
/// and the column, never a number handed on for a later conversion or sum to trap on. Each
/// engine's row adopts it (`StoredRow` for SQLite, `PostgresStoredRow`); each record is decoded
/// from it once (`StoredRecord.init(row:)`), for every engine.
///
/// Columns are numbered from 0 in the order the query selected them.
public protocol StoredRowReading {
    /// The table the row is from, as messages name it.
    var table: String { get }
    /// A 64-bit integer within `range`.
    func integer(_ column: Int, in range: ClosedRange<Int64>) throws(StoreError) -> Int
    /// Text (any, as UTF-8; invalid sequences repaired).
    func text(_ column: Int) throws(StoreError) -> String
    /// 32 lower-case hex digits: an id, or a grant's reference (a keyed hash from format 3, a
    /// prescription id before).
    func hexDigits(_ column: Int) throws(StoreError) -> String
    /// A blob, of exactly `count` bytes when given.
    func blob(_ column: Int, count: Int?) throws(StoreError) -> [UInt8]
    /// Whether the value is NULL (or the column is not in the result).
    func isNull(_ column: Int) -> Bool
}

extension StoredRowReading {
    /// A non-negative integer as `UInt64` (KDF costs).
    public func unsigned(_ column: Int) throws(StoreError) -> UInt64 {
        UInt64(try integer(column, in: StoredRange.nonNegative))
    }

    /// An id: 32 lower-case hex digits (128 random bits), as every id rxvault writes.
    public func id<ID: RecordIdentifier>(_ column: Int, as kind: ID.Type = ID.self) throws(StoreError) -> ID {
        ID(checkedHex: try hexDigits(column))
    }

    /// A blob of any length.
    public func blob(_ column: Int) throws(StoreError) -> [UInt8] { try blob(column, count: nil) }

    /// A blob or NULL (`audit_entry.mac` before the owner countersigns).
    public func optionalBlob(_ column: Int, count: Int? = nil) throws(StoreError) -> [UInt8]? {
        isNull(column) ? nil : try blob(column, count: count)
    }

    /// Whether `bytes` are 32 lower-case hex digits: what `hexDigits` accepts.
    public static func areHexDigits(_ bytes: [UInt8]) -> Bool {
        bytes.count == RecordID.length
            && bytes.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
    }
}
