import RxStore

/// Rows a write inserts, kept until its next statement or its commit and then sent many to a
/// statement. An import of 100,000 prescriptions made three round trips to the server per
/// prescription (its patient, its prescription row, its version), and spent most of its time
/// waiting for them; kept, they go a thousand rows to a statement.
///
/// Only rows that nothing reads back before the write's next statement (`PostgresSession` sends
/// what is kept before any statement), of tables whose order the buffer fixes by their keys:
/// `person`, then `prescription`, then `prescription_version` (which names its prescription).
/// A statement's error (a version stored twice) is then reported by the statement or commit
/// that sent it, and rolls the whole write back as it would have at the row.
struct InsertBuffer {
    enum Table: Int, CaseIterable {
        case person, prescription, prescriptionVersion

        var name: String {
            switch self {
            case .person: "person"
            case .prescription: "prescription"
            case .prescriptionVersion: "prescription_version"
            }
        }

        var columns: [String] {
            switch self {
            case .person: PatientRecord.columns
            case .prescription: ["id"]
            case .prescriptionVersion: PrescriptionVersionRecord.columns
            }
        }

        /// What follows the rows: a patient record is written again when it changes.
        private var conflict: String {
            self == .person ? " ON CONFLICT (id) DO UPDATE SET info = excluded.info, mac = excluded.mac" : ""
        }

        /// The statement that inserts `rows` rows (`$1`, `$2`... row after row).
        func statement(rows: Int) -> String {
            let width = columns.count
            let tuples = (0..<rows).map { row in
                "(" + (1...width).map { "$\(row * width + $0)" }.joined(separator: ", ") + ")"
            }
            return "INSERT INTO \(name) (\(columns.joined(separator: ", "))) VALUES "
                + tuples.joined(separator: ", ") + conflict
        }
    }

    /// Rows to a statement, and kept at most: about a megabyte of sealed content.
    static let rowsPerStatement = 1000

    private var rows: [[[BoundValue]]] = Table.allCases.map { _ in [] }
    /// Where each kept patient record is: one written twice is kept once, as written last (a
    /// statement may not upsert the same row twice).
    private var patientRows: [String: Int] = [:]

    var count: Int { rows.reduce(0) { $0 + $1.count } }

    var isEmpty: Bool { rows.allSatisfy(\.isEmpty) }

    /// Keeps a row of `table` (`values` in the order of its `columns`; the first is its key).
    mutating func add(_ table: Table, _ values: [BoundValue]) {
        if table == .person, case .text(let id) = values.first {
            if let index = patientRows[id] {
                rows[table.rawValue][index] = values
                return
            }
            patientRows[id] = rows[table.rawValue].count
        }
        rows[table.rawValue].append(values)
    }

    /// The statements that insert what is kept, in the tables' order, with the one-row form of
    /// each for messages; the buffer is empty after.
    mutating func take() -> [(sql: String, values: [BoundValue], shown: String)] {
        var statements: [(String, [BoundValue], String)] = []
        for table in Table.allCases {
            let kept = rows[table.rawValue]
            var start = 0
            while start < kept.count {
                let part = kept[start..<min(start + Self.rowsPerStatement, kept.count)]
                statements.append((table.statement(rows: part.count), part.flatMap { $0 }, table.statement(rows: 1)))
                start += part.count
            }
        }
        self = InsertBuffer()
        return statements
    }
}
