import Foundation
import RxStorePostgres
import RxTestSupport
import Testing

@testable import RxStore

/// The store cases every engine passes, run against each (restic's backend tests, one suite for
/// every backend): a vault file, and a database on a real PostgreSQL server (RxTestSupport's
/// throwaway cluster; without PostgreSQL installed the PostgreSQL runs fail, as CI has it).
/// Each case goes through `RecordStore` alone, so a third engine adds one `Engine` case here.
@Suite struct RecordStoreCases {
    /// Each test's own folder (a suite's instance is made per test), removed after it.
    let folder = try! TemporaryDirectory(prefix: "rxstorecases")

    enum Engine: String, CaseIterable, CustomTestStringConvertible {
        case sqlite, postgres
        var testDescription: String { rawValue }
    }

    /// Where a test's vault is made and opened: a new file, or a new database.
    struct Place {
        let location: String
        let create: (VaultHeaderRecord) throws -> Void
        let open: () throws -> any RecordStore
    }

    func place(_ engine: Engine) throws -> Place {
        switch engine {
        case .sqlite:
            let path = folder.path("vault.rxv")
            return Place(
                location: path,
                create: { header in try SQLiteRecordStore.create(at: path, header: header, auditHeadMAC: [9]) },
                open: { try SQLiteRecordStore(openingAt: path) })
        case .postgres:
            let database = try PostgresServer.shared().createDatabase()
            let postgres = PostgresEngine(environment: database.environment)
            return Place(
                location: database.url,
                create: { header in
                    try postgres.create(
                        database.url, header: header, auditHeadMAC: [9], state: nil, keyRing: nil,
                        busyTimeoutMilliseconds: 5_000, fill: nil)
                },
                open: { try postgres.open(database.url, busyTimeoutMilliseconds: 5_000) })
        }
    }

    /// A new, empty vault store of `engine` at `format`.
    func newStore(_ engine: Engine, format: Int = 6) throws -> any RecordStore {
        let place = try place(engine)
        try place.create(Self.header(format: format))
        return try place.open()
    }

    static func header(format: Int) -> VaultHeaderRecord {
        VaultHeaderRecord(
            formatVersion: format, vaultID: Array(repeating: 1, count: 16), kdfAlgorithm: "argon2id13",
            kdfOpsLimit: 2, kdfMemLimit: 64 << 20, kdfSalt: Array(repeating: 2, count: 16),
            wrappedRootKey: Array(repeating: 3, count: 72), maxAttachmentBytes: 32 << 20,
            auditPublicKey: Array(repeating: 4, count: 32))
    }

    /// An id of kind `ID` whose 32 digits are `digits` repeated.
    func id<ID: RecordIdentifier>(_ digits: String, as kind: ID.Type = ID.self) -> ID {
        ID(hex: String(repeating: digits, count: 32 / digits.count))!
    }

    func version(_ id: PrescriptionID, _ number: Int, content: [UInt8] = [2]) -> PrescriptionVersionRecord {
        PrescriptionVersionRecord(prescriptionID: id, version: number, wrappedKey: [1], content: content, mac: [3])
    }

    @Test(arguments: Engine.allCases) func theHeaderAndTheOneRowTablesGoInAndComeBack(_ engine: Engine) throws {
        let store = try newStore(engine)
        #expect(try store.header() == Self.header(format: 6))
        #expect(try store.schemaVersion() == 6)
        #expect(try store.auditHead()?.sequence == 0 && store.auditHead()?.mac == [9])
        #expect(try store.vaultState() == nil && store.vaultStateStamp() == nil && store.keyRing() == nil)
        let state = VaultStateRecord(writeCounter: 7, state: [1, 2], mac: [3])
        let ring = KeyRingRecord(writeCounter: 7, content: [4], mac: [5])
        try store.write {
            try store.replaceHeaderKey(opsLimit: 3, memLimit: 1 << 20, salt: [6], wrapped: [7])
            try store.setMaxAttachmentBytes(1000)
            try store.setVaultState(VaultStateRecord(writeCounter: 6, state: [0], mac: [0]))
            try store.setVaultState(state)
            try store.setKeyRing(ring)
            try store.setKeyRing(ring)
            try store.setAuditHead(sequence: 2, hash: Array(repeating: 8, count: 32), mac: [9, 9])
            try store.setPatientBuckets(PatientBucketsRecord(content: [1], mac: [1]))
            try store.setPatientBuckets(PatientBucketsRecord(content: [2], mac: [3]))
        }
        var header = Self.header(format: 6)
        (header.kdfOpsLimit, header.kdfMemLimit, header.kdfSalt, header.wrappedRootKey) = (3, 1 << 20, [6], [7])
        header.maxAttachmentBytes = 1000
        #expect(try store.header() == header)
        #expect(try store.vaultState() == state)
        #expect(try store.vaultStateStamp()?.counter == 7 && store.vaultStateStamp()?.mac == [3])
        #expect(try store.keyRing() == ring)
        #expect(try store.auditHead()?.sequence == 2 && store.auditHead()?.mac == [9, 9])
        #expect(try store.patientBuckets() == PatientBucketsRecord(content: [2], mac: [3]))
    }

    @Test(arguments: Engine.allCases) func versionsInsertListAndCascadeOnDelete(_ engine: Engine) throws {
        let store = try newStore(engine)
        let a: PrescriptionID = id("ab")
        let b: PrescriptionID = id("0c")
        try store.write {
            try store.insert(version(a, 1, content: [2]))
            try store.insert(version(a, 2, content: [4]))
            try store.insert(version(b, 1, content: [5]))
        }
        #expect(try store.latestVersions().map(\.version) == [1, 2])
        #expect(try store.latestVersions().map(\.prescriptionID) == [b, a])
        #expect(try store.versions(of: a).map(\.content) == [[2], [4]])
        #expect(try store.latestVersion(of: a) == version(a, 2, content: [4]))
        #expect(try Set(store.versions(ofAll: [a, b]).map(\.content)) == [[2], [4], [5]])
        #expect(try store.prescriptionIDs(withPrefix: "abab", limit: 5) == [a])
        #expect(try store.prescriptionIDs(withPrefix: "abac", limit: 5).isEmpty)
        #expect(try store.prescriptionIDs(withPrefix: "", limit: 1) == [b])
        #expect(try store.allPrescriptionIDs() == [b, a])
        #expect(try store.prescriptionCount() == 2 && store.versionCount() == 3)
        #expect(try store.deletePrescription(a))
        #expect(try store.versionCount() == 1)
        #expect(try !store.deletePrescription(a))
        #expect(try store.latestVersion(of: a) == nil)
    }

    @Test(arguments: Engine.allCases) func aVersionStoredTwiceIsRefusedAndTheWriteLeavesNothing(_ engine: Engine) throws
    {
        let store = try newStore(engine)
        let prescription: PrescriptionID = id("cd")
        #expect(throws: StoreError.self) {
            try store.write {
                try store.insert(version(prescription, 1))
                try store.insert(version(prescription, 1))
            }
        }
        #expect(try store.prescriptionCount() == 0 && store.versionCount() == 0)
    }

    /// The inserts an import repeats (`RowInsert`'s, which PostgreSQL keeps and sends a thousand
    /// to a statement): more than a statement's worth, new prescriptions after versions of stored
    /// ones, a patient written twice, all stored whatever order they came in; a read in the
    /// middle of the write sees what came before it.
    @Test(arguments: Engine.allCases) func repeatedInsertsOfManyRowsAreAllStored(_ engine: Engine) throws {
        let store = try newStore(engine)
        let stored: PrescriptionID = id("5a")
        let patient = PatientRecord(id: id("e0"), info: [1], mac: [1])
        try store.write { try store.insert(version(stored, 1)) }
        let fresh = (0..<1200).map { PrescriptionID(hex: String(format: "%032x", 0x100 + $0))! }
        try store.write {
            try store.insert(version(stored, 2))
            try store.upsert(patient)
            for id in fresh.prefix(600) { try store.insert(version(id, 1)) }
            #expect(try store.prescriptionCount() == 601 && store.latestVersion(of: stored)?.version == 2)
            for id in fresh.dropFirst(600) {
                try store.insert(version(id, 1))
                try store.upsert(PatientRecord(id: patient.id, info: [2], mac: [UInt8(id.bytes[15])]))
            }
            try store.insert(version(fresh[0], 2))
        }
        #expect(try store.prescriptionCount() == 1201 && store.versionCount() == 1203)
        #expect(try store.latestVersions().count == 1201)
        #expect(try store.latestVersion(of: fresh[0])?.version == 2)
        #expect(try store.patients() == [PatientRecord(id: patient.id, info: [2], mac: [UInt8(fresh[1199].bytes[15])])])
    }

    @Test(arguments: Engine.allCases) func createNeverReplacesAVault(_ engine: Engine) throws {
        let place = try place(engine)
        try place.create(Self.header(format: 6))
        let error = #expect(throws: StoreError.self) { try place.create(Self.header(format: 5)) }
        guard case .alreadyExists = error else {
            Issue.record("got \(String(describing: error))")
            return
        }
        #expect(try place.open().header().formatVersion == 6)
    }

    @Test(arguments: Engine.allCases) func attachmentsKeepTheirOrderAndStreamTheirChunks(_ engine: Engine) throws {
        let store = try newStore(engine)
        let prescription: PrescriptionID = id("12")
        let first = AttachmentRecord(
            id: id("f0"), prescriptionID: prescription, wrappedKey: [1], metadata: [2],
            streamHeader: Array(repeating: 3, count: 24), mac: [4])
        var second = first
        second.id = id("0a")
        try store.write {
            try store.insert(version(prescription, 1))
            try store.insert(first)
            try store.insert(second)
            for sequence in 0..<3 {
                try store.insertChunk(attachmentID: first.id, sequence: sequence, data: [UInt8(sequence), 7])
            }
            try store.updateMetadata(ofAttachment: second.id, to: [5], mac: [6])
        }
        second.metadata = [5]
        second.mac = [6]
        // In the order they were added, not by id.
        #expect(try store.attachments(of: prescription) == [first, second])
        #expect(try store.attachments(ofAll: [prescription]) == [first, second])
        #expect(try store.attachment(second.id) == second)
        #expect(try store.attachmentCount() == 2 && store.attachmentCountsByPrescription() == [prescription: 2])
        var chunks: [[UInt8]] = []
        try store.forEachChunk(ofAttachment: first.id) { sequence, data in
            #expect(data.first == UInt8(sequence))
            chunks.append(data)
        }
        #expect(chunks == [[0, 7], [1, 7], [2, 7]])
        #expect(try store.chunk(ofAttachment: first.id, sequence: 1) == [1, 7])
        #expect(try store.chunk(ofAttachment: first.id, sequence: 3) == nil)
        #expect(try store.write { try store.deleteAttachment(second.id) })
        #expect(try store.write { try !store.deleteAttachment(second.id) })
        // The prescription takes its attachments and their chunks with it.
        #expect(try store.write { try store.deletePrescription(prescription) })
        #expect(try store.attachmentCount() == 0)
        #expect(try store.chunk(ofAttachment: first.id, sequence: 0) == nil)
    }

    @Test(arguments: Engine.allCases) func clientsAndTheirGrants(_ engine: Engine) throws {
        let store = try newStore(engine)
        let alice = ClientRecord(id: id("a1"), lookup: Array(repeating: 1, count: 32), info: [1], mac: [1])
        let bob = ClientRecord(id: id("0b"), lookup: Array(repeating: 2, count: 32), info: [2], mac: [2])
        let grant = GrantRecord(
            id: id("9a"), clientID: alice.id, reference: String(repeating: "e1", count: 16), sealedKeys: [1],
            info: [2], mac: [3])
        var other = grant
        other.id = id("9b")
        other.clientID = bob.id
        other.reference = String(repeating: "e2", count: 16)
        try store.write {
            try store.insert(alice)
            try store.insert(bob)
            try store.upsert(grant)
            try store.upsert(other)
        }
        #expect(try store.clients() == [alice, bob])
        #expect(try store.client(withLookup: bob.lookup) == bob)
        #expect(try store.client(withLookup: Array(repeating: 3, count: 32)) == nil)
        #expect(throws: StoreError.self) { try store.write { try store.insert(alice) } }
        #expect(try store.grants(clientID: nil, references: nil) == [grant, other])
        #expect(try store.grants(clientID: bob.id, references: nil) == [other])
        #expect(try store.grants(clientID: nil, references: [grant.reference]) == [grant])
        #expect(try store.grants(clientID: bob.id, references: [grant.reference]).isEmpty)
        #expect(try store.grants(clientID: nil, references: []).isEmpty)
        // One grant per reference: a second upsert replaces it.
        var renewed = grant
        renewed.id = id("9c")
        renewed.sealedKeys = [9]
        try store.write { try store.upsert(renewed) }
        #expect(try store.grants(clientID: alice.id, references: nil) == [renewed])
        // A client takes its grants with it.
        try store.write { try store.deleteClient(alice.id) }
        #expect(try store.clients() == [bob])
        #expect(try store.grants(clientID: nil, references: nil) == [other])
        try store.write { try store.deleteGrant(other.id) }
        #expect(try store.grants(clientID: nil, references: nil).isEmpty)
    }

    @Test(arguments: Engine.allCases) func theAuditLogOnlyGrows(_ engine: Engine) throws {
        let store = try newStore(engine)
        let entries = (1...3).map {
            AuditEntryRecord(
                sequence: $0, entry: [UInt8($0)], hash: Array(repeating: UInt8($0), count: 32), mac: $0 == 3 ? nil : [1]
            )
        }
        try store.write { for entry in entries { try store.append(entry) } }
        #expect(try store.auditEntries() == entries)
        #expect(try store.auditEntries(after: 1) == Array(entries[1...]))
        #expect(try store.auditEntry(2) == entries[1] && store.auditEntry(4) == nil)
        #expect(try store.auditEntryHash(3) == entries[2].hash)
        #expect(try store.lastAuditEntry() == entries[2])
        // A sequence number already stored is refused: two writers cannot both take it.
        #expect(throws: StoreError.self) { try store.write { try store.append(entries[2]) } }
        try store.write { try store.setAuditMAC(sequence: 3, mac: [7]) }
        #expect(try store.auditEntry(3)?.mac == [7])
    }

    @Test(arguments: Engine.allCases) func bucketsPatientsAndKeySlots(_ engine: Engine) throws {
        let store = try newStore(engine)
        let patients = ["a0", "a1", "b0"].map { PatientRecord(id: id($0), info: [1], mac: [2]) }
        let slot = KeySlotRecord(
            id: 2, kind: "recovery", kdfAlgorithm: "blake2b", kdfOpsLimit: 0, kdfMemLimit: 0, kdfSalt: [1],
            wrappedRootKey: [2], info: [3])
        try store.write {
            for bucket in [3, 1, 255] { try store.setIndexBucket(bucket, to: [UInt8(bucket)]) }
            try store.setIndexBucket(1, to: [9])
            for bucket in [4, 2] { try store.setManifestBucket(bucket, to: [UInt8(bucket)]) }
            try store.setManifestBucket(4, to: nil)
            for patient in patients.reversed() { try store.upsert(patient) }
            try store.upsert(PatientRecord(id: patients[0].id, info: [5], mac: [6]))
            try store.upsert(slot)
            try store.upsert(
                KeySlotRecord(
                    id: 3, kind: "passphrase", kdfAlgorithm: "argon2id13", kdfOpsLimit: 2, kdfMemLimit: 1 << 26,
                    kdfSalt: [4], wrappedRootKey: [5], info: [6]))
            try store.deleteKeySlot(3)
        }
        #expect(try store.indexBuckets().map(\.0) == [1, 3, 255] && store.indexBucket(1) == [9])
        #expect(try store.manifestBuckets().map(\.0) == [2] && store.manifestBucket(4) == nil)
        try store.write { try store.clearIndex() }
        #expect(try store.indexBuckets().isEmpty)
        #expect(try store.patients().map(\.id) == patients.map(\.id))
        #expect(try store.patient(id: patients[0].id) == PatientRecord(id: patients[0].id, info: [5], mac: [6]))
        #expect(try store.patientMACs().map(\.mac) == [[6], [2], [2]])
        #expect(try store.patientMACs(withPrefix: "a1").map(\.id) == [patients[1].id])
        #expect(try store.write { try store.deletePatient(patients[2].id) })
        #expect(try store.patientMACs(withPrefix: "b0").isEmpty)
        #expect(try store.keySlots() == [slot])
    }

    /// Formats 5 and 6 (and any later step) are one step every engine takes alike: the schema
    /// version and the header move together, one format at a time.
    @Test(arguments: Engine.allCases) func formatStepsMoveTheSchemaAndTheHeaderOneAtATime(_ engine: Engine) throws {
        let store = try newStore(engine, format: 4)
        #expect(try store.schemaVersion() == 4)
        #expect(throws: StoreError.self) { try store.write { try store.advanceFormat(to: 6, adding: []) } }
        try store.write { try store.advanceFormat(to: 5, adding: []) }
        #expect(try store.schemaVersion() == 5 && store.header().formatVersion == 5)
        try store.write { try store.advanceFormat(to: 6, adding: []) }
        #expect(try store.schemaVersion() == 6 && store.header().formatVersion == 6)
        #expect(throws: StoreError.self) {
            try store.write { try store.advanceFormat(to: StoredSchema.currentFormat + 1, adding: []) }
        }
        #expect(try store.schemaVersion() == 6)
    }

    @Test(arguments: Engine.allCases) func theStructuralCheckIsCleanOnAFilledStore(_ engine: Engine) throws {
        let store = try newStore(engine)
        try store.write {
            // A state root, as RxVault writes at every owner write: the database checks it is there.
            try store.setVaultState(VaultStateRecord(writeCounter: 1, state: [1], mac: [2]))
            try store.insert(version(id("34"), 1))
            try store.insert(ClientRecord(id: id("56"), lookup: Array(repeating: 1, count: 32), info: [], mac: []))
        }
        #expect(try store.read { try store.checkStructure() } == [])
    }

    /// A copy goes across engines row for row, and back.
    @Test func aCopyGoesFromAFileToADatabaseAndBackTheSame() throws {
        let file = try newStore(.sqlite)
        try file.write {
            try file.insert(version(id("78"), 1))
            try file.insert(version(id("78"), 2))
            try file.insert(ClientRecord(id: id("9a"), lookup: Array(repeating: 1, count: 32), info: [1], mac: [2]))
            try file.append(AuditEntryRecord(sequence: 1, entry: [1], hash: Array(repeating: 1, count: 32), mac: nil))
            try file.setVaultState(VaultStateRecord(writeCounter: 1, state: [1], mac: [1]))
        }
        let database = try PostgresServer.shared().createDatabase()
        let postgres = PostgresEngine(environment: database.environment)
        try file.read {
            try postgres.create(
                database.url, header: file.header(), auditHeadMAC: [9], state: nil, keyRing: nil,
                busyTimeoutMilliseconds: 5_000, fill: { try StoreCopy.copyContent(from: file, into: $0) })
        }
        let copy = try postgres.open(database.url, busyTimeoutMilliseconds: 5_000)
        #expect(try StoreCopy.firstDifference(between: file, and: copy) == nil)
        let back = folder.path("back.rxv")
        try copy.read {
            try SQLiteRecordStore.create(
                at: back, header: copy.header(), auditHeadMAC: [9],
                fill: { try StoreCopy.copyContent(from: copy, into: $0) })
        }
        #expect(try StoreCopy.firstDifference(between: copy, and: SQLiteRecordStore(openingAt: back)) == nil)
    }
}
