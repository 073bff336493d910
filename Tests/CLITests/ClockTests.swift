import Foundation
import Testing

/// Every time a command writes comes from the one clock (`RXVAULT_NOW`, `RXVAULT_TODAY`, else the
/// system's), so a script or a test that sets it sees the same time in the audit log, the export
/// and the files written beside it.
@Suite struct ClockTests {
    @Test func exportsAndIdentityFilesTakeTheCommandsTime() throws {
        let cli = try CLIHarness()
        try cli.initVault()
        let id = try cli.add(CLIHarness.glassesArguments)
        let now = ["RXVAULT_NOW": "2030-01-01T02:30:00Z"]
        let json = try cli.run(["export", id, "--format", "json", "--out", "-"], environment: now)
        #expect(json.status == 0, "\(json)")
        #expect(
            try cli.json(json.stdout)["exported"] as? String == "2030-01-01T02:30:00Z", "\(json.stdout.prefix(300))")
        let fhir = try cli.run(["export", id, "--format", "fhir", "--out", "-"], environment: now)
        #expect(
            try cli.json(fhir.stdout)["timestamp"] as? String == "2030-01-01T02:30:00Z", "\(fhir.stdout.prefix(300))")
        let added = try cli.run(
            ["client", "add", "shop", "--generate", "--identity-out", cli.path("shop.key")], environment: now)
        #expect(added.status == 0, "\(added)")
        #expect(
            try String(contentsOfFile: cli.path("shop.key"), encoding: .utf8).hasPrefix(
                "# created: 2030-01-01T02:30:00Z\n"))
    }
}
