import Foundation
import RxTestSupport
import Testing

@testable import RxStore

/// What is the vault file's alone: its SQLite settings, statements, checks on values an attacker
/// wrote past SQLite's own, and files that are no vault. What every engine must do is in
/// `RecordStoreCases`, run against each.
@Suite struct RecordStoreTests {
    /// Each test's own folder (a suite's instance is made per test), removed after it.
    let folder = try! TemporaryDirectory(prefix: "rxstore")

    var header: VaultHeaderRecord {
        VaultHeaderRecord(
            formatVersion: 5, vaultID: Array(repeating: 1, count: 16), kdfAlgorithm: "argon2id13",
            kdfOpsLimit: 2, kdfMemLimit: 64 << 20, kdfSalt: Array(repeating: 2, count: 16),
            wrappedRootKey: Array(repeating: 3, count: 72), maxAttachmentBytes: 32 << 20,
            auditPublicKey: Array(repeating: 4, count: 32))
    }

    func path(_ name: String) -> String { folder.path(name) }

    @Test func createsAStrictWALVaultAndReadsItBack() throws {
        let p = path("v.rxv")
        try SQLiteRecordStore.create(at: p, header: header, auditHeadMAC: [])
        let store = try SQLiteRecordStore(openingAt: p)
        #expect(try store.header() == header)
        #expect(try store.database.integer("PRAGMA application_id") == Int64(Schema.applicationID))
        let journal = try store.database.prepare("PRAGMA journal_mode")
        #expect(try journal.step() && journal.text(0) == "wal")
        #expect(try store.database.integer("PRAGMA secure_delete") == 1)
        #expect(try store.database.integer("PRAGMA synchronous") == 2, "FULL")
        #expect(try store.database.integer("PRAGMA foreign_keys") == 1)
        // STRICT: a text where a blob belongs is refused by SQLite itself.
        #expect(throws: StoreError.self) {
            try store.database.execute("INSERT INTO prescription (id) VALUES (x'00')")
        }
    }

    /// Reused statements (`Database.reusable`) have one user at a time: a use of the same SQL
    /// inside another's rows gets its own handle and does not reset the outer one (the removed
    /// cache did: the outer loop stopped after its first row), and a released handle is reused.
    @Test func aReusableStatementIsNeverSharedBetweenTwoUses() throws {
        let p = path("reuse.rxv")
        try SQLiteRecordStore.create(at: p, header: header, auditHeadMAC: [])
        let database = try SQLiteRecordStore(openingAt: p).database
        try database.execute("CREATE TABLE n (v INTEGER); INSERT INTO n VALUES (1), (2), (3);")
        let sql = "SELECT v FROM n ORDER BY v"
        var pairs: [(Int64, Int64)] = []
        let outer = try database.reusable(sql)
        try outer.forEach { row throws(StoreError) in
            let v = row.int(0)
            let inner = try database.reusable(sql)
            #expect(inner.handle != outer.handle)
            try inner.forEach { pairs.append((v, $0.int(0))) }
        }
        #expect(pairs.map(\.0) == [1, 1, 1, 2, 2, 2, 3, 3, 3])
        #expect(pairs.map(\.1) == [1, 2, 3, 1, 2, 3, 1, 2, 3])
        // Released (reset, bindings cleared), the handle serves the next use.
        let handle = outer.handle
        _ = consume outer
        let next = try database.reusable(sql)
        #expect(next.handle == handle)
        #expect(try next.first { $0.int(0) } == 1)
    }

    /// Every id type holds 32 lower-case hex digits and nothing else; 16 bytes spell one.
    @Test func idsAreThirtyTwoLowerCaseHexDigits() throws {
        #expect(AttachmentID(hex: String(repeating: "0f", count: 16))?.hex == String(repeating: "0f", count: 16))
        #expect(AttachmentID(hex: String(repeating: "0F", count: 16)) == nil)
        #expect(ClientID(hex: String(repeating: "a", count: 31)) == nil)
        #expect(ClientID(hex: String(repeating: "a", count: 33)) == nil)
        #expect(GrantID(hex: String(repeating: "g", count: 32)) == nil)
        let id = try #require(PatientID(bytes: [0x00, 0x01, 0xab, 0xff] + Array(repeating: 0x10, count: 12)))
        #expect(id.hex == "0001abff" + String(repeating: "10", count: 12))
        #expect(id.short == "0001abff")
        #expect(PatientID(bytes: [0x01]) == nil)
        let a = PrescriptionID(hex: "abcdef01" + String(repeating: "0", count: 24))!
        let b = PrescriptionID(hex: "abcdef02" + String(repeating: "0", count: 24))!
        #expect(RecordID.shortForms([a, b]) == [a: "abcdef01", b: "abcdef02"])
        let c = PrescriptionID(hex: "abcdef01" + String(repeating: "0", count: 23) + "1")!
        #expect(PrescriptionID.shortForms([a, c])[a] == "abcdef01" + String(repeating: "0", count: 24))
    }

    /// The engine's structural check (`check`'s first stage) is clean on a new store and names a
    /// row that points at a missing one, through the protocol alone.
    @Test func theStructuralCheckFindsARowPointingNowhere() throws {
        let p = path("v.rxv")
        try SQLiteRecordStore.create(at: p, header: header, auditHeadMAC: [])
        let sqlite = try SQLiteRecordStore(openingAt: p)
        let store: any RecordStore = sqlite
        #expect(try store.read { try store.checkStructure() } == [])
        try sqlite.database.execute(
            """
            PRAGMA foreign_keys = OFF;
            INSERT INTO prescription_version (prescription_id, version, wrapped_key, content, mac)
            VALUES ('\(String(repeating: "ef", count: 16))', 1, x'01', x'02', x'03');
            """)
        #expect(
            try store.read { try store.checkStructure() } == [
                "a row of prescription_version points at a missing prescription"
            ])
    }

    @Test func refusesFilesThatAreNotVaults() throws {
        let text = path("notes.txt")
        try Data(repeating: 0x41, count: 4096).write(to: URL(fileURLWithPath: text))
        #expect(throws: StoreError.self) { try SQLiteRecordStore(openingAt: text) }
        #expect(throws: StoreError.self) { try SQLiteRecordStore(openingAt: path("missing")) }
        let newer = path("newer.rxv")
        try SQLiteRecordStore.create(at: newer, header: header, auditHeadMAC: [])
        try Database(path: newer).execute("PRAGMA user_version = 99")
        do {
            _ = try SQLiteRecordStore(openingAt: newer)
            Issue.record("a newer format was opened")
        } catch {
            guard case .unsupportedVersion(found: 99, supported: StoredSchema.currentFormat) = error else {
                Issue.record("got \(error)")
                return
            }
        }
    }

    /// A value rxvault never writes, where a row is read, is `corrupt` naming the
    /// table, the row (by its key as stored) and the column: never a number passed on to trap in
    /// a conversion or a sum. The CHECK constraints, foreign keys and STRICT types are turned off
    /// first, as anyone who can write the file can. Each change is made in a savepoint on the
    /// store's own connection (so its reads see it) and rolled back after.
    @Test func valuesOutOfRangeOfAnotherTypeNullOrCutAreCorruptNamingTheirRow() throws {
        let p = path("v.rxv")
        try SQLiteRecordStore.create(
            at: p, header: header, auditHeadMAC: [], state: VaultStateRecord(writeCounter: 3, state: [1], mac: [2]))
        var store = try SQLiteRecordStore(openingAt: p)
        let id = PrescriptionID(hex: String(repeating: "ab", count: 16))!
        try store.write {
            try store.insert(
                PrescriptionVersionRecord(prescriptionID: id, version: 1, wrappedKey: [1], content: [2], mac: [3]))
            try store.append(AuditEntryRecord(sequence: 1, entry: [4], hash: Array(repeating: 5, count: 32), mac: nil))
        }
        func expectCorrupt(_ message: String, _ sql: String, _ read: () throws -> Void) throws {
            try store.database.execute(
                "PRAGMA ignore_check_constraints = ON; PRAGMA foreign_keys = OFF; SAVEPOINT mutation; \(sql)")
            defer { try? store.database.execute("ROLLBACK TO mutation; RELEASE mutation") }
            do {
                try read()
                Issue.record("\(sql): read without an error")
            } catch let error as StoreError {
                guard case .corrupt(let why) = error, why == message else {
                    Issue.record("\(sql): \(error)")
                    return
                }
            }
        }
        try expectCorrupt(
            "vault_state (its one row): write_counter is -1, outside 0...9007199254740991",
            "UPDATE vault_state SET write_counter = -1"
        ) { _ = try store.vaultState() }
        try expectCorrupt(
            "vault_state (its one row): write_counter is -1, outside 0...9007199254740991",
            "UPDATE vault_state SET write_counter = -1"
        ) { _ = try store.vaultStateStamp() }
        try expectCorrupt(
            "audit_entry row (seq 9223372036854775807): seq is 9223372036854775807, outside 1...9007199254740991",
            "UPDATE audit_entry SET seq = 9223372036854775807"
        ) { _ = try store.lastAuditEntry() }
        try expectCorrupt(
            "prescription_version row (prescription_id 'abababab…', version 2147483648): version is 2147483648, outside 1...2147483647",
            "UPDATE prescription_version SET version = 2147483648"
        ) { _ = try store.versions(of: id) }
        try expectCorrupt(
            "audit_entry row (seq 1): hash is 16 bytes, not 32",
            "UPDATE audit_entry SET hash = substr(hash, 1, 16)"
        ) { _ = try store.auditEntries() }
        try expectCorrupt(
            "prescription row (id '!!!!!!!!…'): id is not an id (32 lower-case hex digits)",
            "UPDATE prescription SET id = '\(String(repeating: "!", count: 32))'"
        ) {
            _ = try store.prescriptionIDs(withPrefix: "", limit: 10)
        }
        try expectCorrupt(
            "vault_header (its one row): kdf_ops_limit is -1, outside 0...9223372036854775807",
            "UPDATE vault_header SET kdf_ops_limit = -1"
        ) { _ = try store.header() }
        // Other types and NULL: STRICT and NOT NULL taken out of the schema (the rows stay as they
        // are on disk), read by a new connection.
        try store.database.execute(
            """
            PRAGMA writable_schema = ON;
            UPDATE sqlite_master SET sql = replace(replace(replace(sql, ') STRICT, WITHOUT ROWID', ') WITHOUT ROWID'), ') STRICT', ')'), 'NOT NULL', '')
            WHERE type = 'table';
            PRAGMA writable_schema = OFF;
            """)
        store = try SQLiteRecordStore(openingAt: p)
        try expectCorrupt(
            "prescription_version row (prescription_id 'abababab…', version 1): content is NULL, not a blob",
            "UPDATE prescription_version SET content = NULL"
        ) { _ = try store.latestVersions() }
        try expectCorrupt(
            "prescription_version row (prescription_id 'abababab…', version 'x'): version is text, not an integer",
            "UPDATE prescription_version SET version = 'x'"
        ) { _ = try store.latestVersion(of: id) }
        try expectCorrupt(
            "vault_state (its one row): write_counter is a real number, not an integer",
            "UPDATE vault_state SET write_counter = 1.5"
        ) { _ = try store.vaultState() }
        try expectCorrupt(
            "vault_state (its one row): mac is text, not a blob",
            "UPDATE vault_state SET mac = 'x'"
        ) { _ = try store.vaultState() }
        // A NULL MAC is an entry awaiting the owner's countersignature; any other type is not.
        try expectCorrupt(
            "audit_entry row (seq 1): mac is an integer, not a blob",
            "UPDATE audit_entry SET mac = 1"
        ) { _ = try store.auditEntries() }
        #expect(try store.auditEntries().map(\.mac) == [nil])
    }

    @Test func createNeverReplacesAFile() throws {
        let p = path("v.rxv")
        try Data("precious".utf8).write(to: URL(fileURLWithPath: p))
        let error = #expect(throws: StoreError.self) {
            try SQLiteRecordStore.create(at: p, header: header, auditHeadMAC: [])
        }
        guard case .alreadyExists(path: p) = error else {
            Issue.record("got \(String(describing: error))")
            return
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: p)) == Data("precious".utf8))
    }
}
