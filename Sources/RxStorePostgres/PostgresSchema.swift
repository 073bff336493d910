import RxStore

/// The vault's tables in PostgreSQL (docs/format.md, "PostgreSQL"): the file's tables, from the
/// same description (`StoredSchema`), in PostgreSQL's types: `bytea` for blobs, `bigint` for
/// integers (`integer` for a one-row table's key), ids in the C collation (compared byte by
/// byte, as the file compares them), and the same rule for what is in the clear: random ids,
/// version numbers, the KDF header. The database never holds what the file would not.
///
/// Two differences: `rxvault_schema` holds what the file keeps in its SQLite header (the
/// application id that tells an rxvault vault from other tables, and the schema version), and
/// `position` keeps the order rows were added in (`StoredTable.keepsInsertionOrder`), which the
/// file has as its rowid.
///
/// One vault per database (in the schema first on the connection's search path): `init`
/// refuses a database that holds any table already.
enum PostgresSchema {
    /// The same number as the file's `PRAGMA application_id` ("RxVt").
    static let applicationID: Int64 = 0x5278_5674
    /// A database vault is always created at the current format (vaults older than format 4 are
    /// upgraded as files first, then copied).
    static let version = StoredSchema.currentFormat
    /// The oldest format a database holds: format 4, which the owner's next write upgrades in
    /// place (`advanceFormat`).
    static let oldestVersion = StoredSchema.oldestCreatedFormat
    /// The key of the transaction-level advisory lock every owner write takes first: one write at
    /// a time per vault (per database), across processes and machines.
    static let writeLockKey: Int64 = 0x5278_5674

    /// The statements that create a vault's tables: the marker table, then every table of
    /// `StoredSchema`.
    static var tables: [String] {
        [
            """
            CREATE TABLE rxvault_schema (
                singleton      integer PRIMARY KEY CHECK (singleton = 1),
                application_id bigint  NOT NULL,
                version        integer NOT NULL
            )
            """
        ] + StoredSchema.tables.flatMap(create)
    }

    /// The statements that create `table` and its indexes.
    static func create(_ table: StoredTable) -> [String] {
        var lines = table.columns.map { column in
            ([column.name, type(column)] + constraints(column)).joined(separator: " ")
        }
        if table.keepsInsertionOrder { lines.append("position bigserial NOT NULL") }
        if !table.compositeKey.isEmpty { lines.append("PRIMARY KEY (\(table.compositeKey.joined(separator: ", ")))") }
        return ["CREATE TABLE \(table.name) (\n" + lines.map { "    " + $0 }.joined(separator: ",\n") + "\n)"]
            + table.indexes.map { "CREATE INDEX \($0.name) ON \(table.name) (\($0.columns.joined(separator: ", ")))" }
    }

    private static func type(_ column: StoredColumn) -> String {
        switch column.kind {
        case .id: "text COLLATE \"C\""
        case .text: "text"
        case .integer: "bigint"
        case .singleton: "integer"
        case .blob: "bytea"
        }
    }

    /// NOT NULL (a key is never NULL: not declared so), PRIMARY KEY, UNIQUE, CHECK, REFERENCES.
    private static func constraints(_ column: StoredColumn) -> [String] {
        var parts: [String] = []
        if !column.nullable && !column.primaryKey { parts.append("NOT NULL") }
        if column.primaryKey { parts.append("PRIMARY KEY") }
        if column.unique { parts.append("UNIQUE") }
        if let check = column.check { parts.append("CHECK (\(check))") }
        if let table = column.references { parts.append("REFERENCES \(table)(id) ON DELETE CASCADE") }
        return parts
    }
}
