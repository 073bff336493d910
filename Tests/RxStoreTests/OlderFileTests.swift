import Foundation
import RxTestSupport
import Testing

@testable import RxStore

/// A vault file of format 2, as rxvault 0.2 made them (`RecordedSchemas.sqliteFormatOne` and
/// `Schema.version2`), read and written through the requirements written once for every engine:
/// its columns' older names (`client.public_key`, `access_grant.prescription_id`), a grant's
/// conflict on its client and prescription, the prescriptions grants name in the clear, and the
/// tables it does not have yet. RxVault reads such a file and upgrades it at its first write.
@Suite struct OlderFileTests {
    let folder = try! TemporaryDirectory(prefix: "rxolderfile")

    func formatTwoFile() throws -> SQLiteRecordStore {
        let path = folder.path("format2.rxv")
        #expect(FileManager.default.createFile(atPath: path, contents: nil))
        let database = try Database(path: path)
        try database.execute(RecordedSchemas.sqliteFormatOne + Schema.version2)
        try database.execute("PRAGMA application_id = \(Schema.applicationID); PRAGMA user_version = 2")
        let header = RecordStoreCases.header(format: 2)
        try database.prepare(VaultHeaderRecord.insertStatement { _ in "?" }).run(header.storedValues)
        return try SQLiteRecordStore(openingAt: path)
    }

    func id<ID: RecordIdentifier>(_ digits: String, as kind: ID.Type = ID.self) -> ID {
        ID(hex: String(repeating: digits, count: 32 / digits.count))!
    }

    @Test func grantsAreOnePerClientAndPrescriptionAndNameTheirPrescription() throws {
        let store = try formatTwoFile()
        let named: PrescriptionID = id("0a")
        let leftBehind: PrescriptionID = id("0b")
        let client = ClientRecord(id: id("c1"), lookup: Array(repeating: 7, count: 32), info: [1], mac: [2])
        let grant = GrantRecord(
            id: id("91"), clientID: client.id, reference: named.hex, sealedKeys: [1], info: [2], mac: [3])
        var renewed = grant
        renewed.id = id("92")
        renewed.sealedKeys = [9]
        try store.write {
            try store.insert(
                PrescriptionVersionRecord(prescriptionID: named, version: 1, wrappedKey: [1], content: [2], mac: [3]))
            try store.insert(client)
            try store.upsert(grant)
            try store.upsert(renewed)
        }
        #expect(try store.client(withLookup: client.lookup) == client)
        #expect(try store.grants(clientID: nil, references: [named.hex]) == [renewed])
        // A grant row left behind by its prescription still counts as naming it.
        try store.database.execute("PRAGMA foreign_keys = OFF")
        var orphan = grant
        orphan.id = id("93")
        orphan.reference = leftBehind.hex
        try store.write { try store.upsert(orphan) }
        #expect(try store.allPrescriptionIDs() == [named, leftBehind])
        #expect(try store.prescriptionCount() == 1)
    }

    @Test func theTablesOfLaterFormatsAreNotThereAndTheirReadsAnswerEmpty() throws {
        let store = try formatTwoFile()
        #expect(try store.patients().isEmpty && store.patientMACs().isEmpty)
        #expect(try store.patient(id: id("aa")) == nil)
        #expect(try store.patientBuckets() == nil)
        #expect(try store.keySlots().isEmpty && store.keyRing() == nil)
        #expect(try !store.holds(StoredSchema.person) && store.holds(StoredSchema.manifest))
    }

    /// A file of format 4 to 6 made before the patient buckets gets their table at the first
    /// write that sets them, from the description.
    @Test func thePatientBucketsTableIsMadeAtTheFirstWriteThatSetsThem() throws {
        let path = folder.path("v.rxv")
        try SQLiteRecordStore.create(at: path, header: RecordStoreCases.header(format: 6), auditHeadMAC: [])
        let store = try SQLiteRecordStore(openingAt: path)
        #expect(try !store.holds(StoredSchema.personBuckets) && store.patientBuckets() == nil)
        try store.write { try store.setPatientBuckets(PatientBucketsRecord(content: [1], mac: [2])) }
        #expect(try store.holds(StoredSchema.personBuckets))
        try store.write { try store.setPatientBuckets(PatientBucketsRecord(content: [3], mac: [4])) }
        #expect(try store.patientBuckets() == PatientBucketsRecord(content: [3], mac: [4]))
    }
}
