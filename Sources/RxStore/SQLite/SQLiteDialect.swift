/// The vault file's SQL for a `StoredTable`: STRICT tables with SQLite's types, WITHOUT ROWID
/// for a key over several columns, an order of insertion kept as the rowid.
///
/// SQLite keeps each CREATE statement as written (in `sqlite_master`), so the text made here is
/// that of every vault file made so far, space for space: the columns' names padded as the
/// statements of formats 1 to 4 had them (`StoredSchemaTests` compares the two).
enum SQLiteDialect {
    /// The statements that create `table` and its indexes.
    static func create(_ table: StoredTable) -> [String] {
        let nameWidth = nameWidths[table.name] ?? table.columns.map(\.name.count).max() ?? 0
        let typeWidth = unalignedTypes.contains(table.name) ? 0 : table.columns.map { type($0).count }.max() ?? 0
        var lines = table.columns.map { column -> String in
            let constraints = self.constraints(column)
            let type = self.type(column)
            guard !constraints.isEmpty else { return padded(column.name, nameWidth) + " " + type }
            return padded(column.name, nameWidth) + " " + padded(type, typeWidth) + " " + constraints
        }
        if !table.compositeKey.isEmpty { lines.append("PRIMARY KEY (\(table.compositeKey.joined(separator: ", ")))") }
        let options = table.compositeKey.isEmpty ? "STRICT" : "STRICT, WITHOUT ROWID"
        let body = lines.map { "    " + $0 }.joined(separator: ",\n")
        return ["CREATE TABLE \(table.name) (\n\(body)\n) \(options)"]
            + table.indexes.map { "CREATE INDEX \($0.name) ON \(table.name) (\($0.columns.joined(separator: ", ")))" }
    }

    /// `create` for several tables, as one script for `Database.execute`.
    static func script(_ tables: [StoredTable]) -> String {
        tables.flatMap { create($0) }.map { $0 + ";" }.joined(separator: "\n")
    }

    static func type(_ column: StoredColumn) -> String {
        switch column.kind {
        case .id, .text: "TEXT"
        case .integer, .singleton: "INTEGER"
        case .blob: "BLOB"
        }
    }

    /// NOT NULL, PRIMARY KEY, UNIQUE, CHECK and REFERENCES, in that order. An INTEGER PRIMARY KEY
    /// is the rowid, which is never NULL: it is not declared so.
    private static func constraints(_ column: StoredColumn) -> String {
        var parts: [String] = []
        let rowid = column.primaryKey && (column.kind == .integer || column.kind == .singleton)
        if !column.nullable && !rowid { parts.append("NOT NULL") }
        if column.primaryKey { parts.append("PRIMARY KEY") }
        if column.unique { parts.append("UNIQUE") }
        if let check = column.check { parts.append("CHECK (\(check))") }
        if let table = column.references { parts.append("REFERENCES \(table)(id) ON DELETE CASCADE") }
        return parts.joined(separator: " ")
    }

    private static func padded(_ text: String, _ width: Int) -> String {
        text + String(repeating: " ", count: max(0, width - text.count))
    }

    /// Where format 1 aligned the names to fewer characters than the longest
    /// (`max_attachment_bytes` came after the others were aligned).
    private static let nameWidths = ["vault_header": 16]
    /// Tables whose statements did not align the types after the names.
    private static let unalignedTypes: Set = ["audit_entry", "search_index", "manifest", "person_buckets"]
}
