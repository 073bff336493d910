import Foundation
import RxTestSupport
import Testing

/// HL7's two published VisionPrescription examples (Fixtures/fhir/visionprescription-example.json
/// and -example-1.json) and a Bundle without its Patient: refused without `--patient` (the
/// message names it), imported for the patient `--patient` names with it (found as
/// `query --patient` finds one, else made).
@Suite struct FHIRBareImportTests {
    static let glasses = Repository.fixture("fhir/visionprescription-example.json")
    static let contacts = Repository.fixture("fhir/visionprescription-example-1.json")

    func patients(_ cli: CLIHarness) throws -> [[String: Any]] {
        let r = try cli.run(["patients", "--format", "json"])
        #expect(r.status == 0, "\(r)")
        return try cli.json(r.stdout)["patients"] as? [[String: Any]] ?? []
    }

    @Test func theBareExamplesNeedAndTakePatient() throws {
        let cli = try CLIHarness()
        try cli.initVault()
        for file in [Self.glasses, Self.contacts] {
            let refused = try cli.run(["import", file, "--assume-expiry", "1y"])
            #expect(refused.status == 65, "\(refused)")
            #expect(
                refused.stderr.contains("Patient/example is not in the file") && refused.stderr.contains("--patient"),
                "\(refused.stderr)")
        }
        #expect(try patients(cli).isEmpty)

        // A new patient of that name.
        let glasses = try cli.run(["import", Self.glasses, "--patient", "Peter Chalmers"])
        #expect(glasses.status == 0, "\(glasses)")
        #expect(glasses.stdout.contains("imported: 1 new"), "\(glasses)")
        #expect(glasses.stderr.contains("new patient") && glasses.stderr.contains("Peter Chalmers"), "\(glasses)")
        // The same patient found by the whole name as add matches it (case and spacing aside).
        let contacts = try cli.run(["import", Self.contacts, "--patient", "PETER  chalmers", "--assume-expiry", "1y"])
        #expect(contacts.status == 0, "\(contacts)")
        #expect(!contacts.stderr.contains("new patient"), "\(contacts)")
        let all = try patients(cli)
        #expect(all.count == 1 && all.first?["name"] as? String == "Peter Chalmers", "\(all)")
        #expect((all.first?["prescriptions"] as? [Any])?.count == 2, "\(all)")

        // Again: unchanged (the same records).
        let again = try cli.run(["import", Self.glasses, "--patient", "Peter Chalmers"])
        #expect(again.stdout.contains("0 new, 0 updated (new version), 1 unchanged"), "\(again)")
        // The kept elements (colour, duration) are there.
        let shown = try cli.run(["query", "--patient", "chalmers", "--kind", "contacts"])
        #expect(shown.status == 0, "\(shown)")
    }

    @Test func aBundleWithoutItsPatientAndAmbiguousNames() throws {
        let cli = try CLIHarness()
        try cli.initVault()
        _ = try cli.add(PatientNearMissTests.glasses("Sam Rivera"))
        _ = try cli.add(PatientNearMissTests.glasses("Samuel Rivera Jr"))
        // The HL7 examples' Bundle without its Patient entry.
        let data = try Data(contentsOf: URL(fileURLWithPath: FHIRImportTests.hl7))
        var bundle = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        bundle["entry"] = (bundle["entry"] as? [[String: Any]] ?? []).filter {
            ($0["resource"] as? [String: Any])?["resourceType"] as? String != "Patient"
        }
        let file = cli.path("no-patient.json")
        try JSONSerialization.data(withJSONObject: bundle).write(to: URL(fileURLWithPath: file))

        let refused = try cli.run(["import", file, "--assume-expiry", "1y"])
        #expect(refused.status == 65 && refused.stderr.contains("--patient"), "\(refused)")
        // A part of a name is never taken for a patient by an import (it writes): "rivera" is a
        // new patient, not Sam Rivera's nor Samuel Rivera Jr's (review of issue 26).
        let third = try CLIHarness()
        try third.initVault()
        _ = try third.add(PatientNearMissTests.glasses("Sam Rivera"))
        let part = try third.run(["import", file, "--assume-expiry", "1y", "--patient", "rivera"])
        #expect(part.status == 0 && part.stderr.contains("new patient") && part.stderr.contains("rivera"), "\(part)")
        let thirdSam = try #require(try patients(third).first { $0["name"] as? String == "Sam Rivera" })
        #expect((thirdSam["prescriptions"] as? [Any])?.count == 1, "\(thirdSam)")
        let imported = try cli.run(["import", file, "--assume-expiry", "1y", "--patient", "Sam Rivera"])
        #expect(imported.status == 0 && imported.stdout.contains("imported: 2 new"), "\(imported)")
        #expect(!imported.stderr.contains("new patient"), "\(imported)")
        let sam = try #require(try patients(cli).first { $0["name"] as? String == "Sam Rivera" })
        #expect((sam["prescriptions"] as? [Any])?.count == 3, "\(sam)")

        // A name close to an existing one is refused as any import's (--new-patient to make it).
        let other = try CLIHarness()
        try other.initVault()
        _ = try other.add(PatientNearMissTests.glasses("Sam Rivera"))
        let near = try other.run(["import", Self.glasses, "--patient", "Sam Rivra"])
        #expect(near.status == 65 && near.stderr.contains("did you mean 'Sam Rivera'"), "\(near)")

        // --patient is for FHIR files; a Bundle with its Patient keeps it.
        #expect(try cli.run(["export", "--format", "json", "--out", cli.path("own.json")]).status == 0)
        let own = try cli.run(["import", cli.path("own.json"), "--patient", "Sam Rivera"])
        #expect(own.status == 64 && own.stderr.contains("--patient"), "\(own)")
        let whole = try other.run(["import", FHIRImportTests.hl7, "--assume-expiry", "1y", "--patient", "Sam Rivera"])
        #expect(whole.status == 0, "\(whole)")
        let names = try patients(other).compactMap { $0["name"] as? String }
        #expect(names.count == 2 && names.contains { $0.contains("Chalmers") }, "\(names)")
    }
}
