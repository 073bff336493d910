import Foundation
import RxStore
import RxTestSupport
import Testing

/// An import of more than a thousand prescriptions learns at its start which prescriptions have
/// rows (`StoredPrescriptions`) instead of asking for each, on a file and on a database. It must
/// keep every rule of the small import: into a vault already lived in (a client, a grant, an
/// edit), again (all unchanged, one updated with its grant re-sealed), and after rows were
/// deleted from under a prescription it brings again (refused as tampering, never written as new).
@Suite struct LargeImportTests {
    static let size = 1_050

    static func export() -> String {
        let entries = (0..<size).map { i -> String in
            """
            {"id": "\(String(format: "%032x", 0xbee000 + i))", "version": 1, "recorded": "2026-01-01T00:00:00Z",
             "prescription": {"kind": "glasses", "patient": {"name": "Pat \(i)"}, "prescriber": {"name": "Dr Lee"},
             "issued": "2025-03-01", "expires": "2027-03-01", "right": {"sphere": -1.25}, "left": {"sphere": -1.5}}}
            """
        }
        return
            "{\"schema\": \"rxvault/export/v1\", \"exported\": \"2026-01-01T00:00:00Z\", \"prescriptions\": [\(entries.joined(separator: ","))]}"
    }

    static func id(_ i: Int) -> String { String(format: "%032x", 0xbee000 + i) }

    @Test(arguments: [false, true]) func aLargeImportKeepsTheRulesOfASmallOne(onDatabase: Bool) throws {
        var database: PostgresDatabaseInfo?
        let cli: CLIHarness
        if onDatabase {
            (cli, database) = try PostgresVaultTests.databaseVault()
        } else {
            cli = try CLIHarness()
            try cli.initVault()
        }
        let kept = try cli.add(CLIHarness.glassesArguments)
        #expect(
            try cli.run(["client", "add", "shop", "--generate", "--identity-out", cli.path("shop.key")]).status == 0)
        #expect(try cli.run(["grant", "shop", kept]).status == 0)
        let file = try cli.write(Self.export(), to: "large.json")

        let first = try cli.run(["import", file])
        #expect(first.status == 0, "\(first)")
        #expect(first.stdout.contains("imported: \(Self.size) new"), "\(first)")
        #expect(try cli.run(["check"]).status == 0)

        // A grant and an edit on one of them; the same file again with --update-unverified: every
        // other one unchanged, the edited one updated (version 3) and its grant re-sealed.
        let edited = Self.id(7)
        #expect(try cli.run(["grant", "shop", edited]).status == 0)
        #expect(try cli.run(["edit", edited, "--note", "changed here"]).status == 0)
        let again = try cli.run(["import", file, "--update-unverified"])
        #expect(again.status == 0, "\(again)")
        #expect(again.stdout.contains("0 new, 1 updated"), "\(again)")
        #expect(again.stdout.contains("\(Self.size - 1) unchanged"), "\(again)")
        let check = try cli.run(["check"])
        #expect(check.status == 0, "\(check)")
        let history = try cli.json(try cli.run(["history", edited, "--format", "json"]).stdout)
        #expect((history["prescriptions"] as? [Any])?.count == 3, "\(history)")
        let grants = try cli.run(["grants", "--client", "shop"])
        #expect(grants.stdout.contains(String(edited.prefix(8))), "\(grants)")
        let listed = try cli.json(try cli.run(["list", "--format", "json"]).stdout)
        #expect((listed["prescriptions"] as? [Any])?.count == Self.size + 1)

        // Rows deleted from under one the manifest holds: importing it again is refused as
        // tampering (the manifest still names it), not taken for a new prescription.
        let deleted = Self.id(11)
        let statements = [
            "DELETE FROM prescription_version WHERE prescription_id = '\(deleted)'",
            "DELETE FROM prescription WHERE id = '\(deleted)'"
        ]
        if let database {
            for statement in statements { _ = try PostgresServer.shared().psql(statement, database: database.database) }
        } else {
            let raw = try Database(path: cli.vaultPath)
            try raw.execute("PRAGMA foreign_keys = OFF")
            for statement in statements { try raw.execute(statement) }
        }
        let refused = try cli.run(["import", file])
        #expect(refused.status == 76, "\(refused)")
        #expect(refused.stderr.contains(String(deleted.prefix(8))), "\(refused)")
        #expect(try cli.run(["check"]).status == 76)
    }
}
