import Foundation
import Testing

/// An import says the rules' advisories for what it stores, as `add` does, but a large file's
/// thousands of them do not bury the rest: the first 20, then how many more on how many more
/// prescriptions, and `--all-warnings` lists every one. Nothing about what is stored changes.
@Suite struct ImportWarningTests {
    /// An rxvault JSON file of `count` glasses prescriptions, each with an add on the right eye
    /// only (one advisory each: "OD has add +2.00 and OS has none").
    /// With `monocularPD`, a binocular PD of 31 mm too (a second advisory each: one eye's PD).
    func file(_ cli: CLIHarness, count: Int, monocularPD: Bool = false) throws -> String {
        let prescriptions = (0..<count).map { i -> [String: Any] in
            var prescription: [String: Any] = [
                "kind": "glasses", "patient": ["name": "Warning Patient"], "prescriber": ["name": "Dr Ana Lee"],
                "issued": "2026-01-\(String(format: "%02d", 1 + i % 28))", "expires": "2028-01-01",
                "right": ["sphere": -1.0, "add": 2.0], "left": ["sphere": -1.0]
            ]
            if monocularPD { prescription["pupillaryDistance"] = ["far": 31] }
            return [
                "id": String(format: "%032x", 0xabc000 + i), "version": 1, "recorded": "2026-01-01T00:00:00Z",
                "prescription": prescription
            ]
        }
        let document: [String: Any] = [
            "schema": "rxvault/export/v1", "exported": "2026-01-01T00:00:00Z", "prescriptions": prescriptions
        ]
        let path = cli.path("many-\(count)-\(monocularPD).json")
        try JSONSerialization.data(withJSONObject: document).write(to: URL(fileURLWithPath: path))
        return path
    }

    func warnings(_ stderr: String) -> [Substring] {
        stderr.split(separator: "\n").filter { $0.hasPrefix("rxvault: warning: ") }
    }

    @Test func aLargeImportListsTheFirstTwentyWarningsAndCountsTheRest() throws {
        let cli = try CLIHarness()
        try cli.initVault()
        let r = try cli.run(["import", try file(cli, count: 25)])
        #expect(r.status == 0, "\(r)")
        let said = warnings(r.stderr)
        #expect(said.count == 21, "\(r.stderr)")
        #expect(said.first?.contains("prescriptions[0]: OD has add +2.00 and OS has none") == true, "\(r.stderr)")
        #expect(said[19].contains("prescriptions[19]: "), "\(r.stderr)")
        #expect(!r.stderr.contains("prescriptions[20]"), "\(r.stderr)")
        #expect(
            said.last
                == "rxvault: warning: ... and 5 more warnings (on 5 more prescriptions); --all-warnings lists every one",
            "\(r.stderr)")
        #expect(r.stdout.contains("imported: 25 new"), "\(r.stdout)")
        #expect(try cli.json(try cli.run(["list", "--format", "json"]).stdout)["prescriptions"] as? [Any] != nil)
    }

    @Test func prescriptionsTheListedWarningsNamedAreNotCountedAgain() throws {
        let cli = try CLIHarness()
        try cli.initVault()
        // 12 prescriptions with two advisories each: the first 20 lines name prescriptions 0-9.
        let r = try cli.run(["import", try file(cli, count: 12, monocularPD: true)])
        #expect(r.status == 0, "\(r)")
        let said = warnings(r.stderr)
        #expect(said.count == 21, "\(r.stderr)")
        #expect(said.filter { $0.contains("prescriptions[9]: ") }.count == 2, "\(r.stderr)")
        #expect(
            said.last
                == "rxvault: warning: ... and 4 more warnings (on 2 more prescriptions); --all-warnings lists every one",
            "\(r.stderr)")
    }

    @Test func allWarningsListsEveryOne() throws {
        let cli = try CLIHarness()
        try cli.initVault()
        let r = try cli.run(["import", try file(cli, count: 25), "--dry-run", "--all-warnings"])
        #expect(r.status == 0, "\(r)")
        let said = warnings(r.stderr)
        #expect(said.count == 25, "\(r.stderr)")
        #expect(said.last?.contains("prescriptions[24]: OD has add +2.00 and OS has none") == true, "\(r.stderr)")
        #expect(!r.stderr.contains("more warning"), "\(r.stderr)")
        #expect(r.stdout.contains("would import: 25 new"), "\(r.stdout)")
    }

    @Test func aSmallImportListsEveryWarningWithoutACount() throws {
        let cli = try CLIHarness()
        try cli.initVault()
        let r = try cli.run(["import", try file(cli, count: 20)])
        #expect(r.status == 0, "\(r)")
        #expect(warnings(r.stderr).count == 20, "\(r.stderr)")
        #expect(!r.stderr.contains("more warning"), "\(r.stderr)")
    }
}
