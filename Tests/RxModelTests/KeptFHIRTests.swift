import Foundation
import RxModel
import Testing

/// Kept FHIR elements in the Prescription JSON: optional (records written before read as
/// before), exact (numbers keep their kind), and following edits by their rule.
@Suite struct KeptFHIRTests {
    static let before =
        #"{"issued":"2026-03-01","kind":"glasses","patient":{"name":"Ada"},"prescriber":{"name":"Dr Lee"},"right":{"sphere":-2.25}}"#

    @Test func aPrescriptionWrittenBeforeHasNoneAndIsWrittenAsBefore() throws {
        let rx = try JSONDecoder().decode(Prescription.self, from: Data(Self.before.utf8))
        #expect(rx.fhir == nil)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        #expect(String(decoding: try encoder.encode(rx), as: UTF8.self) == Self.before)
    }

    @Test func keptValuesComeBackExactly() throws {
        let json =
            #"{"issued":"2026-03-01","kind":"glasses","patient":{"name":"Ada"},"prescriber":{"name":"Dr Lee"},"right":{"sphere":-2.25},"#
            + #""fhir":{"resource":{"id":"33124","active":true,"nothing":null,"meta":{"versionId":"2"}},"#
            + #""right":{"color":"green","duration":{"value":1,"unit":"month"},"weight":14.5}}}"#
        let rx = try JSONDecoder().decode(Prescription.self, from: Data(json.utf8))
        let kept = try #require(rx.fhir)
        #expect(kept.resource["active"] == .bool(true) && kept.resource["nothing"] == .null)
        #expect(kept.right?["duration"] == .object(["value": .integer(1), "unit": .string("month")]))
        #expect(kept.right?["weight"] == .number(14.5))
        #expect(try JSONDecoder().decode(Prescription.self, from: JSONEncoder().encode(rx)) == rx)
        #expect(kept.lines.contains { $0 == ("FHIR OD duration", "1 month") })
    }

    @Test func anEditKeepsWhatStillHolds() throws {
        var rx = try JSONDecoder().decode(Prescription.self, from: Data(Self.before.utf8))
        rx.left = LensSpecification(sphere: Hundredths(raw: -100))
        rx.fhir = KeptFHIR(
            resource: ["text": .string("<div>OD -2.25</div>"), "encounter": .string("Encounter/1")],
            right: ["color": .string("green")], left: ["color": .string("blue")],
            practitioner: ["resourceType": .string("Practitioner")])
        var same = rx
        same.fhir = nil
        #expect(rx.keptFHIR(after: rx) == rx.fhir, "no change: everything stays")
        var edited = rx
        edited.note = "checked"
        #expect(rx.keptFHIR(after: edited)?.resource == ["encounter": .string("Encounter/1")], "the narrative goes")
        #expect(rx.keptFHIR(after: edited)?.practitioner != nil)
        edited.prescriber.name = "Dr Other"
        edited.left = nil
        let kept = rx.keptFHIR(after: edited)
        #expect(kept?.practitioner == nil && kept?.left == nil && kept?.right == ["color": .string("green")])
        #expect(
            rx.changes(since: same).map(\.field) == [
                "FHIR encounter", "FHIR text", "FHIR OD color", "FHIR OS color", "FHIR practitioner"
            ])
    }
}
