import Foundation
import Testing

/// The `superseded` status: a prescription a newer one of the same kind for the same patient
/// replaces reads as superseded, not as expired, in list, query and show (table and JSON).
@Suite struct SupersededTests {
    @Test func aNewerPrescriptionOfTheSameKindAndPatientSupersedes() throws {
        let cli = try CLIHarness()
        try cli.initVault()
        let old = try cli.add([
            "add", "glasses", "--patient", "Quintessa Marlowe", "--dob", "1980-04-02", "--prescriber", "Dr Lee",
            "--issued", "2024-03-01", "--expires", "2026-03-01", "--od", "-2.00", "--os", "-1.50"
        ])
        let newer = try cli.add(CLIHarness.glassesArguments)
        // Another kind, another patient, and a withdrawn newer one supersede nothing.
        let contacts = try cli.add(CLIHarness.contactsArguments)
        let kim = try cli.add([
            "add", "glasses", "--patient", "Kim Park", "--prescriber", "Dr Alvarez", "--issued", "2024-01-01",
            "--expires", "2026-01-01", "--od", "+1.50", "--os", "+1.25"
        ])
        let kimCancelled = try cli.add([
            "add", "glasses", "--patient", "Kim Park", "--prescriber", "Dr Alvarez", "--issued", "2026-05-01",
            "--expires", "2028-05-01", "--od", "+1.75", "--os", "+1.50"
        ])
        #expect(try cli.run(["edit", kimCancelled, "--status", "cancelled"]).status == 0)

        func statuses(_ arguments: [String]) throws -> [String: String] {
            let r = try cli.run(arguments + ["--format", "json"])
            #expect(r.status == 0, "\(r)")
            var out: [String: String] = [:]
            for item in try cli.json(r.stdout)["prescriptions"] as? [[String: Any]] ?? [] {
                out[String((item["id"] as! String).prefix(8))] = item["status"] as? String
            }
            return out
        }
        let listed = try statuses(["list"])
        #expect(listed[old] == "superseded")
        #expect(listed[newer] == "valid")
        #expect(listed[contacts] == "expiring")
        #expect(listed[kim] == "expired")
        #expect(listed[kimCancelled] == "cancelled")
        #expect(try statuses(["query", "--kind", "glasses"])[old] == "superseded")

        // JSON names the one that supersedes it; the table shows the word, uncoloured.
        let json = try cli.json(try cli.run(["show", old, "--format", "json"]).stdout)
        #expect(json["status"] as? String == "superseded")
        #expect((json["supersededBy"] as? String)?.hasPrefix(newer) == true)
        #expect(try cli.json(try cli.run(["show", newer, "--format", "json"]).stdout)["supersededBy"] == nil)
        let shown = try cli.run(["show", old])
        #expect(
            shown.stdout.contains("(superseded)") && shown.stdout.contains("superseded by")
                && shown.stdout.contains(newer), "\(shown)")
        let table = try cli.run(["list"])
        let row = table.stdout.split(separator: "\n").first { $0.hasPrefix(old) }
        #expect(row?.contains("superseded") == true, "\(table)")

        // --status superseded finds it; active still includes it (FHIR status stays active).
        let ids = { (arguments: [String]) throws -> Set<String> in Set(try statuses(["query"] + arguments).keys) }
        #expect(try ids(["--status", "superseded"]) == [old])
        #expect(try ids(["--status", "superseded,cancelled"]) == [old, kimCancelled])
        #expect(try ids(["--status", "active"]) == [old, newer, contacts, kim])
        #expect(try ids(["--status", "superseded", "--kind", "contacts"]).isEmpty)
        let bad = try cli.run(["query", "--status", "replaced"])
        #expect(bad.status == 65 && bad.stderr.contains("superseded"), "\(bad)")
        // The CSV status column says the same.
        let csv = try cli.run(["list", "--format", "csv"])
        #expect(csv.stdout.split(separator: "\n").contains { $0.contains(",superseded,") }, "\(csv)")
    }

    @Test func sameDayPrescriptionsBothStandAndClientsSeeOnlyTheirGrants() throws {
        let cli = try CLIHarness()
        try cli.initVault()
        // Distance and reading glasses written the same day: neither replaces the other.
        let distance = try cli.add([
            "add", "glasses", "--patient", "Kim Park", "--prescriber", "Dr Alvarez", "--issued", "2026-01-10",
            "--expires", "2028-01-10", "--od", "-1.50", "--os", "-1.25"
        ])
        let reading = try cli.add([
            "add", "glasses", "--patient", "Kim Park", "--prescriber", "Dr Alvarez", "--issued", "2026-01-10",
            "--expires", "2028-01-10", "--od", "+1.50", "--os", "+1.25"
        ])
        let older = try cli.add([
            "add", "glasses", "--patient", "kim  PARK", "--prescriber", "Dr Alvarez", "--issued", "2023-01-10",
            "--expires", "2025-01-10", "--od", "-1.00", "--os", "-1.00"
        ])
        let list = try cli.json(try cli.run(["list", "--format", "json"]).stdout)
        var status: [String: String] = [:]
        for item in list["prescriptions"] as? [[String: Any]] ?? [] {
            status[String((item["id"] as! String).prefix(8))] = item["status"] as? String
        }
        #expect(status == [distance: "valid", reading: "valid", older: "superseded"])

        // A client granted only the older one sees it expired: what supersedes it is not its to see.
        #expect(
            try cli.run(["client", "add", "shop", "--generate", "--identity-out", cli.path("shop.key")]).status == 0)
        #expect(try cli.run(["grant", "shop", older]).status == 0)
        let asClient = try cli.run(["--identity", cli.path("shop.key"), "show", older, "--format", "json"])
        #expect(try cli.json(asClient.stdout)["status"] as? String == "expired", "\(asClient)")
        #expect(try cli.run(["grant", "shop", reading]).status == 0)
        let both = try cli.run(["--identity", cli.path("shop.key"), "list", "--format", "json"])
        let seen = (try cli.json(both.stdout)["prescriptions"] as? [[String: Any]] ?? []).map {
            $0["status"] as? String ?? ""
        }
        #expect(seen.sorted() == ["superseded", "valid"], "\(both)")
    }
}
