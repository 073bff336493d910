import Foundation
import Testing

/// `rxvault merge` (issue 48, item 3) through the binary: the scenario mended, a
/// revocation never undone, the same copy merged twice, both directions converging, and every
/// refusal writing nothing. Each "computer" is its own HOME (`DeviceForkTests.Devices`).
@Suite struct MergeCLITests {
    static let conflict = "vault.sync-conflict-20261207-101500-ABCDEFG.rxv"

    /// What both copies must agree on after merging each other: the export without its time.
    static func exported(_ result: CLIHarness.Result) -> String {
        result.stdout.split(separator: "\n").filter { !$0.contains("\"exported\"") }.joined(separator: "\n")
    }

    /// The scenario at the top of the issue: A and B write apart, B's file lands on A, A's side is
    /// kept as Syncthing's conflict copy. The fork is reported; `merge` of the copy brings Ann's
    /// glasses back with Bob's contacts kept; `check` passes again; a second merge changes
    /// nothing; B merging A's file gives the same export.
    @Test func mergingTheConflictCopyBringsBackWhatTheForkHid() throws {
        let d = try DeviceForkTests.Devices()
        let ann = try #require(try d.a(DeviceForkTests.annGlasses).stdout.split(separator: "\n").first.map(String.init))
        let bob = try #require(
            try d.b(DeviceForkTests.bobContacts).stdout.split(separator: "\n").first.map(String.init))
        _ = try d.cli.consistentCopy(Self.conflict)
        try d.putBsFileOverAs()
        #expect(try d.a(["check"]).status == 76)

        let dry = try d.a(["merge", d.cli.path(Self.conflict), "--dry-run"])
        #expect(
            dry.status == 0 && dry.stdout.contains("would bring in") && dry.stdout.contains("1 new prescription"),
            "\(dry)")
        #expect(!(try d.a(["list"]).stdout.contains(ann)), "a dry run writes nothing")

        let merged = try d.a(["merge", d.cli.path(Self.conflict)])
        #expect(
            merged.status == 0 && merged.stdout.contains("brought in") && merged.stdout.contains("1 new prescription"),
            "\(merged)")
        let list = try d.a(["list"])
        #expect(list.stdout.contains(ann) && list.stdout.contains(bob), "\(list)")
        #expect(!list.stderr.contains("another line of history"), "the fork is mended: \(list)")
        let check = try d.a(["check"])
        #expect(check.status == 0, "\(check)")
        #expect(try d.a(DeviceForkTests.annGlasses).status == 0, "owner writes are allowed again")

        let counter = try d.a(["status", "--format", "json"]).stdout
        let again = try d.a(["merge", d.cli.path(Self.conflict)])
        #expect(again.status == 0 && again.stdout.contains("nothing to bring in"), "\(again)")
        #expect(try d.a(["status", "--format", "json"]).stdout == counter, "merging twice writes nothing")

        // B brings A's side in: both copies hold the same prescriptions and patients.
        let back = try d.b(["merge", d.cli.vaultPath])
        #expect(back.status == 0, "\(back)")
        let exportA = Self.exported(try d.a(["export", "--format", "json", "--out", "-"]))
        let exportB = Self.exported(try d.b(["export", "--format", "json", "--out", "-"]))
        #expect(exportA == exportB && exportA.contains(ann) && exportA.contains(bob))
        #expect(try d.b(["check"]).status == 0)
        // In step: after at most the other's log entries, neither has anything for the other.
        let fromB = try d.a(["merge", d.bVault, "--format", "json"])
        #expect(fromB.status == 0 && fromB.stdout.contains("\"prescriptionsAdded\" : [\n\n  ]"), "\(fromB)")
        // Each side's merge is news to the other once (its log entry); within two more rounds
        // neither has anything for the other.
        var rounds = 0
        while rounds < 3 {
            let intoB = try d.b(["merge", d.cli.vaultPath]).stdout
            let intoA = try d.a(["merge", d.bVault]).stdout
            if intoB.contains("nothing to bring in") && intoA.contains("nothing to bring in") { break }
            #expect(!intoB.contains("new prescription") || intoB.contains("0 new prescriptions"), "\(intoB)")
            rounds += 1
        }
        #expect(rounds <= 2, "the copies did not settle")
    }

    /// A revokes a client while B, not knowing, edits the prescription and narrows another grant:
    /// after merging both ways the revoked grant is gone on both, the narrowed one is narrow on
    /// both, both edits are in the history and the prescription is reported in conflict.
    @Test func aRevocationOnOneSideIsNeverUndone() throws {
        let d = try DeviceForkTests.Devices()
        let id = try #require(try d.a(["list", "--format", "json"]).stdout.firstMatch(of: /"id" : "([0-9a-f]{32})"/)?.1)
        for name in ["shop", "lab"] {
            #expect(
                try d.a(["client", "add", name, "--generate", "--identity-out", d.cli.path("\(name).key")]).status == 0)
            #expect(try d.a(["grant", name, String(id)]).status == 0)
        }
        // B starts from A's state now.
        _ = try d.cli.consistentCopy("b-vault-2.rxv")
        let bVault = d.cli.path("b-vault-2.rxv")
        func b(_ arguments: [String]) throws -> CLIHarness.Result {
            try d.cli.run(arguments, environment: ["HOME": d.bHome, "RXVAULT_PATH": bVault])
        }
        #expect(try b(["list"]).status == 0)
        #expect(try d.a(["revoke", "shop", String(id)]).status == 0)
        let editA = try d.a(["edit", String(id), "--od-sphere", "-3.00"])
        #expect(editA.status == 0, "\(editA)")
        let editB = try b(["edit", String(id), "--os-sphere", "-3.25"])
        #expect(editB.status == 0, "\(editB)")
        #expect(try b(["grant", "lab", String(id), "--expires", "2099-01-01"]).status == 0)

        let intoA = try d.a(["merge", bVault])
        #expect(intoA.status == 0 && intoA.stdout.contains("conflict: prescription \(id.prefix(8))"), "\(intoA)")
        let intoB = try b(["merge", d.cli.vaultPath])
        #expect(intoB.status == 0, "\(intoB)")
        for side in [try d.a(["grants", "--format", "json"]), try b(["grants", "--format", "json"])] {
            #expect(!side.stdout.contains("\"shop\""), "the revoked grant stays revoked: \(side)")
            #expect(side.stdout.contains("\"lab\"") && side.stdout.contains("2099-01-01"), "\(side)")
        }
        // Both list the conflict; resolving it on A ends it on B once B merges A again.
        let conflicts = try d.a(["conflicts", "--format", "json"])
        #expect(conflicts.status == 0 && conflicts.stdout.contains(String(id)), "\(conflicts)")
        #expect(try b(["conflicts"]).stdout.contains(String(id.prefix(8))))
        let wrongChoice = try d.a(["resolve", String(id), "--keep", "99"])
        #expect(wrongChoice.status == 65, "\(wrongChoice)")
        let resolved = try d.a(["resolve", String(id), "--keep", "mine"])
        #expect(resolved.status == 0 && resolved.stdout.contains("resolved: kept version"), "\(resolved)")
        #expect(try d.a(["show", String(id)]).stdout.contains("-3.00"))
        #expect(try d.a(["conflicts"]).stdout.contains("no prescription is in conflict"))
        #expect(try b(["merge", d.cli.vaultPath]).status == 0)
        #expect(try b(["conflicts"]).stdout.contains("no prescription is in conflict"))
        let log = try b(["log", "--format", "json"]).stdout
        #expect(log.contains("\"merge\""), "the merges are in the log")
        let history = try d.a(["history", String(id)]).stdout
        #expect(history.contains("-3.00") && history.contains("-3.25") && history.contains("merged"), "\(history)")
        #expect(try d.a(["check"]).status == 0 && (try b(["check"])).status == 0)
        let exportA = Self.exported(try d.a(["export", "--format", "json", "--out", "-"]))
        let exportB = Self.exported(try b(["export", "--format", "json", "--out", "-"]))
        #expect(exportA == exportB)
    }

    /// Attachments: one attached on B comes in (the grant that includes attachments is sealed
    /// with its key, and it extracts byte for byte); one detached on A stays detached on both.
    @Test func attachmentsComeInAndDetachedOnesStayGone() throws {
        let d = try DeviceForkTests.Devices()
        let id = try #require(
            try d.a(["list", "--format", "json"]).stdout.firstMatch(of: /"id" : "([0-9a-f]{32})"/)?.1)
        #expect(try d.a(["attach", String(id), AttachmentTests.pdf]).status == 0)
        #expect(try d.a(["client", "add", "shop", "--generate", "--identity-out", d.cli.path("shop.key")]).status == 0)
        #expect(try d.a(["grant", "shop", String(id)]).status == 0)
        _ = try d.cli.consistentCopy("b-vault-3.rxv")
        let bVault = d.cli.path("b-vault-3.rxv")
        func b(_ arguments: [String]) throws -> CLIHarness.Result {
            try d.cli.run(arguments, environment: ["HOME": d.bHome, "RXVAULT_PATH": bVault])
        }
        #expect(try b(["list"]).status == 0)
        #expect(try d.a(["detach", String(id), "pdf-1.4-three-pages.pdf", "--yes"]).status == 0)
        #expect(try b(["attach", String(id), AttachmentTests.photo]).status == 0)

        let merged = try d.a(["merge", bVault])
        #expect(merged.status == 0 && merged.stdout.contains("1 attachment"), "\(merged)")
        let listed = try d.a(["attachments", String(id)]).stdout
        #expect(listed.contains("png-prescription-photo") && !listed.contains("three-pages"), "\(listed)")
        #expect(try d.a(["check"]).status == 0)
        let out = d.cli.path("photo-out.png")
        #expect(try d.a(["extract", String(id), "png-prescription-photo-1200x1600.png", "--out", out]).status == 0)
        #expect(
            FileManager.default.contents(atPath: out) == FileManager.default.contents(atPath: AttachmentTests.photo))
        let client = try d.cli.run(["attachments", String(id), "--identity", d.cli.path("shop.key")])
        #expect(client.status == 0 && client.stdout.contains("png-prescription-photo"), "\(client)")
        #expect(try b(["merge", d.cli.vaultPath]).status == 0)
        #expect(!(try b(["attachments", String(id)])).stdout.contains("three-pages"), "detached on A, gone on B")
    }

    /// A backup taken on A holds A's writes: merging it brings them back after B's file landed.
    @Test func aBackupIsASourceToo() throws {
        let d = try DeviceForkTests.Devices()
        let ann = try #require(try d.a(DeviceForkTests.annGlasses).stdout.split(separator: "\n").first.map(String.init))
        #expect(try d.a(["backup", d.cli.path("a.age")]).status == 0)
        #expect(try d.b(DeviceForkTests.bobContacts).status == 0)
        try d.putBsFileOverAs()
        let merged = try d.a(["merge", d.cli.path("a.age")])
        #expect(merged.status == 0 && merged.stdout.contains("1 new prescription"), "\(merged)")
        #expect(try d.a(["list"]).stdout.contains(ann))
        #expect(try d.a(["check"]).status == 0)
    }

    /// Another vault's file (65, both ids), a damaged copy (76), a missing one: nothing written.
    /// The scenario with A's dated backup: A backs up after adding Ann's glasses, B's
    /// file lands on A; the fork names the backup as holding the write it lacks, and merging the
    /// backup brings the glasses back.
    @Test func theForkNamesTheDatedBackupThatHoldsTheMissingWrite() throws {
        let d = try DeviceForkTests.Devices()
        let ann = try #require(try d.a(DeviceForkTests.annGlasses).stdout.split(separator: "\n").first.map(String.init))
        let folder = d.cli.path("backups")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        #expect(try d.a(["backup", folder]).status == 0)
        let backup = try #require(try FileManager.default.contentsOfDirectory(atPath: folder).first)
        #expect(try d.b(DeviceForkTests.bobContacts).status == 0)
        try d.putBsFileOverAs()

        let list = try d.a(["list"])
        #expect(list.stderr.contains("another line of history"), "\(list)")
        #expect(
            list.stderr.contains("the writes it lacks are in the backup ") && list.stderr.contains(backup)
                && list.stderr.contains("'rxvault merge "), "\(list)")
        let merged = try d.a(["merge", folder + "/" + backup])
        #expect(merged.status == 0 && merged.stdout.contains("1 new prescription"), "\(merged)")
        let after = try d.a(["list"])
        #expect(after.stdout.contains(ann) && after.stdout.contains("Bob Example"), "\(after)")
        #expect(!after.stderr.contains("the backup"), "mended: \(after)")
        #expect(try d.a(["check"]).status == 0)
    }

    @Test func refusalsWriteNothing() throws {
        let d = try DeviceForkTests.Devices()
        let before = try d.a(["list", "--format", "json"]).stdout
        let other = d.cli.path("other.rxv")
        #expect(try d.cli.run(["init", "--kdf", "interactive"], environment: ["RXVAULT_PATH": other]).status == 0)
        let foreign = try d.a(["merge", other])
        #expect(foreign.status == 65 && foreign.stderr.contains("another vault (id "), "\(foreign)")
        #expect(foreign.stderr.contains("not a copy of this one (id "), "\(foreign)")

        // A copy that holds a write of B's (so there is something to merge), then altered.
        let damaged = try d.cli.consistentCopy("damaged.rxv")
        let onDamaged = try d.cli.run(
            DeviceForkTests.bobContacts, environment: ["HOME": d.bHome, "RXVAULT_PATH": damaged])
        #expect(onDamaged.status == 0, "\(onDamaged)")
        let sqlite = Process()
        sqlite.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        sqlite.arguments = [
            "python3", "-c",
            "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute('update prescription_version set mac = zeroblob(32)'); c.commit()",
            damaged
        ]
        try sqlite.run()
        sqlite.waitUntilExit()
        let broken = try d.a(["merge", damaged])
        #expect(broken.status == 76 && broken.stderr.contains("is damaged, nothing was merged"), "\(broken)")

        let missing = try d.a(["merge", d.cli.path("nowhere.rxv")])
        #expect(missing.status != 0, "\(missing)")
        #expect(try d.a(["list", "--format", "json"]).stdout == before)
        #expect(try d.a(["check"]).status == 0)
    }
}
