import Foundation
import RxCrypto
import RxModel
import RxStore
import RxTestSupport
import Testing

@testable import RxVault

/// Reading one prescription checks only its patient's bucket of patient rows (the rows
/// whose id starts with the same byte) against the owner's bucket hash, and that hash against the
/// root's patients hash (`PatientBuckets`). Someone who can write the file deletes, adds, puts
/// back or moves a patient row, or forges, deletes or puts back the bucket hashes; a read of a
/// prescription whose patient is in the changed bucket refuses, one in another bucket reads, and
/// `check` names the bucket. A vault as an older rxvault leaves it (no bucket hashes, or ones for
/// an earlier set of patients) reads by the whole set and gets them at the next owner write.
@Suite struct PatientBucketTests {
    func integrityMessage(_ body: () throws -> Void) -> String? {
        do { try body() } catch VaultError.integrity(let message) { return message } catch {
            return "unexpected \(error)"
        }
        return nil
    }

    /// Patients with ids chosen for their buckets: two in bucket 0xaa (A1, A2), one in 0xbb (B).
    static let a1 = PatientID(hex: "aa01" + String(repeating: "0", count: 28))!
    static let a2 = PatientID(hex: "aa02" + String(repeating: "0", count: 28))!
    static let b = PatientID(hex: "bb01" + String(repeating: "0", count: 28))!

    struct Fixture {
        let t: TestVault
        let vault: Vault
        /// Patient id -> the prescription naming it.
        let prescriptions: [PatientID: PrescriptionID]
    }

    func fixture() throws -> Fixture {
        let t = try TestVault()
        let vault = try t.open()
        try vault.perform { write in
            for (id, name) in [(Self.a1, "Ana One"), (Self.a2, "Ana Two"), (Self.b, "Ben Three")] {
                try vault.writePatient(PatientSummary(id: id, name: name, birthDate: nil, merged: []), in: write)
            }
        }
        var prescriptions: [PatientID: PrescriptionID] = [:]
        for (id, name) in [(Self.a1, "Ana One"), (Self.a2, "Ana Two"), (Self.b, "Ben Three")] {
            let (record, _) = try vault.add(TestVault.glasses(patient: name))
            #expect(record.prescription.patient.id == id.hex, "added by name, linked to the record")
            prescriptions[id] = record.id
        }
        #expect(try vault.store.patientBuckets() != nil, "an owner write stores the bucket hashes")
        #expect(try vault.check(readData: true).isClean)
        return Fixture(t: t, vault: vault, prescriptions: prescriptions)
    }

    /// Each patient's prescription read in a fresh process: the name read, or the integrity error.
    func reads(_ f: Fixture) throws -> [PatientID: Result<String, VaultError>] {
        var out: [PatientID: Result<String, VaultError>] = [:]
        for (patient, id) in f.prescriptions {
            let fresh = try f.t.open()
            do { out[patient] = .success(try fresh.prescription(id).prescription.patient.name) } catch {
                out[patient] = .failure(error)
            }
        }
        return out
    }

    func refused(_ result: Result<String, VaultError>?) -> Bool {
        if case .failure(.integrity) = result { return true }
        return false
    }

    func row(_ db: Database, _ id: PatientID) throws -> (info: [UInt8], mac: [UInt8]) {
        let s = try db.prepare("SELECT info, mac FROM person WHERE id = ?")
        try s.bind([.text(id.hex)])
        #expect(try s.step())
        return (s.blob(0), s.blob(1))
    }

    func bucketsRow(_ db: Database) throws -> (content: [UInt8], mac: [UInt8]) {
        let s = try db.prepare("SELECT content, mac FROM person_buckets WHERE singleton = 1")
        #expect(try s.step())
        return (s.blob(0), s.blob(1))
    }

    /// Puts `row` (an older copy of the patient's row) back in place of the current one.
    func putBack(_ row: (info: [UInt8], mac: [UInt8]), of id: PatientID, in db: Database) throws {
        try db.prepare("UPDATE person SET info = ?, mac = ? WHERE id = ?").run([
            .blob(row.info), .blob(row.mac), .text(id.hex)
        ])
    }

    /// Every read failed with an integrity error whose message contains `words`.
    func allRefused(_ read: [PatientID: Result<String, VaultError>], mentioning words: String) -> Bool {
        read.values.allSatisfy { if case .failure(.integrity(let m)) = $0 { m.contains(words) } else { false } }
    }

    func checkErrors(_ f: Fixture) throws -> [String] {
        try f.t.open().check(readData: true).stages.flatMap(\.errors)
    }

    @Test func anUntouchedVaultReadsEveryPatient() throws {
        let f = try fixture()
        let read = try reads(f)
        #expect(
            try read[Self.a1]?.get() == "Ana One" && read[Self.a2]?.get() == "Ana Two"
                && read[Self.b]?.get() == "Ben Three")
    }

    /// A rename undone by putting the older row back: refused for both patients of that bucket
    /// (the older row's MAC verifies: only the bucket hash tells it is not current).
    @Test func aRowPutBackFromAnOlderCopyIsRefusedInItsBucket() throws {
        let f = try fixture()
        let db = try f.t.raw()
        let old = try row(db, Self.a1)
        try f.vault.updatePatient(Self.a1, name: "Ana Renamed", birthDate: nil)
        try putBack(old, of: Self.a1, in: db)
        let read = try reads(f)
        #expect(refused(read[Self.a1]) && refused(read[Self.a2]))
        #expect(try read[Self.b]?.get() == "Ben Three", "another bucket reads")
        #expect(try checkErrors(f).contains { $0.contains("patient bucket 170") })
    }

    /// A row deleted: its bucket's other patient is refused too (its own row is current).
    @Test func aDeletedRowIsRefusedInItsBucket() throws {
        let f = try fixture()
        try f.t.raw().prepare("DELETE FROM person WHERE id = ?").run([.text(Self.a2.hex)])
        let read = try reads(f)
        #expect(refused(read[Self.a1]) && refused(read[Self.a2]))
        #expect(try read[Self.b]?.get() == "Ben Three")
        #expect(try checkErrors(f).contains { $0.contains("patient bucket 170") })
    }

    /// A row added: a patient merged away, its row put back from an older copy.
    @Test func aRowPutBackAfterAMergeIsRefusedInItsBucket() throws {
        let f = try fixture()
        let db = try f.t.raw()
        let old = try row(db, Self.a2)
        try f.vault.mergePatients(Self.a2, into: Self.a1)
        try db.prepare("INSERT INTO person (id, info, mac) VALUES (?, ?, ?)").run([
            .text(Self.a2.hex), .blob(old.info), .blob(old.mac)
        ])
        let read = try reads(f)
        #expect(refused(read[Self.a1]), "A1's row is current; its bucket is not")
        #expect(try read[Self.b]?.get() == "Ben Three")
        #expect(try checkErrors(f).contains { $0.contains("patient bucket 170") })
    }

    /// A row moved to another bucket (its id changed): refused in the bucket it left and in the one
    /// it joined.
    @Test func aRowMovedToAnotherBucketIsRefusedInBoth() throws {
        let f = try fixture()
        let moved = "bb02" + String(repeating: "0", count: 28)
        try f.t.raw().prepare("UPDATE person SET id = ? WHERE id = ?").run([.text(moved), .text(Self.a2.hex)])
        let read = try reads(f)
        #expect(refused(read[Self.a1]) && refused(read[Self.b]))
        let errors = try checkErrors(f)
        #expect(
            errors.contains { $0.contains("patient bucket 170") }
                && errors.contains { $0.contains("patient bucket 187") })
    }

    /// Bucket hashes made to match a rolled-back row (keeping the root's patients hash) need the
    /// owner's MAC: with the old one, they are refused.
    @Test func forgedBucketHashesAreRefused() throws {
        let f = try fixture()
        let db = try f.t.raw()
        let old = try row(db, Self.a1)
        try f.vault.updatePatient(Self.a1, name: "Ana Renamed", birthDate: nil)
        try putBack(old, of: Self.a1, in: db)
        let stored = try bucketsRow(db)
        var buckets = try #require(PatientBuckets.decode(stored.content))
        buckets.hashes[0xaa] = PatientBuckets.hash(bucket: 0xaa, rows: try f.vault.store.patientMACs(withPrefix: "aa"))
        try db.prepare("UPDATE person_buckets SET content = ?").run([.blob(buckets.encoded())])
        let read = try reads(f)
        #expect(allRefused(read, mentioning: "bucket hashes are forged"))
        #expect(try checkErrors(f).contains { $0.contains("bucket hashes are forged") })
    }

    /// The bucket hashes put back from an older copy together with the patient row they covered:
    /// they were computed for another set of patients (not the root's), so they are not used, and
    /// the whole set refuses the row.
    @Test func bucketHashesPutBackWithTheirRowAreNotUsed() throws {
        let f = try fixture()
        let db = try f.t.raw()
        let oldRow = try row(db, Self.a1)
        let oldBuckets = try bucketsRow(db)
        try f.vault.updatePatient(Self.a1, name: "Ana Renamed", birthDate: nil)
        #expect(try bucketsRow(db).content != oldBuckets.content)
        try putBack(oldRow, of: Self.a1, in: db)
        try db.prepare("UPDATE person_buckets SET content = ?, mac = ?").run([
            .blob(oldBuckets.content), .blob(oldBuckets.mac)
        ])
        let read = try reads(f)
        #expect(allRefused(read, mentioning: "patient records are not the ones"))
        #expect(try checkErrors(f).contains { $0.contains("patient records are not the ones") })
    }

    /// What an older rxvault leaves after changing a patient: the earlier bucket hashes, for
    /// another set. Reads check the whole set (and succeed), `check` notes it, and the next owner
    /// write, even one that changes no patient, stores hashes for the current set again.
    @Test func bucketHashesForAnEarlierSetAreRenewedByTheNextWrite() throws {
        let f = try fixture()
        let db = try f.t.raw()
        let oldBuckets = try bucketsRow(db)
        try f.vault.updatePatient(Self.a1, name: "Ana Renamed", birthDate: nil)
        try db.prepare("UPDATE person_buckets SET content = ?, mac = ?").run([
            .blob(oldBuckets.content), .blob(oldBuckets.mac)
        ])
        let read = try reads(f)
        #expect(
            try read[Self.a1]?.get() == "Ana Renamed" && read[Self.a2]?.get() == "Ana Two"
                && read[Self.b]?.get() == "Ben Three")
        let report = try f.t.open().check(readData: true)
        #expect(report.isClean && report.stages.flatMap(\.notes).contains { $0.contains("no patient bucket hashes") })
        let writer = try f.t.open()
        _ = try writer.add(TestVault.glasses(patient: "Ben Three"))
        let renewed = try #require(PatientBuckets.decode(try bucketsRow(db).content))
        #expect(renewed.patientsHash == VaultState.patientsHash(try writer.store.patientMACs()))
        #expect(
            !(try f.t.open().check(readData: true).stages.flatMap(\.notes).contains {
                $0.contains("no patient bucket hashes")
            }))
    }

    /// A vault as rxvault before bucket hashes made it (format 4, state schema 2, no
    /// `person_buckets` table): reads check the whole set, and the first owner write adds them;
    /// from then on a read checks only its bucket (a tampered row in another bucket leaves it
    /// alone).
    @Test func aVaultWithoutBucketHashesGetsThemAtTheNextWrite() throws {
        let f = try fixture()
        let db = try f.t.raw()
        try db.execute("DROP TABLE person_buckets")
        #expect(try f.vault.store.patientBuckets() == nil)
        let read = try reads(f)
        #expect(try read[Self.a1]?.get() == "Ana One" && read[Self.b]?.get() == "Ben Three")
        #expect(try f.t.open().check(readData: true).isClean)
        // Before the write, a deleted row in bucket 0xbb is found by the whole-set check when A1 is read.
        let bRow = try row(db, Self.b)
        try db.prepare("DELETE FROM person WHERE id = ?").run([.text(Self.b.hex)])
        #expect(refused(try reads(f)[Self.a1]))
        try db.prepare("INSERT INTO person (id, info, mac) VALUES (?, ?, ?)").run([
            .text(Self.b.hex), .blob(bRow.info), .blob(bRow.mac)
        ])
        // An owner write that changes no patient.
        _ = try f.t.open().add(TestVault.glasses(patient: "Ana One"))
        #expect(try f.vault.store.patientBuckets() != nil)
        #expect(try f.t.open().check(readData: true).isClean)
        try db.prepare("DELETE FROM person WHERE id = ?").run([.text(Self.b.hex)])
        let after = try reads(f)
        #expect(try after[Self.a1]?.get() == "Ana One", "A1's bucket is as the owner wrote it")
        #expect(refused(after[Self.b]))
    }

    /// The bucket of a stored id is the one whose two-digit prefix it starts with, byte for byte,
    /// as the store's range query selects: ids that do not start with lower-case hex are in none.
    @Test func bucketsAreTheStoresRangeQueries() throws {
        let f = try fixture()
        #expect(PatientBuckets.bucket(ofRowID: Self.a1.hex) == 0xaa && PatientBuckets.prefix(0xaa) == "aa")
        #expect(PatientBuckets.bucket(ofRowID: "AA01") == nil && PatientBuckets.bucket(ofRowID: "a") == nil)
        #expect(try f.vault.store.patientMACs(withPrefix: "aa").map(\.id) == [Self.a1, Self.a2])
        #expect(try f.vault.store.patientMACs(withPrefix: "bb").map(\.id) == [Self.b])
        #expect(try f.vault.store.patientMACs(withPrefix: "ab").isEmpty)
        let all = try f.vault.store.patientMACs()
        let buckets = PatientBuckets(rows: all, patientsHash: VaultState.patientsHash(all))
        for bucket in [0x00, 0xaa, 0xbb, 0xff] {
            #expect(
                buckets.hashes[bucket]
                    == PatientBuckets.hash(
                        bucket: bucket, rows: try f.vault.store.patientMACs(withPrefix: PatientBuckets.prefix(bucket))))
        }
    }
}
