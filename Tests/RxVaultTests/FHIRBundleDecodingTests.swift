import Foundation
import RxModel
import RxTestSupport
import Testing

@testable import RxVault

/// A Bundle's prescriptions are decoded on all cores, a slice of `FHIR.Pass2.sliceSize` at a
/// time, each looking up its Patient where pass 1 found it (`FHIR.References`). What comes out
/// must be what one thread in file order gave: every item with its own patient, in the file's
/// order, and every problem listed by position in that order.
@Suite struct FHIRBundleDecodingTests {
    /// More than two slices, every prescription its own patient (as `scale.py`'s rows are).
    static let count = 2 * FHIR.Pass2.sliceSize + 300

    static func bundle() throws -> [UInt8] {
        let items = (0..<count).map { i in
            var rx = TestVault.glasses(patient: "Patient Number \(i)", sphere: -25 * (i % 40))
            rx.patient.birthDate = CalendarDate(iso: "19\(50 + i % 50)-0\(1 + i % 9)-1\(i % 10)")
            let id = PrescriptionID(hex: String(format: "%032x", i + 1))!
            return ExportItem(
                record: PrescriptionRecord(id: id, version: 1, recorded: "2026-06-20T10:00:00Z", prescription: rx),
                history: [], attachments: [])
        }
        return try FHIR.bundle(items, exported: "2026-06-20T10:00:00Z")
    }

    @Test func everyPrescriptionKeepsItsOwnPatientAndItsPlace() throws {
        let items = try FHIR.decode(try Self.bundle())
        #expect(items.count == Self.count)
        for (i, item) in items.enumerated() {
            #expect(item.prescription.patient.name == "Patient Number \(i)", "item \(i)")
            #expect(
                item.prescription.patient.birthDate == CalendarDate(iso: "19\(50 + i % 50)-0\(1 + i % 9)-1\(i % 10)"))
            #expect(item.prescription.right?.sphere == Hundredths(raw: -25 * (i % 40)))
            #expect(item.id == PrescriptionID(hex: String(format: "%032x", i + 1)), "item \(i) keeps its id")
        }
    }

    /// Problems in the first, a middle and the last slice are all listed, in file order, each
    /// under its own position; a prescription whose patient is not in the file says so.
    @Test func problemsAreListedInFileOrderAcrossSlices() throws {
        var bundle = try #require(
            try JSONSerialization.jsonObject(with: Data(try Self.bundle())) as? [String: Any])
        var entries = try #require(bundle["entry"] as? [[String: Any]])
        let prescriptions = entries.indices.filter {
            (entries[$0]["resource"] as? [String: Any])?["resourceType"] as? String == "VisionPrescription"
        }
        let broken = [prescriptions[3], prescriptions[FHIR.Pass2.sliceSize + 7], prescriptions.last!]
        for index in broken {
            var resource = try #require(entries[index]["resource"] as? [String: Any])
            resource["dateWritten"] = nil
            entries[index]["resource"] = resource
        }
        // One prescription's patient taken out of the file: its lookup finds nothing.
        let orphan = prescriptions[2 * FHIR.Pass2.sliceSize + 11]
        let patientURL = try #require(
            ((entries[orphan]["resource"] as? [String: Any])?["patient"] as? [String: Any])?["reference"] as? String)
        entries.removeAll { $0["fullUrl"] as? String == patientURL }
        bundle["entry"] = entries
        let edited = Array(try JSONSerialization.data(withJSONObject: bundle))
        do {
            _ = try FHIR.decode(edited)
            Issue.record("a Bundle with problems was read")
        } catch {
            let positions = error.problems.map { String($0.prefix { $0 != ":" }) }
            #expect(error.problems.count == 4, "\(error.problems)")
            #expect(positions == positions.sorted { position($0) < position($1) }, "\(positions)")
            #expect(error.problems.filter { $0.contains("dateWritten") }.count == 3, "\(error.problems)")
            #expect(
                error.problems.contains { $0.contains("patient \(patientURL) is not in the file") }, "\(error.problems)"
            )
        }
    }

    /// `entry[12] VisionPrescription` -> 12.
    func position(_ text: String) -> Int {
        Int(text.dropFirst("entry[".count).prefix { $0 != "]" }) ?? -1
    }
}
