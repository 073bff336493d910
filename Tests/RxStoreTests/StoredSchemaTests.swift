import Foundation
import RxStorePostgres
import RxTestSupport
import Testing

@testable import RxStore

/// The schemas generated from the one description (`StoredSchema`) are those every vault made
/// before holds (`RecordedSchemas`): a vault file's `sqlite_master` text, space for space (SQLite
/// keeps a CREATE statement as written), and a database's catalog (PostgreSQL keeps none of the
/// text, only what it means).
@Suite struct StoredSchemaTests {
    let folder = try! TemporaryDirectory(prefix: "rxschema")

    /// Every table and index of the file by name: its type, its table and its SQL ("-" for the
    /// indexes SQLite makes itself for a key or UNIQUE, which have none).
    func schema(of path: String) throws -> [String: String] {
        var objects: [String: String] = [:]
        try Database(path: path).prepare("SELECT type, name, tbl_name, sql FROM sqlite_master").forEach { row in
            objects[row.text(1) ?? "?"] = "\(row.text(0) ?? "?") on \(row.text(2) ?? "?"): \(row.text(3) ?? "-")"
        }
        return objects
    }

    @Test func aNewVaultFileHasTheSchemaTextOfEveryVaultFileBefore() throws {
        // As every vault file was made: format 1's tables, then the steps of formats 2, 3 and 4.
        let recorded = folder.path("recorded.rxv")
        #expect(FileManager.default.createFile(atPath: recorded, contents: nil))
        let database = try Database(path: recorded)
        for script in [
            RecordedSchemas.sqliteFormatOne, Schema.version2, Schema.version3, Schema.version4Patients,
            Schema.version4KeySlots, RecordedSchemas.sqlitePatientBuckets
        ] {
            try database.execute(script)
        }
        let made = folder.path("made.rxv")
        try SQLiteRecordStore.create(at: made, header: RecordStoreCases.header(format: 6), auditHeadMAC: [])
        // The patient buckets' table comes with the first owner write that sets them, as before.
        #expect(try schema(of: made)["person_buckets"] == nil)
        let store = try SQLiteRecordStore(openingAt: made)
        try store.write { try store.setPatientBuckets(PatientBucketsRecord(content: [1], mac: [2])) }

        let before = try schema(of: recorded)
        let now = try schema(of: made)
        #expect(Set(StoredSchema.tables.map(\.name)).isSubset(of: Set(before.keys)))
        #expect(Set(now.keys) == Set(before.keys))
        for (name, sql) in before { #expect(now[name] == sql, "\(name)") }
    }

    /// A table a later format adds is created from the description, by every engine, inside its step.
    @Test func aFormatStepCreatesTheTablesItAddsFromTheDescription() throws {
        let scripts = SQLiteDialect.create(StoredSchema.accessGrant)
        #expect(
            scripts == [
                """
                CREATE TABLE access_grant (
                    id          TEXT NOT NULL PRIMARY KEY CHECK (length(id) = 32),
                    client_id   TEXT NOT NULL REFERENCES client(id) ON DELETE CASCADE,
                    reference   TEXT NOT NULL UNIQUE CHECK (length(reference) = 32),
                    sealed_keys BLOB NOT NULL,
                    info        BLOB NOT NULL,
                    mac         BLOB NOT NULL
                ) STRICT
                """,
                "CREATE INDEX access_grant_by_client ON access_grant (client_id)"
            ])
    }

    /// The tables' columns (types, collations, NULL, defaults), constraints and indexes, as the
    /// catalog has them.
    func catalog(_ server: PostgresServer, _ database: String) throws -> String {
        try server.psql(
            """
            SELECT table_name, ordinal_position, column_name, data_type, collation_name, is_nullable, column_default
            FROM information_schema.columns WHERE table_schema = 'public' ORDER BY 1, 2;
            SELECT conrelid::regclass::text AS t, conname, contype, pg_get_constraintdef(oid)
            FROM pg_constraint WHERE connamespace = 'public'::regnamespace ORDER BY 1, 2;
            SELECT tablename, indexname, indexdef FROM pg_indexes WHERE schemaname = 'public' ORDER BY 1, 2;
            SELECT sequencename, data_type, start_value, increment_by FROM pg_sequences
            WHERE schemaname = 'public' ORDER BY 1
            """, database: database)
    }

    @Test func aNewDatabaseHasTheTablesOfEveryDatabaseBefore() throws {
        let server = try PostgresServer.shared()
        let recorded = try server.createDatabase()
        _ = try server.psql(RecordedSchemas.postgres.joined(separator: ";\n"), database: recorded.database)
        let made = try server.createDatabase()
        try PostgresEngine(environment: made.environment).create(
            made.url, header: RecordStoreCases.header(format: 6), auditHeadMAC: [], state: nil, keyRing: nil,
            busyTimeoutMilliseconds: 5_000, fill: nil)
        let before = try catalog(server, recorded.database)
        #expect(before.contains("key_ring") && before.contains("attachment_position_seq"))
        let now = try catalog(server, made.database)
        #expect(now == before)
    }
}
