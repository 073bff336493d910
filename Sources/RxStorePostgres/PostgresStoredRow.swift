import NIOCore
import PostgresNIO
import RxStore

/// One result row of a database vault, as `StoredRowReading` says (and `StoredRow` reads the
/// file's): each value checked for its wire type, for NULL and for its range or length. The
/// tables' types and CHECK constraints say the same, but whoever owns the tables can alter them.
public struct PostgresStoredRow: StoredRowReading {
    let cells: [PostgresCell]
    public let table: String
    /// How many leading columns are the row's key, which messages name it by (0: the one row).
    let keyColumns: Int

    init(_ row: PostgresRow, of table: String, keyColumns: Int = 1) {
        cells = Array(row)
        self.table = table
        self.keyColumns = keyColumns
    }

    public func integer(_ column: Int, in range: ClosedRange<Int64>) throws(StoreError) -> Int {
        let value = try int64(column)
        guard range.contains(value), let int = Int(exactly: value) else {
            throw bad(column, "is \(value), outside \(range.lowerBound)...\(range.upperBound)")
        }
        return int
    }

    public func text(_ column: Int) throws(StoreError) -> String {
        String(decoding: try bytes(column, [.text, .varchar, .bpchar, .name], "text"), as: UTF8.self)
    }

    public func hexDigits(_ column: Int) throws(StoreError) -> String {
        let utf8 = try bytes(column, [.text, .varchar, .bpchar], "text")
        guard Self.areHexDigits(utf8) else { throw bad(column, "is not an id (32 lower-case hex digits)") }
        return String(decoding: utf8, as: UTF8.self)
    }

    public func blob(_ column: Int, count: Int?) throws(StoreError) -> [UInt8] {
        let value = try bytes(column, [.bytea], "bytes")
        if let count, value.count != count { throw bad(column, "is \(value.count) bytes, not \(count)") }
        return value
    }

    public func isNull(_ column: Int) -> Bool { column >= cells.count || cells[column].bytes == nil }

    private func int64(_ column: Int) throws(StoreError) -> Int64 {
        let cell = try cell(column)
        guard var buffer = cell.bytes else { throw bad(column, "is NULL, not an integer") }
        guard cell.format == .binary else { throw bad(column, "is not in binary form") }
        switch cell.dataType {
        case .int8:
            guard buffer.readableBytes == 8, let v = buffer.readInteger(as: Int64.self) else { break }
            return v
        case .int4:
            guard buffer.readableBytes == 4, let v = buffer.readInteger(as: Int32.self) else { break }
            return Int64(v)
        case .int2:
            guard buffer.readableBytes == 2, let v = buffer.readInteger(as: Int16.self) else { break }
            return Int64(v)
        default:
            throw bad(column, "is of type \(cell.dataType), not an integer")
        }
        throw bad(column, "is a malformed integer")
    }

    private func bytes(_ column: Int, _ types: [PostgresDataType], _ name: String) throws(StoreError) -> [UInt8] {
        let cell = try cell(column)
        guard let buffer = cell.bytes else { throw bad(column, "is NULL, not \(name)") }
        guard types.contains(cell.dataType) else { throw bad(column, "is of type \(cell.dataType), not \(name)") }
        return Array(buffer.readableBytesView)
    }

    private func cell(_ column: Int) throws(StoreError) -> PostgresCell {
        guard column < cells.count else { throw StoreError.corrupt("\(table): a column is missing from the result") }
        return cells[column]
    }

    func bad(_ column: Int, _ problem: String) -> StoreError {
        .corrupt("\(rowName): \(column < cells.count ? cells[column].columnName : "column \(column)") \(problem)")
    }

    /// "prescription_version row (prescription_id '0123abcd…', version 2)".
    private var rowName: String {
        guard keyColumns > 0 else { return "\(table) (its one row)" }
        let key = cells.prefix(keyColumns).map { cell -> String in
            guard let buffer = cell.bytes else { return "\(cell.columnName) NULL" }
            if cell.dataType == .text || cell.dataType == .varchar {
                let utf8 = Array(buffer.readableBytesView)
                let shown = utf8.prefix(8).map {
                    (0x21...0x7e).contains($0) && $0 != 0x27 ? Character(Unicode.Scalar($0)) : "?"
                }
                return "\(cell.columnName) '" + String(shown) + (utf8.count > 8 ? "…'" : "'")
            }
            if cell.dataType == .int8 || cell.dataType == .int4, let value = try? int64(cell.columnIndex) {
                return "\(cell.columnName) \(value)"
            }
            return "\(cell.columnName) (\(buffer.readableBytes) bytes)"
        }
        return "\(table) row (\(key.joined(separator: ", ")))"
    }
}
