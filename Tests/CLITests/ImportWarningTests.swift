import Foundation
import Testing

/// An import says the rules' advisories for what it stores, as `add` does, but a large file's
/// thousands of them do not bury the rest: the first 20, then how many more on how many more
/// prescriptions, and `--all-warnings` lists every one. Nothing about what is stored changes.
@Suite struct ImportWarningTests {
    /// An rxvault JSON file of `count` glasses prescriptions, each with an add on the right eye
    /// only (one advisory each: "OD has add +2.00 and OS has none").
    /// With `monocularPD`, a binocular PD of 31 mm too (a second advisory each: one eye's PD);
    /// with `oppositeSpheres`, a left sphere of +1.50 against the right's -1.00 (a third: spheres
    /// of opposite signs 2.50 apart).
    func file(_ cli: CLIHarness, count: Int, monocularPD: Bool = false, oppositeSpheres: Bool = false) throws
        -> String
    {
        let prescriptions = (0..<count).map { i -> [String: Any] in
            var prescription: [String: Any] = [
                "kind": "glasses", "patient": ["name": "Warning Patient"], "prescriber": ["name": "Dr Ana Lee"],
                "issued": "2026-01-\(String(format: "%02d", 1 + i % 28))", "expires": "2028-01-01",
                "right": ["sphere": -1.0, "add": 2.0], "left": ["sphere": -1.0]
            ]
            if monocularPD { prescription["pupillaryDistance"] = ["far": 31] }
            if oppositeSpheres { prescription["left"] = ["sphere": 1.5] }
            return [
                "id": String(format: "%032x", 0xabc000 + i), "version": 1, "recorded": "2026-01-01T00:00:00Z",
                "prescription": prescription
            ]
        }
        let document: [String: Any] = [
            "schema": "rxvault/export/v1", "exported": "2026-01-01T00:00:00Z", "prescriptions": prescriptions
        ]
        let path = cli.path("many-\(count)-\(monocularPD)-\(oppositeSpheres).json")
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
        // 8 prescriptions with three advisories each: the first 20 lines name prescriptions 0-6,
        // the last of them with two of its three. The 4 left are on one more prescription (7),
        // not two: prescription 6 was named already.
        let path = try file(cli, count: 8, monocularPD: true, oppositeSpheres: true)
        // Three each, as the dry run lists them all (before the import: then they are unchanged).
        let all = try cli.run(["import", path, "--dry-run", "--all-warnings"])
        #expect(warnings(all.stderr).count == 24, "\(all.stderr)")
        let r = try cli.run(["import", path])
        #expect(r.status == 0, "\(r)")
        let said = warnings(r.stderr)
        #expect(said.count == 21, "\(r.stderr)")
        #expect(said.filter { $0.contains("prescriptions[6]: ") }.count == 2, "\(r.stderr)")
        #expect(!r.stderr.contains("prescriptions[7]"), "\(r.stderr)")
        #expect(
            said.last
                == "rxvault: warning: ... and 4 more warnings (on 1 more prescription); --all-warnings lists every one",
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
