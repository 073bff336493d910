/// One table of the vault, as data: its columns, their abstract types, its keys and indexes. The
/// one description both engines' schemas are generated from (`StoredSchema.tables`; SQLite's
/// `SQLiteDialect`, PostgreSQL's `PostgresSchema`), so a table or a column is added once and
/// cannot differ between them. Each engine maps the abstract types to its own SQL types.
public struct StoredTable: Sendable, Equatable {
    public let name: String
    public let columns: [StoredColumn]
    /// The key when it is several columns (`PRIMARY KEY (a, b)`); a one-column key is marked on
    /// its column instead.
    public let compositeKey: [String]
    /// Whether rows are read back in the order they were added (a prescription's attachments,
    /// the clients, the grants): SQLite keeps that order as the rowid; a server engine in a
    /// column of its own.
    public let keepsInsertionOrder: Bool
    public let indexes: [StoredIndex]
    /// The format that added the table in this form: a vault file older than that does not hold
    /// it (`SQLStatements.holds`).
    public let format: Int

    init(
        _ name: String, _ columns: [StoredColumn], compositeKey: [String] = [], keepsInsertionOrder: Bool = false,
        indexes: [StoredIndex] = [], format: Int = 1
    ) {
        self.format = format
        self.name = name
        self.columns = columns
        self.compositeKey = compositeKey
        self.keepsInsertionOrder = keepsInsertionOrder
        self.indexes = indexes
    }
}

/// A column of a `StoredTable`.
public struct StoredColumn: Sendable, Equatable {
    /// What a column holds, whatever the engine.
    public enum Kind: Sendable, Equatable {
        /// An id or a reference: 32 lower-case hex digits, compared byte by byte (a prefix is a
        /// range scan on the key).
        case id
        /// Other text (a KDF's name, a key slot's kind).
        case text
        /// A 64-bit signed integer.
        case integer
        /// The key of a table of one row: always 1.
        case singleton
        /// Bytes: ciphertext, MACs, salts, hashes.
        case blob
    }

    public let name: String
    public let kind: Kind
    /// Whether NULL is allowed (`audit_entry.mac` before the owner countersigns; and SQLite's
    /// `prescription.id`, declared so by format 1: its key's uniqueness and CHECK hold anyway).
    public let nullable: Bool
    public let primaryKey: Bool
    public let unique: Bool
    /// A CHECK constraint's condition, the same SQL in every engine.
    public let check: String?
    /// The table whose `id` this column names; its rows go when that row goes (ON DELETE CASCADE).
    public let references: String?

    init(
        _ name: String, _ kind: Kind, nullable: Bool = false, primaryKey: Bool = false, unique: Bool = false,
        check: String? = nil, references: String? = nil
    ) {
        self.name = name
        self.kind = kind
        self.nullable = nullable
        self.primaryKey = primaryKey
        self.unique = unique
        self.check = check
        self.references = references
    }

    /// The key of a table of one row.
    static let singleton = StoredColumn("singleton", .singleton, primaryKey: true, check: "singleton = 1")

    /// A table's id: its key, 32 hex digits.
    static func id(_ name: String = "id", nullable: Bool = false) -> StoredColumn {
        StoredColumn(name, .id, nullable: nullable, primaryKey: true, check: "length(\(name)) = 32")
    }
}

/// An index on some columns of a table, for the lookups RxVault makes by them.
public struct StoredIndex: Sendable, Equatable {
    public let name: String
    public let columns: [String]
}
