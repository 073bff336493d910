import RxStore

/// Rows a write inserts through `insertRepeated`, kept until its next statement or its commit
/// and then sent many to a statement (`RowInsert.statement(rows:)`, the statement every engine
/// spells). An import of 100,000 prescriptions made three round trips to the server per
/// prescription (its patient, its prescription row, its version), and spent most of its time
/// waiting for them; kept, they go a thousand rows to a statement.
///
/// Nothing reads a kept row back before it is sent: `PostgresSession` sends what is kept before
/// any statement. The tables go in the order they are created (`StoredSchema.tables`), each
/// after those it references (a prescription before its versions), their rows in the order they
/// came. A statement's error (a version stored twice) is then reported by the statement or commit
/// that sent it, and rolls the whole write back as it would have at the row.
struct InsertBuffer {
    /// Rows to a statement, and kept at most: about a megabyte of sealed content.
    static let rowsPerStatement = 1000

    private var rows: [RowInsert: [[BoundValue]]] = [:]
    /// For an insert that replaces: where each kept row is, by its conflict key's values. A row
    /// written twice is kept once, as written last (a statement may not replace a row twice).
    private var kept: [RowInsert: [[BoundValue]: Int]] = [:]

    private(set) var count = 0

    var isEmpty: Bool { count == 0 }

    /// Keeps a row of `insert` (`values` in the order of its columns).
    mutating func add(_ insert: RowInsert, _ values: [BoundValue]) {
        let positions = insert.conflictKeyPositions
        if !positions.isEmpty {
            let key = positions.map { values[$0] }
            if let index = kept[insert]?[key] {
                rows[insert]![index] = values
                return
            }
            kept[insert, default: [:]][key] = rows[insert, default: []].count
        }
        rows[insert, default: []].append(values)
        count += 1
    }

    /// The statements that insert what is kept, in the tables' order, with the one-row form of
    /// each for messages; the buffer is empty after.
    mutating func take() -> [(sql: String, values: [BoundValue], shown: String)] {
        let order = Dictionary(uniqueKeysWithValues: StoredSchema.tables.enumerated().map { ($1.name, $0) })
        var statements: [(String, [BoundValue], String)] = []
        for insert in rows.keys.sorted(by: { order[$0.table, default: .max] < order[$1.table, default: .max] }) {
            let kept = rows[insert]!
            var start = 0
            while start < kept.count {
                let part = kept[start..<min(start + Self.rowsPerStatement, kept.count)]
                statements.append(
                    (
                        insert.statement(rows: part.count, placeholder: PostgresRecordStore.placeholder),
                        part.flatMap { $0 }, insert.statement(rows: 1, placeholder: PostgresRecordStore.placeholder)
                    ))
                start += part.count
            }
        }
        self = InsertBuffer()
        return statements
    }
}
