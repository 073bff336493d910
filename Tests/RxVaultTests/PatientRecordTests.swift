import Foundation
import RxCrypto
import RxModel
import RxStore
import RxTestSupport
import Testing

@testable import RxVault

/// Format 4: patient rows are the owner's, current, and bound to their place. Someone
/// who can write the file deletes one, puts back an older one (a rename undone), alters one or
/// moves one's sealed info onto another; the owner's commands and `check` refuse each.
@Suite struct PatientRecordTests {
    func integrityMessage(_ body: () throws -> Void) -> String? {
        do { try body() } catch VaultError.integrity(let message) { return message } catch {
            return "unexpected \(error)"
        }
        return nil
    }

    /// A vault with two patients (one with two prescriptions).
    func vault() throws -> (TestVault, Vault, [PatientSummary]) {
        let t = try TestVault()
        let vault = try t.open()
        _ = try vault.add(TestVault.glasses(patient: "Ada Example"))
        _ = try vault.add(TestVault.glasses(patient: "  ada   EXAMPLE ", sphere: -300))
        _ = try vault.add(TestVault.glasses(patient: "Ben Other"))
        let patients = try vault.patients()
        #expect(patients.map(\.1.count) == [2, 1], "the case/space variant is the same patient")
        return (t, vault, patients.map(\.0))
    }

    @Test func contentNamesThePatientByIdOnlyAndTheRowIsSealed() throws {
        let (t, vault, patients) = try vault()
        let bytes = try Data(contentsOf: URL(fileURLWithPath: t.path))
        #expect(bytes.range(of: Data("Ada Example".utf8)) == nil && bytes.range(of: Data("Ben Other".utf8)) == nil)
        // The stored JSON (opened without resolving) names the patient by id alone.
        let row = try #require(try vault.store.latestVersions().first)
        let raw = try vault.sealing.openContent(row, dataKey: try vault.dataKey(of: row))
        #expect(raw.prescription.patient.name == "" && raw.prescription.patient.birthDate == nil)
        #expect(patients.map(\.id.hex).contains(raw.prescription.patient.id ?? "-"))
    }

    @Test func aDeletedPatientRowIsRefused() throws {
        let (t, vault, patients) = try vault()
        let bens = try #require(try vault.list().first { $0.prescription.patient.id == patients[1].id.hex }).id
        try t.raw().prepare("DELETE FROM person WHERE id = ?").run([.text(patients[1].id.hex)])
        let reopened = try t.open()
        #expect(integrityMessage { _ = try reopened.patients() }?.contains("patient records are not the ones") == true)
        #expect(integrityMessage { _ = try reopened.add(TestVault.glasses(patient: "Ben Other")) } != nil)
        #expect(try reopened.check(readData: true).stages.flatMap(\.errors).contains { $0.contains("patient records") })
        #expect(integrityMessage { _ = try t.open().prescription(bens) } != nil)
        _ = vault
    }

    @Test func aRenameUndoneFromAnOlderCopyIsRefused() throws {
        let (t, vault, patients) = try vault()
        let listed = try vault.list()
        let db = try t.raw()
        // The row as it is now (the statement is released before the owner writes).
        let (info, mac) = try { () throws -> ([UInt8], [UInt8]) in
            let old = try db.prepare("SELECT info, mac FROM person WHERE id = ?")
            try old.bind([.text(patients[0].id.hex)])
            #expect(try old.step())
            return (old.blob(0), old.blob(1))
        }()
        try vault.updatePatient(patients[0].id, name: "Ada Renamed", birthDate: nil)
        #expect(
            try vault.prescription(try vault.list().first { $0.prescription.patient.id == patients[0].id.hex }!.id)
                .prescription.patient.name == "Ada Renamed")
        try db.prepare("UPDATE person SET info = ?, mac = ? WHERE id = ?").run([
            .blob(info), .blob(mac), .text(patients[0].id.hex)
        ])
        let reopened = try t.open()
        #expect(integrityMessage { _ = try reopened.patients() } != nil)
        #expect(!(try reopened.check(readData: true).isClean))
        // Reading one prescription opens only its patient's row, after checking its bucket of rows
        // (PatientBuckets) against the root by ids and MACs: the older row is refused there too,
        // for every prescription whose patient is in that bucket (PatientBucketTests has the rest).
        #expect(listed.count == 3)
        let renamedBucket = PatientBuckets.bucket(ofRowID: patients[0].id.hex)
        for record in listed {
            let fresh = try t.open()
            let inBucket = PatientBuckets.bucket(ofRowID: record.prescription.patient.id ?? "") == renamedBucket
            #expect(
                (integrityMessage { _ = try fresh.prescription(record.id) } != nil) == inBucket,
                "prescription \(record.id.short)")
        }
    }

    /// The read of one prescription's patient and the whole directory give the same patient.
    @Test func onePrescriptionsPatientIsTheDirectorysPatient() throws {
        let (t, _, patients) = try vault()
        for record in try t.open().list() {
            let fresh = try t.open()
            let read = try fresh.prescription(record.id).prescription.patient
            let expected = try #require(patients.first { $0.id.hex == read.id })
            #expect(read == expected.patient)
        }
    }

    @Test func alteredOrMovedPatientInfoIsRefused() throws {
        let (t, _, patients) = try vault()
        let db = try t.raw()
        // Ada's sealed info (and MAC) copied onto Ben's row: bound to Ada's id, it fails there.
        try db.execute(
            """
            UPDATE person SET info = (SELECT info FROM person WHERE id = '\(patients[0].id.hex)'),
                               mac = (SELECT mac FROM person WHERE id = '\(patients[0].id.hex)')
            WHERE id = '\(patients[1].id.hex)'
            """)
        let reopened = try t.open()
        #expect(integrityMessage { _ = try reopened.patients() } != nil)
        #expect(!(try reopened.check(readData: true).isClean))
    }

    @Test func mergeMovesPrescriptionsAndKeepsOldVersionsReadable() throws {
        let (_, vault, patients) = try vault()
        let bens = try vault.list().filter { $0.prescription.patient.id == patients[1].id.hex }
        let (kept, moved) = try vault.mergePatients(patients[1].id, into: patients[0].id)
        #expect(moved == 1 && kept.merged == [patients[1].id.hex])
        let after = try vault.patients()
        #expect(after.count == 1 && after[0].1.count == 3)
        let history = try vault.history(bens[0].id)
        #expect(
            history.allSatisfy {
                $0.prescription.patient.id == patients[0].id.hex && $0.prescription.patient.name == "Ada Example"
            })
        #expect(history.last?.change?.contains("merged") == true)
        #expect(try vault.check(readData: true).isClean)
        #expect(throws: VaultError.self) { try vault.mergePatients(patients[0].id, into: patients[0].id) }
    }
}
