import Foundation
import RxTestSupport
import Testing

/// What FHIR import used to flatten: a Patient's HumanName `family` and `given` (kept on the
/// patient record, written back in FHIR export beside `text` and in JSON export), and the
/// prescriber identifier's `system` (kept with the licence, written back).
@Suite struct FHIRNamePartsTests {
    static func resources(_ cli: CLIHarness, _ type: String) throws -> [[String: Any]] {
        let export = try cli.run(["export", "--format", "fhir", "--out", "-"])
        #expect(export.status == 0, "\(export)")
        return (try cli.json(export.stdout)["entry"] as? [[String: Any]] ?? []).compactMap {
            $0["resource"] as? [String: Any]
        }.filter { $0["resourceType"] as? String == type }
    }

    @Test func familyGivenAndTheLicenceSystemGoBackOut() throws {
        let cli = try CLIHarness()
        try cli.initVault()
        let imported = try cli.run(["import", FHIRImportTests.hl7, "--assume-expiry", "1y"])
        #expect(imported.status == 0, "\(imported)")

        let patients = try Self.resources(cli, "Patient")
        #expect(patients.count == 1)
        let name = try #require((patients.first?["name"] as? [[String: Any]])?.first)
        #expect(name["family"] as? String == "Chalmers", "\(name)")
        #expect(name["given"] as? [String] == ["Peter", "James"], "\(name)")
        #expect(name["text"] as? String == "Peter James Chalmers", "\(name)")
        for rx in try Self.resources(cli, "VisionPrescription") {
            let identifier = (rx["prescriber"] as? [String: Any])?["identifier"] as? [String: Any]
            #expect(identifier?["system"] as? String == "http://www.acme.org/practitioners", "\(rx)")
            #expect(identifier?["value"] as? String == "23", "\(rx)")
        }

        // JSON export, patients and show carry them too.
        let json = try cli.run(["export", "--format", "json", "--out", "-"])
        #expect(json.status == 0)
        let items = try cli.json(json.stdout)["prescriptions"] as? [[String: Any]] ?? []
        #expect(items.count == 2)
        for item in items {
            let rx = (item["prescription"] as? [String: Any]) ?? item
            let patient = rx["patient"] as? [String: Any]
            #expect(patient?["family"] as? String == "Chalmers", "\(item)")
            #expect(patient?["given"] as? [String] == ["Peter", "James"], "\(item)")
            let prescriber = rx["prescriber"] as? [String: Any]
            #expect(prescriber?["licenceSystem"] as? String == "http://www.acme.org/practitioners", "\(item)")
        }

        // A round trip through rxvault's own exports keeps them (and changes nothing).
        #expect(try cli.run(["export", "--format", "fhir", "--out", cli.path("out.json")]).status == 0)
        #expect(try cli.run(["export", "--format", "json", "--out", cli.path("out-rx.json")]).status == 0)
        let other = try CLIHarness()
        try other.initVault()
        #expect(try other.run(["import", cli.path("out.json")]).status == 0)
        let again = try Self.resources(other, "Patient")
        let back = try #require((again.first?["name"] as? [[String: Any]])?.first)
        #expect(back["family"] as? String == "Chalmers" && back["given"] as? [String] == ["Peter", "James"], "\(back)")
        let third = try CLIHarness()
        try third.initVault()
        #expect(try third.run(["import", cli.path("out-rx.json")]).status == 0)
        let fromJSON = try #require((try Self.resources(third, "Patient").first?["name"] as? [[String: Any]])?.first)
        #expect(fromJSON["family"] as? String == "Chalmers", "\(fromJSON)")

        // Renaming the patient drops the parts of the old name (they would contradict the new one).
        #expect(try cli.run(["patient", "rename", "Peter James Chalmers", "Jim Chalmers"]).status == 0)
        let renamed = try #require((try Self.resources(cli, "Patient").first?["name"] as? [[String: Any]])?.first)
        #expect(renamed["family"] == nil && renamed["given"] == nil && renamed["text"] as? String == "Jim Chalmers")
        #expect(try cli.run(["check"]).status == 0)
    }

    /// Patients written before the parts existed (by `add`) read and export as before: text only.
    @Test func patientsWithoutPartsAreUnchanged() throws {
        let cli = try CLIHarness()
        try cli.initVault()
        _ = try cli.add(CLIHarness.glassesArguments)
        let name = try #require((try Self.resources(cli, "Patient").first?["name"] as? [[String: Any]])?.first)
        #expect(name.keys.sorted() == ["text"], "\(name)")
        let rx = try #require(try Self.resources(cli, "VisionPrescription").first)
        #expect(((rx["prescriber"] as? [String: Any])?["identifier"] as? [String: Any])?.keys.sorted() == ["value"])
    }
}
