import Foundation
import Testing
@testable import RxStore

@Suite struct RecordStoreTests {
    let directory: URL = {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("rxstore-\(UUID().uuidString)")
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }()

    var header: VaultHeaderRecord {
        VaultHeaderRecord(formatVersion: 1, vaultID: Array(repeating: 1, count: 16), kdfAlgorithm: "argon2id13",
                          kdfOpsLimit: 2, kdfMemLimit: 64 << 20, kdfSalt: Array(repeating: 2, count: 16),
                          wrappedRootKey: Array(repeating: 3, count: 72), maxAttachmentBytes: 32 << 20,
                          auditPublicKey: Array(repeating: 4, count: 32))
    }

    func path(_ name: String) -> String { directory.appendingPathComponent(name).path }

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

    @Test func versionsInsertListAndCascadeOnDelete() throws {
        let p = path("v.rxv")
        try SQLiteRecordStore.create(at: p, header: header, auditHeadMAC: [])
        let store = try SQLiteRecordStore(openingAt: p)
        let id = String(repeating: "ab", count: 16)
        try store.write {
            try store.insert(PrescriptionVersionRecord(prescriptionID: id, version: 1, wrappedKey: [1], content: [2], mac: []))
            try store.insert(PrescriptionVersionRecord(prescriptionID: id, version: 2, wrappedKey: [3], content: [4], mac: []))
        }
        #expect(try store.latestVersions().map(\.version) == [2])
        #expect(try store.versions(of: id).map(\.content) == [[2], [4]])
        #expect(try store.prescriptionIDs(withPrefix: "abab", limit: 5) == [id])
        #expect(try store.prescriptionIDs(withPrefix: "abac", limit: 5).isEmpty)
        #expect(try store.deletePrescription(id))
        #expect(try store.versionCount() == 0)
        #expect(try !store.deletePrescription(id))
    }

    @Test func aFailedWriteLeavesNothing() throws {
        let p = path("v.rxv")
        try SQLiteRecordStore.create(at: p, header: header, auditHeadMAC: [])
        let store = try SQLiteRecordStore(openingAt: p)
        let id = String(repeating: "cd", count: 16)
        #expect(throws: StoreError.self) {
            try store.write {
                try store.insert(PrescriptionVersionRecord(prescriptionID: id, version: 1, wrappedKey: [1], content: [2], mac: []))
                try store.insert(PrescriptionVersionRecord(prescriptionID: id, version: 1, wrappedKey: [1], content: [2], mac: []))
            }
        }
        #expect(try store.prescriptionCount() == 0)
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
            guard case .unsupportedVersion(found: 99, supported: 4) = error else { Issue.record("got \(error)"); return }
        }
    }

    @Test func createNeverReplacesAFile() throws {
        let p = path("v.rxv")
        try Data("precious".utf8).write(to: URL(fileURLWithPath: p))
        #expect(throws: StoreError.self) { try SQLiteRecordStore.create(at: p, header: header, auditHeadMAC: []) }
        #expect(try Data(contentsOf: URL(fileURLWithPath: p)) == Data("precious".utf8))
    }
}
