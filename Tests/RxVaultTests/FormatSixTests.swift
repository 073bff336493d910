import Foundation
import RxCrypto
import RxModel
import RxStore
import RxTestSupport
import Testing

@testable import RxVault

/// Format 6 (issue 26): grants may carry their patient's measurements. A format-5 vault reads as
/// it is and the next owner write upgrades it; a header edited back to format 5 is refused (the
/// state root's schema byte says 6); a grant's measurements are sealed to its client, follow
/// every change, and a grant row put back with measurements taken out since is refused.
@Suite struct FormatSixTests {
    /// Makes a format-6 vault look as format 5 wrote it: header, schema version and the state
    /// root's schema byte (MAC'd again with the owner's key, as format 5 would have).
    static func downgradeToFormatFive(_ vault: Vault) throws {
        try vault.store.write {
            try (vault.store as! SQLiteRecordStore).database.execute(
                "UPDATE vault_header SET format_version = 5; PRAGMA user_version = 5")
            var state = try vault.rootState()
            state.knowledge = nil
            state.measurementGrants = false
            state.assumedValidity = false
            try vault.store.setVaultState(
                VaultStateRecord(
                    writeCounter: state.counter, state: state.encoded(),
                    mac: try MAC.authenticate(state.macMessage(vaultID: vault.header.vaultID), key: vault.stateMACKey)))
        }
    }

    func setUp() throws -> (TestVault, Vault, PrescriptionRecord, ClientSummary, AgeIdentity) {
        let t = try TestVault()
        let owner = try t.open()
        let (record, _) = try owner.add(TestVault.glasses(patient: "Mia Chen"))
        let patient = try owner.findPatient("Mia Chen")
        try owner.addMeasurement(
            EyeMeasurement(
                id: "", date: CalendarDate(iso: "2026-03-01")!, axialLengthRight: Hundredths(raw: 2410),
                axialLengthLeft: Hundredths(raw: 2398)), patient: patient.id)
        let identity = try AgeIdentity.generate()
        let client = try owner.addClient(name: "app", recipient: identity.recipient)
        return (t, owner, record, client, identity)
    }

    func clientView(_ t: TestVault, _ identity: AgeIdentity) throws -> ClientVault {
        try ClientVault.open(at: t.path, identity: identity, clock: .fixed(today: TestVault.today))
    }

    @Test func aFormatFiveVaultReadsAndTheNextOwnerWriteUpgradesIt() throws {
        let (t, owner, record, client, identity) = try setUp()
        try owner.grant(client, [record.id], expires: nil, includeAttachments: true)
        try Self.downgradeToFormatFive(owner)
        #expect(try FormatFiveTests.storedState(t).schema == VaultState.sealSchema)
        let reader = try t.open()
        #expect(reader.header.formatVersion == 5)
        #expect(try reader.list().count == 1)
        #expect(try reader.check(readData: false).isClean)
        #expect(try clientView(t, identity).list().count == 1)
        #expect(try FormatFiveTests.storedState(t).schema == VaultState.sealSchema, "reading does not write")

        let writer = try t.open()
        let outcomes = try writer.grant(client, [record.id], expires: nil, attachments: nil, measurements: true)
        #expect(outcomes.map(\.description) == ["now with the patient's measurements (was without)"])
        #expect(try VaultHeader.read(at: t.path).formatVersion == VaultHeader.currentFormatVersion)
        #expect(try FormatFiveTests.storedState(t).schema == VaultState.knowledgeSchema)
        #expect(try clientView(t, identity).measurements(of: nil).count == 1)
        #expect(try t.open().check(readData: false).isClean)
    }

    /// An rxvault that reads up to format 5 would take a vault whose header says 5 and drop the
    /// measurement terms of every grant it re-seals: the root, MAC'd by the owner, says 6.
    @Test func aHeaderEditedBackToFormatFiveIsRefused() throws {
        let (t, owner, record, client, _) = try setUp()
        try owner.grant(client, [record.id], expires: nil, attachments: nil, measurements: true)
        let db = try t.raw()
        try db.execute("UPDATE vault_header SET format_version = 5; PRAGMA user_version = 5")
        do {
            let vault = try t.open()
            _ = try vault.list()
            Issue.record("a header edited back to format 5 was read")
        } catch let error as VaultError {
            guard case .integrity(let why) = error else {
                Issue.record("not an integrity error: \(error)")
                return
            }
            #expect(why.contains("format"), "\(why)")
        }
    }

    @Test func grantedMeasurementsFollowEveryChangeAndGoWhenTakenOut() throws {
        let (t, owner, record, client, identity) = try setUp()
        try owner.grant(client, [record.id], expires: nil, includeAttachments: true)
        #expect(try clientView(t, identity).measurements(of: nil).isEmpty, "not carried unless asked for")
        try owner.grant(client, [record.id], expires: nil, attachments: nil, measurements: true)
        #expect(try owner.grants(client: client).map(\.includesMeasurements) == [true])
        var seen = try clientView(t, identity).measurements(of: "mia")
        #expect(seen.map(\.measurement.axialLengthRight) == [Hundredths(raw: 2410)])
        #expect(seen.first?.patient.name == "Mia Chen")

        let patient = try owner.findPatient("Mia Chen")
        let added = try owner.addMeasurement(
            EyeMeasurement(id: "", date: CalendarDate(iso: "2026-06-01")!, axialLengthRight: Hundredths(raw: 2431)),
            patient: patient.id)
        #expect(try clientView(t, identity).measurements(of: nil).count == 2)
        try owner.editMeasurement(added.measurement.id) { $0.axialLengthRight = Hundredths(raw: 2433) }
        seen = try clientView(t, identity).measurements(of: nil)
        #expect(seen.map(\.measurement.axialLengthRight) == [Hundredths(raw: 2410), Hundredths(raw: 2433)])
        try owner.removeMeasurement(added.measurement.id)
        #expect(try clientView(t, identity).measurements(of: nil).count == 1)

        // The served view says the same as the sealed one.
        let served = try owner.grantedMeasurements(try owner.access(for: client))
        #expect(served.map(\.records.count) == [1] && served.first?.via == [record.id])

        // Measurements taken out: the row is sealed again without them, and the one that carried
        // them, put back from an older copy, is refused.
        let db = try t.raw()
        let carried: [Statement.Value] = try {
            let saved = try db.prepare("SELECT id, client_id, reference, sealed_keys, info, mac FROM access_grant")
            #expect(try saved.step())
            return [
                .text(saved.text(0)!), .text(saved.text(1)!), .text(saved.text(2)!), .blob(saved.blob(3)),
                .blob(saved.blob(4)), .blob(saved.blob(5))
            ]
        }()
        let out = try owner.grant(client, [record.id], expires: nil, attachments: nil, measurements: false)
        #expect(out.map(\.description) == ["now without the patient's measurements (was with)"])
        #expect(try clientView(t, identity).measurements(of: nil).isEmpty)
        #expect(try clientView(t, identity).list().count == 1, "the prescription stays granted")
        try db.execute("DELETE FROM access_grant")
        try db.prepare(
            "INSERT INTO access_grant (id, client_id, reference, sealed_keys, info, mac) VALUES (?, ?, ?, ?, ?, ?)"
        ).run(carried)
        #expect(!(try t.open().check(readData: false)).isClean)
        #expect(throws: VaultError.self) { _ = try t.open().grants(client: client) }
    }

    /// The term outlives what re-seals a grant for other reasons: another client's grant expiring
    /// (the sweep re-keys the prescription) and a merge, after which the grant carries the kept
    /// patient's measurements with the merged one's.
    @Test func theMeasurementTermOutlivesReKeysAndMerges() throws {
        let (t, owner, record, client, identity) = try setUp()
        try owner.grant(client, [record.id], expires: nil, attachments: nil, measurements: true)
        let second = try owner.addClient(name: "family", recipient: try AgeIdentity.generate().recipient)
        try owner.grant(second, [record.id], expires: TestVault.today, includeAttachments: true)
        let day = TestVault.today.adding(days: 1)!
        let tomorrow = try Vault.open(at: t.path, with: .passphrase(t.passphrase), clock: .fixed(today: day))
        let (other, _) = try tomorrow.add(TestVault.glasses(patient: "Mia C."))
        #expect(try tomorrow.grants(client: second).isEmpty, "swept")
        #expect(try tomorrow.grants(client: client).map(\.includesMeasurements) == [true])
        let view = try ClientVault.open(
            at: t.path, identity: identity, clock: .fixed(today: day))
        #expect(try view.measurements(of: nil).count == 1)

        try tomorrow.addMeasurement(
            EyeMeasurement(id: "", date: CalendarDate(iso: "2026-05-01")!, axialLengthRight: Hundredths(raw: 2420)),
            patient: try tomorrow.findPatient("Mia C.").id)
        let kept = try tomorrow.findPatient("Mia Chen")
        try tomorrow.mergePatients(try tomorrow.findPatient("Mia C.").id, into: kept.id)
        let merged = try ClientVault.open(
            at: t.path, identity: identity, clock: .fixed(today: day))
        #expect(
            try merged.measurements(of: nil).map(\.measurement.axialLengthRight)
                == [2410, 2420].map { Hundredths(raw: $0) })
        #expect(try merged.list().map(\.id) == [record.id], "the merged patient's prescription is not granted")
        _ = other
        #expect(try tomorrow.check(readData: false).isClean)
    }

    /// A client reads the measurements of the patients of its grants that include them, and no
    /// other patient's, even one whose prescription it was granted without them.
    @Test func aClientReadsOnlyThePatientsItsGrantsCarry() throws {
        let (t, owner, record, client, identity) = try setUp()
        let (other, _) = try owner.add(TestVault.glasses(patient: "Leo Park"))
        try owner.addMeasurement(
            EyeMeasurement(id: "", date: CalendarDate(iso: "2026-03-01")!, axialLengthRight: Hundredths(raw: 2300)),
            patient: try owner.findPatient("Leo Park").id)
        try owner.grant(client, [record.id], expires: nil, attachments: nil, measurements: true)
        try owner.grant(client, [other.id], expires: nil, includeAttachments: true)
        let view = try clientView(t, identity)
        #expect(try view.measuredPatients().map(\.name) == ["Mia Chen"])
        #expect(throws: VaultError.self) { _ = try view.measurements(of: "Leo Park") }
        let bytes = ["", "-wal"].compactMap { FileManager.default.contents(atPath: t.path + $0) }.reduce(Data(), +)
        #expect(bytes.range(of: Data("Mia Chen".utf8)) == nil, "no name in the clear")
    }
}
