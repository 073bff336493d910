import Foundation
import RxStore
import RxTestSupport
import Testing

/// "FHIR import without silent loss", through the binary: the status rule, kept
/// elements written back on export, Practitioner prescribers, --assume-expiry, sphere/power
/// disagreement and amended prescriptions, on the HL7 R4 examples and on a Bundle written the
/// way a FHIR server (HAPI style: urn:uuid fullUrls, Practitioner references) writes one.
@Suite struct FHIRImportTests {
    static func fixture(_ name: String) -> String { Repository.fixture(name) }
    static let hl7 = fixture("fhir/hl7-r4-examples.json")
    static let clinic = fixture("fhir/clinic-bundle.json")
    static let amended = fixture("fhir/clinic-amended.json")

    /// The Python with fhir.resources (scripts/setup), which also runs Fixtures/fhir/contains.py.
    static var python: String { Repository.fhirPython }

    func runPython(_ arguments: [String]) throws -> (status: Int32, output: String) {
        try #require(
            FileManager.default.isExecutableFile(atPath: Self.python),
            "no Python with fhir.resources at \(Self.python): run scripts/setup")
        let r = try Subprocess.run([Self.python] + arguments)
        return (r.status, r.stdout + r.stderr)
    }

    /// Every element of `source`'s VisionPrescriptions is in `export` (Fixtures/fhir/contains.py).
    func givesBackEverything(_ source: String, _ export: String) throws -> (Bool, String) {
        let (status, output) = try runPython([Self.fixture("fhir/contains.py"), source, export])
        return (status == 0, output)
    }

    /// fhir.resources (R4B) reads the Bundle and every resource in it.
    func validates(_ bundle: String) throws -> (Bool, String) {
        let script = """
            import json, sys
            from fhir.resources.R4B import get_fhir_model_class
            from fhir.resources.R4B.bundle import Bundle
            data = json.load(open(sys.argv[1]))
            Bundle.model_validate(data)
            for entry in data["entry"]:
                get_fhir_model_class(entry["resource"]["resourceType"]).model_validate(entry["resource"])
            """
        let (status, output) = try runPython(["-c", script, bundle])
        return (status == 0, output)
    }

    func ids(_ cli: CLIHarness) throws -> [String: String] {
        // identifier value (RX-1001, 15013) -> rxvault id, from the kept identifiers in show's JSON.
        let list =
            try cli.json(try cli.run(["list", "--format", "json"]).stdout)["prescriptions"] as? [[String: Any]] ?? []
        var found: [String: String] = [:]
        for item in list {
            let id = item["id"] as! String
            let shown = try cli.json(try cli.run(["show", id, "--format", "json"]).stdout)
            let identifiers =
                ((shown["fhir"] as? [String: Any])?["resource"] as? [String: Any])?["identifier"] as? [[String: Any]]
                ?? []
            for identifier in identifiers { if let value = identifier["value"] as? String { found[value] = id } }
        }
        return found
    }

    @Test func theHL7ExamplesComeBackWithEveryElement() throws {
        let cli = try CLIHarness()
        try cli.initVault()
        // The contacts example has no expiry: refused, naming the flag that supplies one.
        let refused = try cli.run(["import", Self.hl7])
        #expect(
            refused.status == 65 && refused.stderr.contains("entry[3] VisionPrescription")
                && refused.stderr.contains("--assume-expiry 1y"), "\(refused)")
        #expect(!(try cli.run(["list"]).stdout.contains("Chalmers")), "nothing was imported")

        let imported = try cli.run(["import", Self.hl7, "--assume-expiry", "1y"])
        #expect(imported.stdout.contains("imported: 2 new, 0 updated (new version), 0 unchanged"), "\(imported)")
        #expect(imported.stderr.contains("1y after the issue date"), "the assumed expiry is said")
        let found = try ids(cli)
        let glasses = try #require(found["15013"])
        let contacts = try #require(found["15014"])

        // show: the kept elements, and the prescriber resolved from Practitioner/example.
        let shown = try cli.run(["show", contacts]).stdout
        for line in [
            "expires   ", "2015-06-15", "FHIR OD color", "green", "FHIR OS duration", "1 month", "FHIR OD note",
            "Shade treatment for extreme light sensitivity", "FHIR encounter", "Encounter/f001", "FHIR id", "33124",
            "Dr Adam Careful, licence 23, 534 Erewhon St, PleasantVille, Vic 3999"
        ] {
            #expect(shown.contains(line), "show lacks \(line): \(shown)")
        }
        let json = try cli.json(try cli.run(["show", glasses, "--format", "json"]).stdout)
        let kept = try #require(json["fhir"] as? [String: Any])
        #expect((kept["resource"] as? [String: Any])?["created"] as? String == "2014-06-15")
        #expect((kept["practitioner"] as? [String: Any])?["id"] as? String == "example")

        // export --format fhir gives back every element, and a real FHIR library reads it.
        #expect(try cli.run(["export", "--format", "fhir", "--out", cli.path("out.json")]).status == 0)
        let (complete, missing) = try givesBackEverything(Self.hl7, cli.path("out.json"))
        #expect(complete, "\(missing)")
        let (valid, problems) = try validates(cli.path("out.json"))
        #expect(valid, "fhir.resources refused the export: \(problems)")

        // The same file again changes nothing; rxvault's own export of them, too.
        let again = try cli.run(["import", Self.hl7, "--assume-expiry", "1y"])
        #expect(again.stdout.contains("0 new, 0 updated (new version), 2 unchanged"), "\(again)")
        let own = try cli.run(["import", cli.path("out.json")])
        #expect(own.stdout.contains("0 new, 0 updated (new version), 2 unchanged"), "\(own)")
    }

    /// The contains.py check is not one that cannot fail: a changed or dropped element is reported.
    @Test func theElementCheckFindsWhatIsMissing() throws {
        let cli = try CLIHarness()
        let source = try String(contentsOfFile: Self.hl7, encoding: .utf8)
        let changed = try cli.write(
            source.replacingOccurrences(of: "\"green\"", with: "\"blue\"")
                .replacingOccurrences(of: "\"encounter\"", with: "\"context\""), to: "changed.json")
        let (complete, output) = try givesBackEverything(Self.hl7, changed)
        #expect(!complete && output.contains("color") && output.contains("encounter"), "\(output)")
    }

    @Test func onlyActivePrescriptionsComeInUnlessAsked() throws {
        let cli = try CLIHarness()
        try cli.initVault()
        let imported = try cli.run(["import", Self.clinic, "--assume-expiry", "1y"])
        #expect(imported.status == 0 && imported.stdout.contains("imported: 2 new"), "\(imported)")
        #expect(
            imported.stderr.contains(
                "skipped 3 prescription(s) by status (1 cancelled, 1 draft, 1 entered-in-error): only active ones are imported"
            ), "\(imported)")
        #expect(imported.stderr.contains("--status active,cancelled,draft"), "\(imported)")
        #expect(try ids(cli).keys.sorted() == ["RX-1001", "RX-1002"])

        // --status all: cancelled and draft too, never entered-in-error unless named.
        let all = try cli.run(["import", Self.clinic, "--assume-expiry", "1y", "--status", "all", "--dry-run"])
        #expect(
            all.stdout.contains("skipped    -         entry[6] VisionPrescription: status entered-in-error"), "\(all)")
        #expect(all.stdout.contains("would import: 2 new, 0 updated (new version), 2 unchanged"), "\(all)")
        let named = try cli.run([
            "import", Self.clinic, "--assume-expiry", "1y", "--status", "cancelled,entered-in-error"
        ])
        #expect(named.stdout.contains("imported: 2 new"), "\(named)")
        let found = try ids(cli)
        #expect(found.keys.sorted() == ["RX-1001", "RX-1002", "RX-1003", "RX-1004"])
        // A cancelled one says so, and goes back out as cancelled.
        let shown = try cli.run(["show", found["RX-1003"]!]).stdout
        #expect(shown.contains("(cancelled)") && !shown.contains("(valid)"), "\(shown)")
        #expect(try cli.run(["export", found["RX-1003"]!, "--format", "fhir", "--out", cli.path("c.json")]).status == 0)
        #expect(try String(contentsOfFile: cli.path("c.json"), encoding: .utf8).contains("\"status\" : \"cancelled\""))

        let bad = try cli.run(["import", Self.clinic, "--status", "archived"])
        #expect(bad.status == 64 && bad.stderr.contains("--status 'archived'"), "\(bad)")
        let missing = try cli.write(
            #"{"resourceType":"VisionPrescription","dateWritten":"2026-01-01","patient":{"reference":"x"},"lensSpecification":[]}"#,
            to: "m.json")
        let noStatus = try cli.run(["import", missing])
        #expect(noStatus.status == 65 && noStatus.stderr.contains("status is missing"), "\(noStatus)")
    }

    @Test func aServersBundleKeepsItsElementsAndPrescribers() throws {
        let cli = try CLIHarness()
        try cli.initVault()
        #expect(try cli.run(["import", Self.clinic, "--assume-expiry", "1y"]).status == 0)
        let found = try ids(cli)
        // Practitioner by urn:uuid: name, NPI (before the state licence), telecom and address.
        let glasses = try cli.run(["show", found["RX-1001"]!]).stdout
        #expect(
            glasses.contains(
                "Grace Okafor OD, licence 1234567893, phone +1 555 0100; email grace.okafor@clinic.example; 12 Harbor Road, Springfield, IL 62701, US"
            ), "\(glasses)")
        #expect(
            glasses.contains("FHIR extension") && glasses.contains("anti-reflective"), "an unknown extension is kept")
        #expect(glasses.contains("FHIR dateWritten") && glasses.contains("2026-03-01T09:40:00+01:00"))
        // Through a PractitionerRole; its display wins for the name.
        let contacts = try cli.run(["show", found["RX-1002"]!]).stdout
        #expect(contacts.contains("Grace Okafor, OD, licence 1234567893"), "\(contacts)")
        #expect(contacts.contains("expires") && contacts.contains("2027-03-01"), "1y from 2026-03-01")

        #expect(try cli.run(["export", "--format", "fhir", "--out", cli.path("out.json")]).status == 0)
        let (valid, problems) = try validates(cli.path("out.json"))
        #expect(valid, "\(problems)")
        // RX-1001 comes back whole (the amended file holds only it, with the same shape).
        let (complete, missing) = try givesBackEverything(Self.amended, cli.path("out.json"))
        #expect(
            !complete && missing.contains("sphere") && !missing.contains("color"),
            "only the corrected sphere differs: \(missing)")
    }

    @Test func anAmendedPrescriptionIsANewVersionOfTheFirst() throws {
        let cli = try CLIHarness()
        try cli.initVault()
        #expect(try cli.run(["import", Self.clinic, "--assume-expiry", "1y"]).status == 0)
        let id = try #require(try ids(cli)["RX-1001"])
        // Same identifier, corrected OD sphere: recognised as the same prescription. FHIR is not
        // bound to this vault, so it updates only when told to (like any unbound file).
        let refused = try cli.run(["import", Self.amended])
        #expect(
            refused.status == 65
                && refused.stderr.contains(
                    "\(id.prefix(8)) exists in this vault with other content (OD sphere -2.50 → -2.75; FHIR meta)"),
            "\(refused)")
        #expect(refused.stderr.contains("--update-unverified"), "the hint names what updates from FHIR: \(refused)")
        let updated = try cli.run(["import", Self.amended, "--update-unverified"])
        #expect(updated.stdout.contains("imported: 0 new, 1 updated (new version), 0 unchanged"), "\(updated)")
        let history =
            try cli.json(try cli.run(["history", id, "--format", "json"]).stdout)["prescriptions"] as? [[String: Any]]
            ?? []
        #expect(history.count == 2, "one prescription with two versions")
        #expect(try ids(cli).count == 2, "not a second prescription")
        let again = try cli.run(["import", Self.amended, "--update-unverified"])
        #expect(
            again.stdout.contains("0 new, 0 updated (new version), 1 unchanged"), "the identical one again: unchanged")

        // Without any identifier, the resource id (with the patient) is the match.
        let bare = try String(contentsOfFile: Self.amended, encoding: .utf8)
            .replacingOccurrences(of: "\"value\": \"RX-1001\"", with: "\"value\": \"RX-9\"")
        let other = try cli.run(["import", try cli.write(bare, to: "other.json"), "--dry-run"])
        #expect(other.stdout.contains("new "), "another identifier is another prescription: \(other)")
    }

    @Test func sphereAndPowerMustAgree() throws {
        let cli = try CLIHarness()
        try cli.initVault()
        let text = try String(contentsOfFile: Self.clinic, encoding: .utf8)
        let disagree = try cli.write(
            text.replacingOccurrences(of: "\"power\": -3.0", with: "\"power\": -3.25"), to: "d.json")
        let r = try cli.run(["import", disagree, "--assume-expiry", "1y"])
        #expect(
            r.status == 65
                && r.stderr.contains(
                    "entry[4] VisionPrescription: lensSpecification[0] (OD): sphere -3.00 and power -3.25 disagree"),
            "\(r)")
        // The fixture's own OD gives both, equal: accepted.
        #expect(try cli.run(["import", Self.clinic, "--assume-expiry", "1y"]).status == 0)
        let bad = try cli.run(["import", Self.clinic, "--assume-expiry", "1 year"])
        #expect(bad.status == 64 && bad.stderr.contains("--assume-expiry '1 year'"), "\(bad)")
    }

    /// The edit rule (docs/format.md): kept elements stay, a stale narrative goes, the
    /// Practitioner goes with a changed prescriber, an eye's elements with the eye.
    @Test func editingKeepsWhatStillHolds() throws {
        let cli = try CLIHarness()
        try cli.initVault()
        #expect(try cli.run(["import", Self.hl7, "--assume-expiry", "1y"]).status == 0)
        let contacts = try #require(try ids(cli)["15014"])
        #expect(try cli.run(["edit", contacts, "--note", "checked"]).status == 0)
        var kept =
            try cli.json(try cli.run(["show", contacts, "--format", "json"]).stdout)["fhir"] as? [String: Any] ?? [:]
        #expect((kept["resource"] as? [String: Any])?["text"] == nil, "the narrative of the old values is dropped")
        #expect(
            (kept["resource"] as? [String: Any])?["encounter"] != nil
                && (kept["right"] as? [String: Any])?["color"] as? String == "green")
        #expect(kept["practitioner"] != nil)
        #expect(try cli.run(["edit", contacts, "--prescriber", "Dr Ruth Other", "--no-os"]).status == 0)
        kept = try cli.json(try cli.run(["show", contacts, "--format", "json"]).stdout)["fhir"] as? [String: Any] ?? [:]
        #expect(kept["practitioner"] == nil && kept["left"] == nil && kept["right"] != nil, "\(kept)")
    }

    /// A record written before kept elements existed (the released 0.3.0's format-3 fixture)
    /// still reads, has none, and exports.
    @Test func recordsWrittenBeforeReadAsBefore() throws {
        let cli = try CLIHarness(passphrase: "format three fixture", today: "2026-06-20")
        #expect(
            FileManager.default.createFile(atPath: cli.vaultPath, contents: nil, attributes: [.posixPermissions: 0o600])
        )
        let database = try Database(path: cli.vaultPath)
        try database.execute(try String(contentsOfFile: Self.fixture("vaults/format3.sql"), encoding: .utf8))
        let shown = try cli.run(["show", "29f3f5a9", "--format", "json"])
        #expect(shown.status == 0, "\(shown)")
        let json = try cli.json(shown.stdout)
        #expect((json["patient"] as? [String: Any])?["name"] as? String == "Ada Lovelace" && json["fhir"] == nil)
        #expect(try cli.run(["history", "29f3f5a9"]).status == 0)
        #expect(try cli.run(["export", "--format", "fhir", "--out", cli.path("old.json")]).status == 0)
    }
}
