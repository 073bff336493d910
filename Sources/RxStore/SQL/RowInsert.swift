/// An INSERT into one table, described once and spelled by every engine that speaks SQL for one
/// row or for many (`statement(rows:placeholder:)`), in that engine's placeholders. With a
/// conflict key, a row whose key is stored already replaces that row's other columns
/// (`ON CONFLICT (...) DO UPDATE`, which SQLite and PostgreSQL both speak); without, it is refused.
///
/// The inserts a write repeats thousands of times (an import: a patient, a prescription and its
/// first version per prescription) are named here, and go through `SQLStatements.insertRepeated`,
/// so that each engine sends them its fastest way: SQLite one row at a time on a statement kept
/// prepared, PostgreSQL many rows to a statement (`InsertBuffer`), a round trip saved per row.
public struct RowInsert: Hashable, Sendable {
    public let table: String
    /// The columns bound, in the order the values come.
    public let columns: [String]
    /// The columns a stored row is matched on (a key or a UNIQUE constraint); empty: a row whose
    /// key is stored is refused.
    public let conflictKey: [String]
    /// Whether the table is one row: its `singleton` key, always 1, goes before the columns.
    let singleton: Bool

    public init(table: String, columns: [String], replacingOn conflictKey: [String] = []) {
        self.init(table: table, columns: columns, conflictKey: conflictKey, singleton: false)
    }

    /// The insert of `R`'s rows (`StoredRecord`); a one-row table's replaces its row when the
    /// conflict key is `singleton`.
    public init<R: StoredRecord>(_ kind: R.Type, replacingOn conflictKey: [String] = []) {
        self.init(table: R.table, columns: R.columns, conflictKey: conflictKey, singleton: R.keyColumns == 0)
    }

    private init(table: String, columns: [String], conflictKey: [String], singleton: Bool) {
        self.table = table
        self.columns = columns
        self.conflictKey = conflictKey
        self.singleton = singleton
    }

    /// The statement that inserts `rows` rows: parameter `placeholder(n)` for the `n`th value
    /// (from 1), row after row.
    public func statement(rows: Int, placeholder: (Int) -> String) -> String {
        let width = columns.count
        let tuples = (0..<rows).map { row in
            let values = (1...width).map { placeholder(row * width + $0) }
            return "(" + ((singleton ? ["1"] : []) + values).joined(separator: ", ") + ")"
        }
        let names = (singleton ? ["singleton"] : []) + columns
        return "INSERT INTO \(table) (\(names.joined(separator: ", "))) VALUES \(tuples.joined(separator: ", "))"
            + conflictClause
    }

    /// ` ON CONFLICT (key) DO UPDATE SET` every other column to the new row's; nothing when the
    /// insert has no conflict key.
    private var conflictClause: String {
        guard !conflictKey.isEmpty else { return "" }
        let updates = columns.filter { !conflictKey.contains($0) }.map { "\($0) = excluded.\($0)" }
        return " ON CONFLICT (\(conflictKey.joined(separator: ", "))) DO UPDATE SET \(updates.joined(separator: ", "))"
    }

    /// The positions in `columns` of the conflict key's columns: what tells two rows of a
    /// replacing insert apart (a statement may not replace the same row twice).
    public var conflictKeyPositions: [Int] { conflictKey.compactMap { columns.firstIndex(of: $0) } }

    // MARK: - The inserts a write repeats

    /// A new prescription's row (its id), before its first version.
    public static let prescription = RowInsert(table: "prescription", columns: ["id"])
    /// A version; one already stored is refused, never replaced.
    public static let prescriptionVersion = RowInsert(PrescriptionVersionRecord.self)
    /// A patient, replacing the row with the same id.
    public static let patient = RowInsert(PatientRecord.self, replacingOn: ["id"])
}
