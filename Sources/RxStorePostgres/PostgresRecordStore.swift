import PostgresNIO
import RxStore

/// A vault in a PostgreSQL database: the same `RecordStore` as the vault file, holding the same
/// ciphertext in the same tables (`PostgresSchema`), for a practice whose several machines and
/// `rxvault serve` instances share one vault. This file opens and creates it. The table
/// requirements are written once for both engines (RxStore's `SQLStatements`); beside this file
/// are what they run on (`+SQL`), where the format number is kept (`+Schema`), two reads of many
/// prescriptions in one round trip (`+Prescriptions`) and the engine's own part (`+Engine`:
/// transactions, the write lock, the structural check, snapshots to a file).
public final class PostgresRecordStore: RecordStore {
    let session: PostgresSession
    /// The vault's location as messages show it (never a password).
    public var location: PostgresLocation { session.location }

    /// Opens the vault in the database at `location`, checking it is one of ours and of a version
    /// we read.
    public init(
        openingAt location: PostgresLocation, environment: [String: String], busyTimeoutMilliseconds: Int32
    ) throws(StoreError) {
        session = try PostgresSession(
            location: location, environment: environment, busyTimeoutMilliseconds: busyTimeoutMilliseconds)
        let marker = try session.query(Self.markerQuery)
        guard let row = marker.first, (try? row.decode(Bool.self)) == true else {
            if try Self.tableCount(session) > 0 {
                throw StoreError.notAVault(path: location.display, reason: "a database that holds other tables")
            }
            throw StoreError.missing(path: location.display)
        }
        let rows = try session.query("SELECT application_id, version FROM rxvault_schema WHERE singleton = 1")
        guard let first = rows.first else { throw StoreError.corrupt("rxvault_schema has no row") }
        let stored = PostgresStoredRow(first, of: "rxvault_schema", keyColumns: 0)
        guard try stored.integer(0, in: Int64.min...Int64.max) == Int(PostgresSchema.applicationID) else {
            throw StoreError.notAVault(path: location.display, reason: "unknown application id")
        }
        let version = try stored.integer(1, in: Int64(Int32.min)...Int64(Int32.max))
        guard version <= PostgresSchema.version else {
            throw StoreError.unsupportedVersion(found: version, supported: PostgresSchema.version)
        }
        // Format 4 (the first a database held) opens, and the owner's next write upgrades it.
        guard version >= PostgresSchema.oldestVersion else { throw StoreError.corrupt("schema version \(version)") }
    }

    /// Creates the vault's tables in the (empty) database at `location`, with `header`, the audit
    /// log's head and the first state root and key ring, then runs `fill` on the new store: all in
    /// one transaction, so a failed `init` or copy leaves the database as it was. Refuses a
    /// database that holds a vault already (`StoreError.alreadyExists`) or any other table.
    public static func create(
        at location: PostgresLocation, environment: [String: String], header: VaultHeaderRecord,
        auditHeadMAC: [UInt8], state: VaultStateRecord? = nil, keyRing: KeyRingRecord? = nil,
        busyTimeoutMilliseconds: Int32 = 5_000, fill: ((PostgresRecordStore) throws -> Void)? = nil
    ) throws {
        guard (PostgresSchema.oldestVersion...PostgresSchema.version).contains(header.formatVersion) else {
            throw StoreError.unsupportedVersion(found: header.formatVersion, supported: PostgresSchema.version)
        }
        let store = try PostgresRecordStore(
            creatingAt: location, environment: environment, busyTimeoutMilliseconds: busyTimeoutMilliseconds)
        try store.write {
            if try store.session.query(Self.markerQuery).first?.decode(Bool.self)
                == true
            {
                throw StoreError.alreadyExists(path: location.display)
            }
            let count = try tableCount(store.session)
            guard count == 0 else {
                throw StoreError.cannotWrite(
                    "\(location.display) already holds \(count) table\(count == 1 ? "" : "s"): a vault needs a database of its own"
                )
            }
            do {
                for statement in PostgresSchema.tables { try store.session.query(statement) }
            } catch StoreError.engine(_, let code, _, _) where code == "42P07" || code == "23505" {
                // Another `init` created the tables first (this one waited on its catalog lock).
                throw StoreError.alreadyExists(path: location.display)
            }
            try store.session.query(
                "INSERT INTO rxvault_schema (singleton, application_id, version) VALUES (1, $1, $2)",
                [.integer(PostgresSchema.applicationID), .integer(Int64(header.formatVersion))])
            try store.insertRow(header)
            try store.setAuditHead(sequence: 0, hash: [UInt8](repeating: 0, count: 32), mac: auditHeadMAC)
            if let state { try store.setVaultState(state) }
            if let keyRing { try store.setKeyRing(keyRing) }
            try fill?(store)
        }
    }

    /// A connection to a database that may hold no vault yet (`create`).
    private init(creatingAt location: PostgresLocation, environment: [String: String], busyTimeoutMilliseconds: Int32)
        throws(StoreError)
    {
        session = try PostgresSession(
            location: location, environment: environment, busyTimeoutMilliseconds: busyTimeoutMilliseconds)
    }

    /// Whether the schema the vault's tables are in (the first of the search path) has the marker
    /// table; one in another schema on the path does not count.
    static let markerQuery = "SELECT to_regclass(quote_ident(current_schema()) || '.rxvault_schema') IS NOT NULL"

    /// Tables, views and sequences in the schema the vault's tables are created in, whoever owns
    /// them (`information_schema` would show only those this role may use).
    private static func tableCount(_ session: PostgresSession) throws(StoreError) -> Int {
        let rows = try session.query(
            """
            SELECT count(*) FROM pg_catalog.pg_class
            WHERE relnamespace = (SELECT oid FROM pg_catalog.pg_namespace WHERE nspname = current_schema())
              AND relkind IN ('r', 'v', 'm', 'p', 'f', 'S')
            """)
        guard let row = rows.first else { return 0 }
        return try PostgresStoredRow(row, of: "information_schema.tables", keyColumns: 0)
            .integer(0, in: 0...Int64.max)
    }

    // MARK: - Helpers for the sections

    /// Rows of `sql` read by `read` (one per result row).
    func rows<T>(
        _ sql: String, _ values: [BoundValue] = [], table: String, keyColumns: Int = 1,
        _ read: (PostgresStoredRow) throws(StoreError) -> T
    ) throws(StoreError) -> [T] {
        var result: [T] = []
        for row in try session.query(sql, values) {
            result.append(try read(PostgresStoredRow(row, of: table, keyColumns: keyColumns)))
        }
        return result
    }

    func first<T>(
        _ sql: String, _ values: [BoundValue] = [], table: String, keyColumns: Int = 1,
        _ read: (PostgresStoredRow) throws(StoreError) -> T
    ) throws(StoreError) -> T? {
        guard let row = try session.query(sql, values).first else { return nil }
        return try read(PostgresStoredRow(row, of: table, keyColumns: keyColumns))
    }

    /// Every row of `sql` as a record (`StoredRecord.init(row:)`).
    func records<R: StoredRecord>(_ sql: String, _ values: [BoundValue] = [], as kind: R.Type = R.self)
        throws(StoreError) -> [R]
    {
        try rows(sql, values, table: R.table, keyColumns: R.keyColumns) { row throws(StoreError) in try R(row: row) }
    }

    /// Inserts `record` as a row of its table (`StoredRecord`).
    func insertRow<R: StoredRecord>(_ record: R) throws(StoreError) {
        try session.query(R.insertStatement(placeholder: Self.placeholder), record.storedValues.map(BoundValue.init))
    }

    /// `count(*)` of `sql`.
    func count(_ sql: String) throws(StoreError) -> Int {
        try first(sql, table: "count", keyColumns: 0) { row throws(StoreError) in
            try row.integer(0, in: 0...Int64.max)
        } ?? 0
    }
}
