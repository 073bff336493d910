import Foundation
import Testing

/// `patient remove`: only a patient no prescription names (newest or earlier versions); with
/// prescriptions it is refused (65) saying how many; it confirms like `remove` (a terminal, or
/// --yes; without either 64; a "no" 2).
@Suite struct PatientRemoveTests {
    func patientIDs(_ cli: CLIHarness) throws -> [String: String] {
        let r = try cli.run(["patients", "--format", "json"])
        #expect(r.status == 0, "\(r)")
        var ids: [String: String] = [:]
        for p in try cli.json(r.stdout)["patients"] as? [[String: Any]] ?? [] {
            ids[p["name"] as! String] = p["id"] as? String
        }
        return ids
    }

    @Test func refusesWhilePrescriptionsRemainThenRemoves() throws {
        let cli = try CLIHarness()
        try cli.initVault()
        let a = try cli.add(PatientNearMissTests.glasses("Sam Rivera"))
        _ = try cli.add(PatientNearMissTests.glasses("Sam Rivera"))
        let refused = try cli.run(["patient", "remove", "Sam Rivera", "--yes"])
        #expect(refused.status == 65, "\(refused)")
        #expect(refused.stderr.contains("still has 2 prescriptions"), "\(refused.stderr)")
        #expect(try patientIDs(cli).keys.contains("Sam Rivera"))

        // Without --yes and without a terminal: a usage error, before anything changes.
        let noorRx = try cli.add(PatientNearMissTests.glasses("Noor Haddad"))
        let id = try #require(try patientIDs(cli)["Noor Haddad"])
        #expect(try cli.run(["remove", noorRx, "--yes"]).status == 0)
        let unconfirmed = try cli.run(["patient", "remove", String(id.prefix(8))])
        #expect(unconfirmed.status == 64 && unconfirmed.stderr.contains("--yes"), "\(unconfirmed)")
        let removed = try cli.run(["patient", "remove", String(id.prefix(8)), "--yes"])
        #expect(removed.status == 0, "\(removed)")
        #expect(removed.stdout.contains("removed patient") && removed.stdout.contains("Noor Haddad"), "\(removed)")
        #expect(try patientIDs(cli)["Noor Haddad"] == nil)
        #expect(try cli.run(["patient", "remove", "Noor Haddad", "--yes"]).status == 67)
        #expect(try cli.run(["check"]).status == 0)
        #expect(try cli.run(["show", a]).status == 0)
    }

    /// A patient only earlier versions name (the prescription moved to another patient) stays:
    /// those versions read it.
    @Test func refusesWhileEarlierVersionsNameIt() throws {
        let cli = try CLIHarness()
        try cli.initVault()
        _ = try cli.add(PatientNearMissTests.glasses("Sam Rivera"))
        let id = try cli.add(PatientNearMissTests.glasses("Noor Haddad"))
        #expect(try cli.run(["edit", id, "--patient", "Sam Rivera"]).status == 0)
        let refused = try cli.run(["patient", "remove", "Noor Haddad", "--yes"])
        #expect(refused.status == 65, "\(refused)")
        #expect(refused.stderr.contains("earlier versions of 1 prescription"), "\(refused.stderr)")
        #expect(try cli.run(["history", id]).status == 0)
        #expect(try cli.run(["check"]).status == 0)
    }

    @Test func confirmsOnATerminal() throws {
        let cli = try CLIHarness()
        try cli.initVault()
        let rx = try cli.add(PatientNearMissTests.glasses("Noor Haddad"))
        #expect(try cli.run(["remove", rx, "--yes"]).status == 0)
        let secret = try String(contentsOfFile: cli.passphraseFile, encoding: .utf8).trimmingCharacters(in: .newlines)
        let declined = try PromptTests().drive(cli, ["patient", "remove", "Noor Haddad"], answers: [secret, "n"])
        #expect(declined.status == 2 && declined.stdout.contains("[y/N]"), "\(declined)")
        #expect(try patientIDs(cli)["Noor Haddad"] != nil)
        let confirmed = try PromptTests().drive(cli, ["patient", "remove", "Noor Haddad"], answers: [secret, "y"])
        #expect(confirmed.status == 0, "\(confirmed)")
        #expect(try patientIDs(cli).isEmpty)
    }
}
