import Foundation
import RxCrypto
import RxModel
import RxTestSupport
import Testing

@testable import RxVault

/// The lens details of format 4 (contact-lens type, add designation, D/N design, balance lens)
/// survive every place a prescription is kept or sent: the sealed record, the search index
/// (`list`, `query`), FHIR export and import (which `rxvault serve` shares); and records written
/// before they existed still read.
@Suite struct LensDetailsStorageTests {
    static let today = CalendarDate(year: 2026, month: 6, day: 20)!

    static func multifocal() -> Prescription {
        var rx = Prescription(
            kind: .contacts, patient: Patient(name: "Ada Example"), prescriber: Prescriber(name: "Dr Optic"),
            issued: CalendarDate(iso: "2026-01-10")!, expires: CalendarDate(iso: "2027-01-10")!)
        rx.contactLensType = .soft
        rx.right = LensSpecification(
            sphere: Hundredths(raw: -125), baseCurve: Hundredths(raw: 860), diameter: Hundredths(raw: 1420),
            brand: "Air Optix")
        rx.right!.addDesignation = .high
        rx.right!.dominance = .dominant
        rx.left = LensSpecification(
            sphere: Hundredths(raw: -150), add: Hundredths(raw: 150), baseCurve: Hundredths(raw: 860),
            diameter: Hundredths(raw: 1420), brand: "Air Optix")
        rx.left!.dominance = .nonDominant
        return rx
    }

    static func balance() -> Prescription {
        var rx = TestVault.glasses()
        rx.left = .balanceLens
        return rx
    }

    @Test func theSealedRecordAndTheIndexKeepEveryDetail() throws {
        let test = try TestVault()
        let vault = try test.open()
        for rx in [Self.multifocal(), Self.balance()] {
            let (added, _) = try vault.add(rx)
            // The vault links the patient to its record (format 4); every other field is as given.
            func given(_ stored: Prescription?) -> Prescription? {
                guard var stored else { return nil }
                stored.patient.id = nil
                return stored
            }
            #expect(added.prescription.patient.id != nil)
            #expect(given(added.prescription) == rx)
            #expect(given(try vault.prescription(added.id).prescription) == rx, "sealed record")
            #expect(given(try vault.list().first { $0.id == added.id }?.prescription) == rx, "search index")
        }
        let report = try vault.check(readData: false)
        #expect(report.isClean, "\(report.stages.flatMap(\.errors))")
    }

    /// An index entry written before the trailing fields existed (no bytes after the eyes)
    /// decodes with the details absent; one with a tag this version does not know is skipped.
    @Test func indexEntriesWithoutOrWithUnknownTrailingFieldsDecode() throws {
        let record = PrescriptionRecord(
            id: PrescriptionID(hex: String(repeating: "ab", count: 16))!, version: 1,
            recorded: "2026-06-20T10:00:00Z", prescription: Self.multifocal())
        func decode(_ bytes: [UInt8]) throws -> Prescription {
            var summary = record.prescription
            summary.contactLensType = nil
            for eye in Eye.allCases {
                summary[eye]!.addDesignation = nil
                summary[eye]!.dominance = nil
            }
            return try bytes.withUnsafeBytes { raw in
                var reader = RecordCodec.Reader(bytes: raw, p: 0)
                return try RecordCodec.decode(&reader, id: record.id, version: 1, summary: summary).prescription
            }
        }
        var w = RecordCodec.Writer()
        RecordCodec.encode(record, into: &w)
        #expect(try decode(w.bytes) == record.prescription)
        // The same entry as rxvault 0.3.0 wrote it: everything before the trailing fields.
        var oldRx = record.prescription
        oldRx.contactLensType = nil
        for eye in Eye.allCases {
            oldRx[eye]!.addDesignation = nil
            oldRx[eye]!.dominance = nil
        }
        let old = PrescriptionRecord(id: record.id, version: 1, recorded: record.recorded, prescription: oldRx)
        var before = RecordCodec.Writer()
        RecordCodec.encode(old, into: &before)
        #expect(w.bytes.starts(with: before.bytes) && w.bytes.count > before.bytes.count)
        #expect(try decode(before.bytes) == old.prescription)
        // A later tag is skipped; a truncated one is refused.
        #expect(try decode(w.bytes + [9, 2, 0, 0, 0, 7, 7]) == record.prescription)
        #expect(throws: RecordCodec.Reader.Truncated.self) { try decode(w.bytes + [9, 5, 0, 0, 0, 7]) }
    }

    /// A vault written by rxvault 0.3.0 (Fixtures/vaults/format3.sql): its records and index
    /// entries, written before these fields, read as they were, and it takes new ones.
    @Test func aVaultWrittenBeforeReadsAndTakesTheNewFields() throws {
        let t = try TestVault()
        let path = try t.fixtureVault("format3")
        let vault = try Vault.open(
            at: path, with: .passphrase(TestVault.secret("format three fixture")), clock: .fixed(today: Self.today))
        let listed = try vault.list()
        #expect(listed.count == 2)
        for record in listed {
            let sealed = try vault.prescription(record.id)
            #expect(sealed.prescription == record.prescription)
            #expect(sealed.prescription.contactLensType == nil)
            #expect(
                sealed.prescription.eyes.allSatisfy {
                    $0.1.addDesignation == nil && $0.1.dominance == nil && !$0.1.balance
                })
        }
        let contacts = try #require(listed.first { $0.prescription.kind == .contacts })
        let edited = try #require(
            try vault.edit(contacts.id) { rx in
                rx.contactLensType = .rgp
                for eye in Eye.allCases where rx[eye] != nil { rx[eye]!.addDesignation = .low }
            })
        #expect(try vault.prescription(contacts.id).prescription.contactLensType == .rgp)
        #expect(try vault.list().first { $0.id == contacts.id }?.prescription == edited.0.prescription)
        #expect(
            try vault.history(contacts.id).first?.prescription == contacts.prescription,
            "the version before still reads")
        let report = try vault.check(readData: true)
        #expect(report.isClean, "\(report.stages.flatMap(\.errors))")
    }

    @Test func fhirExportAndImportKeepEveryDetail() throws {
        for rx in [Self.multifocal(), Self.balance()] {
            let record = PrescriptionRecord(
                id: PrescriptionID(hex: String(repeating: "cd", count: 16))!, version: 1,
                recorded: "2026-06-20T10:00:00Z", prescription: rx)
            let item = ExportItem(record: record, history: [], attachments: [])
            let bundle = try FHIR.bundle([item], exported: "2026-06-20T10:00:00Z")
            let items = try FHIR.decode(bundle)
            #expect(items.count == 1)
            #expect(items.first?.prescription == rx)
            let text = String(decoding: bundle, as: UTF8.self)
            if rx.kind == .contacts {
                #expect(
                    text.contains("\"valueCode\" : \"soft\"") && text.contains("\"valueCode\" : \"HIGH\"")
                        && text.contains("\"valueCode\" : \"non-dominant\""))
            } else {
                // The balance lens carries no sphere: it has no prescribed power.
                let resource = FHIR.visionPrescriptionResource(record, for: .export).foundation as? [String: Any]
                let specs = try #require(resource?["lensSpecification"] as? [[String: Any]])
                let left = try #require(specs.first { $0["eye"] as? String == "left" })
                #expect(left["sphere"] == nil && left["power"] == nil)
                #expect(FHIR.isBalanceLens(left))
            }
        }
    }

    @Test func anUnknownCodeInAFHIRExtensionIsRefusedNotDropped() throws {
        let record = PrescriptionRecord(
            id: PrescriptionID(hex: String(repeating: "ef", count: 16))!, version: 1,
            recorded: "2026-06-20T10:00:00Z", prescription: Self.multifocal())
        let bundle = String(
            decoding: try FHIR.bundle(
                [ExportItem(record: record, history: [], attachments: [])], exported: "2026-06-20T10:00:00Z"),
            as: UTF8.self)
        for (good, bad, message) in [
            ("\"valueCode\" : \"soft\"", "\"valueCode\" : \"silicone\"", "contact-lens-type 'silicone'"),
            ("\"valueCode\" : \"HIGH\"", "\"valueCode\" : \"HIGHEST\"", "add-designation 'HIGHEST'"),
            ("\"valueCode\" : \"dominant\"", "\"valueCode\" : \"left\"", "lens-dominance 'left'")
        ] {
            #expect(bundle.contains(good))
            do {
                _ = try FHIR.decode(Array(bundle.replacingOccurrences(of: good, with: bad).utf8))
                Issue.record("\(bad) was accepted")
            } catch {
                #expect(error.description.contains(message), "\(error)")
            }
        }
    }
}
