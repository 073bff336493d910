import Foundation
import Testing

/// Messages a new user meets in a day of everyday use (issue "Everyday use as tried"): each says
/// what to do next, and errors of one kind share one exit code.
@Suite struct EverydayMessageTests {
    @Test func mistakesPointToWhatToDoNext() throws {
        let cli = try CLIHarness()
        try cli.initVault()
        let id = try cli.add(CLIHarness.glassesArguments)

        // A client that does not exist: not found, and where the clients are listed.
        let nobody = try cli.run(["grant", "nobody", id])
        #expect(nobody.status == 67, "\(nobody)")
        #expect(nobody.stderr.contains("rxvault: hint: 'rxvault client list' shows the clients of this vault"))

        // A second client of one name (or one recipient) exists already: 73, as a duplicate attachment.
        #expect(
            try cli.run(["client", "add", "shop", "--generate", "--identity-out", cli.path("shop.key")]).status == 0)
        let again = try cli.run(["client", "add", "Shop", "--generate", "--identity-out", cli.path("shop2.key")])
        #expect(again.status == 73, "\(again)")
        #expect(again.stderr.contains("a client named 'Shop' already exists"), "\(again)")
        #expect(again.stderr.contains("'rxvault client list'"), "\(again)")

        // init on an existing vault: never replaced, and how to go on.
        let initAgain = try cli.run(["init"])
        #expect(initAgain.status == 73, "\(initAgain)")
        #expect(initAgain.stderr.contains("rxvault: hint: 'rxvault status' says what it is"), "\(initAgain)")

        // An axis without its x, as printed forms often write it.
        let axis = try cli.run([
            "add", "glasses", "--patient", "Ann Lowe", "--prescriber", "Dr Lee", "--issued", "2026-01-01",
            "--expires", "2028-01-01", "--od", "-2.00 -0.50 180", "--os", "-1.00"
        ])
        #expect(axis.status == 65, "\(axis)")
        #expect(axis.stderr.contains("an axis is written with x, as x180"), "\(axis)")
    }

    @Test func anUnlockLongerThanItMayLastSaysTheRange() throws {
        let cli = try CLIHarness()
        try cli.initVault()
        let long = try cli.run(["unlock", "--timeout", "25h"])
        #expect(long.status == 64, "\(long)")
        #expect(long.stderr.contains("25h is outside 1s to 24h, the range an unlock may last"), "\(long)")
        let garbled = try cli.run(["unlock", "--max-lifetime", "8 hours"])
        #expect(garbled.status == 64 && garbled.stderr.contains("written 90s, 15m, 8h or 1h30m"), "\(garbled)")
    }

    /// The owner sees the id a client app's requests use: in `show` and in `grants`.
    @Test func theOwnerSeesTheIDTheAppSees() throws {
        let cli = try CLIHarness()
        try cli.initVault()
        let id = try cli.add(CLIHarness.glassesArguments)
        #expect(
            try cli.run(["client", "add", "shop", "--generate", "--identity-out", cli.path("shop.key")]).status == 0)
        #expect(try cli.run(["grant", "shop", id]).status == 0)
        let granted = try cli.json(try cli.run(["grants", "--format", "json"]).stdout)
        let first = try #require((granted["grants"] as? [[String: Any]])?.first)
        let apiID = try #require(first["apiID"] as? String)
        #expect(apiID.count == 36 && apiID.split(separator: "-").count == 5, "\(apiID)")
        let shown = try cli.run(["show", id])
        #expect(shown.stdout.contains("API id        VisionPrescription/\(apiID)"), "\(shown)")
        #expect(try cli.run(["grants", "--wide"]).stdout.contains(apiID))
        // It is the id the export and the API give the resource.
        let exported = try cli.run(["export", "--format", "fhir", "--out", "-"])
        let compact = exported.stdout.filter { !$0.isWhitespace }
        #expect(compact.contains("\"id\":\"\(apiID)\""), "\(exported.stdout.prefix(600))")
    }
}
