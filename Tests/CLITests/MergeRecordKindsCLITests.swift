import Foundation
import Testing

/// `rxvault merge` record kind by record kind (issue 48, item 3), through the binary: removals,
/// a patient renamed on both computers, clients whose name or key the other copy already has,
/// a withdrawal against a concurrent edit, and every listing marking a prescription in
/// conflict. Each test merges both ways and compares the copies as `export --format json`.
@Suite struct MergeRecordKindsCLITests {
    typealias Pair = MergeKeySlotsCLITests.Pair

    static func firstID(_ result: CLIHarness.Result) -> String {
        String(result.stdout.split(separator: "\n").first ?? "")
    }

    static func ids(_ result: CLIHarness.Result) -> [String] {
        result.stdout.matches(of: /"id" : "([0-9a-f]{32})"/).map { String($0.1) }
    }

    /// A removes one prescription and B another, each after the copies parted: after merging
    /// both ways neither copy holds either (a removal on one side applies on the other, and a
    /// prescription removed after it was seen is not brought back by the copy that still had it).
    @Test func aPrescriptionRemovedOnOneSideIsRemovedOnBoth() throws {
        let d = try DeviceForkTests.Devices()
        let first = try #require(Self.ids(try d.a(["list", "--format", "json"])).first)
        let second = Self.firstID(try d.a(DeviceForkTests.annGlasses))
        let p = try Pair(d, copy: "b-removed.rxv")
        #expect(try p.a(["remove", first, "--yes"]).status == 0)
        #expect(try p.b(["remove", second, "--yes"]).status == 0)
        let kept = Self.firstID(try p.b(DeviceForkTests.bobContacts))

        let intoA = try p.a(["merge", p.bVault, "--format", "json"])
        #expect(intoA.status == 0 && intoA.stdout.contains(second), "\(intoA)")
        #expect(!(try p.a(["list"])).stdout.contains(String(second.prefix(8))), "removed on B, so removed on A")
        let intoB = try p.b(["merge", d.cli.vaultPath])
        #expect(
            intoB.status == 0 && intoB.stdout.contains("removed, as the other copy did: 1 prescription"), "\(intoB)")
        for (name, run) in p.sides {
            let listed = try run(["list", "--format", "json"], nil)
            let held = Self.ids(listed)
            #expect(!held.contains(first) && !held.contains(second), "\(name): \(listed)")
            #expect(held.contains { $0.hasPrefix(kept) }, "\(name): B's new prescription is on both")
            #expect(try run(["check"], nil).status == 0, "\(name)")
        }
        try p.expectConverged()
    }

    /// Grant terms by which write set them: A widens the shop's grant (its measurements too)
    /// after the copies parted, and B, not knowing, widens the lab's, which A revokes. After
    /// merging both ways the shop's grant is wide on both (B never narrowed it: the older terms
    /// B holds do not narrow A's newer ones), and the lab's is gone on both (a change of terms
    /// on B does not bring back a grant A revoked).
    @Test func aWideningIsKeptAndATermsChangeNeverUndoesARevoke() throws {
        let d = try DeviceForkTests.Devices()
        let id = try #require(Self.ids(try d.a(["list", "--format", "json"])).first)
        for name in ["shop", "lab"] {
            #expect(
                try d.a(["client", "add", name, "--generate", "--identity-out", d.cli.path("\(name).key")]).status == 0)
            #expect(try d.a(["grant", name, id]).status == 0)
        }
        let p = try Pair(d, copy: "b-terms.rxv")
        #expect(try p.a(["grant", "shop", id, "--measurements"]).status == 0)
        #expect(try p.b(["grant", "lab", id, "--measurements"]).status == 0)
        #expect(try p.a(["revoke", "lab", id]).status == 0)

        #expect(try p.a(["merge", p.bVault]).status == 0)
        #expect(try p.b(["merge", d.cli.vaultPath]).status == 0)
        for (name, run) in p.sides {
            let grants = try run(["grants", "--format", "json"], nil)
            let object = try JSONSerialization.jsonObject(with: Data(grants.stdout.utf8)) as? [String: Any]
            let items = object?["grants"] as? [[String: Any]] ?? []
            #expect(
                items.map { $0["client"] as? String } == ["shop"], "\(name): the lab's grant stays revoked: \(grants)")
            #expect(items.first?["measurements"] as? Bool == true, "\(name): the shop's widening is kept: \(grants)")
            let lab = try run(["--identity", d.cli.path("lab.key"), "list"], nil)
            #expect(!lab.stdout.contains(String(id.prefix(8))), "\(name): the lab reads nothing: \(lab)")
            #expect(try run(["check"], nil).status == 0, "\(name)")
        }
        try p.expectConverged()
    }

    /// Ann and Bob's records are one person's: A merges Bob's record into Ann's, and B, not
    /// knowing, Ann's into Bob's. After merging both ways each copy holds one record (the one
    /// with the smaller id, on both), both prescriptions name it, and the copies export the same.
    @Test func twoRecordsMergedEachIntoTheOtherEndAsOneOnBoth() throws {
        let d = try DeviceForkTests.Devices()
        let ann = Self.firstID(try d.a(DeviceForkTests.annGlasses))
        let bob = Self.firstID(try d.a(DeviceForkTests.bobContacts))
        func patient(_ id: String, _ run: ([String], String?) throws -> CLIHarness.Result) throws -> String {
            let shown = try run(["show", id, "--format", "json"], nil).stdout
            return String(try #require(shown.firstMatch(of: /"patient" : \{[^}]*"id" : "([0-9a-f]{12})/)?.1))
        }
        let p = try Pair(d, copy: "b-patients.rxv")
        let annRecord = try patient(ann, p.sides[0].run)
        let bobRecord = try patient(bob, p.sides[0].run)
        #expect(try p.a(["patient", "merge", annRecord, bobRecord, "--yes"]).status == 0)
        #expect(try p.b(["patient", "merge", bobRecord, annRecord, "--yes"]).status == 0)

        #expect(try p.a(["merge", p.bVault]).status == 0)
        #expect(try p.b(["merge", d.cli.vaultPath]).status == 0)
        let kept = min(annRecord, bobRecord)
        for (name, run) in p.sides {
            for id in [ann, bob] { #expect(try patient(id, run) == kept, "\(name): \(id) names the kept record") }
            let patients = try run(["patients", "--format", "json"], nil)
            let object = try JSONSerialization.jsonObject(with: Data(patients.stdout.utf8)) as? [String: Any]
            let records = (object?["patients"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
            #expect(
                records.contains { $0.hasPrefix(kept) }
                    && !records.contains { $0.hasPrefix(max(annRecord, bobRecord)) },
                "\(name): \(patients)")
            #expect(try run(["check"], nil).status == 0, "\(name)")
        }
        try p.expectConverged()
    }

    /// Both computers rename the same patient: the merge reports the conflict, both copies keep
    /// the same one of the two names (the later change), and `patients` shows it.
    @Test func bothSidesRenamingOnePatientIsAConflictAndOneNameIsKept() throws {
        let d = try DeviceForkTests.Devices()
        let p = try Pair(d, copy: "b-rename.rxv")
        #expect(try p.a(["patient", "rename", "Quintessa Marlowe", "Quintessa Marlowe-Hart"]).status == 0)
        #expect(try p.b(["patient", "rename", "Quintessa Marlowe", "Tessa Marlowe"]).status == 0)
        let intoA = try p.a(["merge", p.bVault])
        #expect(
            intoA.status == 0 && intoA.stdout.contains("was changed in both copies; the later change is kept"),
            "\(intoA)")
        let intoB = try p.b(["merge", d.cli.vaultPath])
        #expect(intoB.status == 0, "\(intoB)")
        let onA = try p.a(["patients"]).stdout
        let onB = try p.b(["patients"]).stdout
        #expect(onA == onB, "\(onA)\n\(onB)")
        let names = ["Quintessa Marlowe-Hart", "Tessa Marlowe"].filter { onA.contains($0) }
        #expect(names.count == 1, "one of the two names: \(onA)")
        #expect(try p.a(["check"]).status == 0 && (try p.b(["check"])).status == 0)
        try p.expectConverged()
    }

    /// A client whose name the other copy took comes in as `NAME-<id8>`; one whose key the
    /// other copy already registered (under another name) is not brought in, nor its grants:
    /// both said on stderr.
    @Test func clientsWhoseNameOrKeyIsTakenAreRenamedOrLeftOut() throws {
        let d = try DeviceForkTests.Devices()
        let id = try #require(Self.ids(try d.a(["list", "--format", "json"])).first)
        let p = try Pair(d, copy: "b-clients.rxv")
        let shared = try d.cli.ageKeygen("shared.key")
        #expect(
            try p.a(["client", "add", "shop", "--generate", "--identity-out", d.cli.path("shop-a.key")]).status == 0)
        #expect(
            try p.b(["client", "add", "shop", "--generate", "--identity-out", d.cli.path("shop-b.key")]).status == 0)
        #expect(try p.a(["client", "add", "lab", "--recipient", shared]).status == 0)
        #expect(try p.b(["client", "add", "optician", "--recipient", shared]).status == 0)
        #expect(try p.b(["grant", "shop", id]).status == 0)
        #expect(try p.b(["grant", "optician", id]).status == 0)

        let intoA = try p.a(["merge", p.bVault])
        #expect(intoA.status == 0, "\(intoA)")
        let renamed = try #require(
            intoA.stderr.firstMatch(
                of: /client 'shop' of the other copy is '(shop-[0-9a-f]{8})' here \(the name was taken\)/)?
                .1, "\(intoA)")
        #expect(
            intoA.stderr.contains(
                "client 'optician' of the other copy has the key of client 'lab' here: not brought in, nor its grants"),
            "\(intoA)")
        let clients = try p.a(["client", "list"]).stdout
        #expect(clients.contains(String(renamed)) && !clients.contains("optician"), "\(clients)")
        let grants = try p.a(["grants", "--format", "json"]).stdout
        #expect(grants.contains(String(renamed)) && !grants.contains("optician"), "\(grants)")
        // B's own shop reads what B granted it, in A's copy too.
        let read = try d.cli.run(["list", "--identity", d.cli.path("shop-b.key")])
        #expect(read.status == 0 && read.stdout.contains(String(id.prefix(8))), "\(read)")
        #expect(try p.a(["check"]).status == 0)
    }

    /// A withdraws a prescription while B edits it: after merging either way it reads as
    /// withdrawn (cancelled), B's edit is in its history, and it is in conflict; every listing
    /// says so (`list` table and JSON, `show`, `history`, `status`, `query` JSON, `conflicts`),
    /// until `resolve` ends it.
    @Test func aWithdrawalWinsOverAConcurrentEditAndEveryListingMarksTheConflict() throws {
        let d = try DeviceForkTests.Devices()
        let id = try #require(Self.ids(try d.a(["list", "--format", "json"])).first)
        let short = String(id.prefix(8))
        let p = try Pair(d, copy: "b-withdrawn.rxv")
        #expect(try p.a(["edit", id, "--status", "cancelled"]).status == 0)
        // B's edit is the later one (a day on), so only the rule, not the clock, keeps the withdrawal.
        let edit = try d.cli.run(
            ["edit", id, "--od-sphere", "-3.50"],
            environment: ["HOME": d.bHome, "RXVAULT_PATH": p.bVault, "RXVAULT_TODAY": "2026-06-16"])
        #expect(edit.status == 0, "\(edit)")

        let intoA = try p.a(["merge", p.bVault])
        #expect(intoA.status == 0 && intoA.stdout.contains("conflict: prescription \(short)"), "\(intoA)")
        #expect(try p.b(["merge", d.cli.vaultPath]).status == 0)
        for (name, run) in p.sides {
            let table = try run(["list", "--wide"], nil).stdout
            #expect(table.contains("cancelled, in conflict"), "\(name): \(table)")
            let json = try run(["list", "--format", "json"], nil).stdout
            #expect(json.contains("\"inConflict\" : true") && json.contains("\"status\" : \"cancelled\""), "\(name)")
            let shown = try run(["show", id], nil).stdout
            #expect(shown.contains("in conflict: both copies of the vault changed it"), "\(name): \(shown)")
            let history = try run(["history", id, "--wide"], nil).stdout
            #expect(
                history.contains("-3.50") && history.contains("the cancelled status kept")
                    && history.contains("(in conflict)"),
                "\(name): \(history)")
            let status = try run(["status"], nil).stdout
            #expect(status.contains("1 prescription changed in two copies"), "\(name): \(status)")
            let statusJSON = try run(["status", "--format", "json"], nil).stdout
            #expect(statusJSON.contains("\"inConflict\" : 1"), "\(name): \(statusJSON)")
            let query = try run(["query", "--patient", "Quintessa", "--status", "all", "--format", "json"], nil).stdout
            #expect(query.contains("\"inConflict\" : true"), "\(name): \(query)")
            #expect(try run(["conflicts"], nil).stdout.contains(short), "\(name)")
            #expect(try run(["check"], nil).status == 0, "\(name)")
        }
        try p.expectConverged()

        // `newest` keeps what the merge shows: the withdrawal. The marks go with the conflict.
        let resolved = try p.a(["resolve", id, "--keep", "newest"])
        #expect(resolved.status == 0, "\(resolved)")
        #expect(try p.a(["show", id, "--format", "json"]).stdout.contains("\"status\" : \"cancelled\""))
        #expect(!(try p.a(["list", "--format", "json"])).stdout.contains("inConflict"))
        #expect(!(try p.a(["history", id, "--format", "json"])).stdout.contains("inConflict"))
        #expect(!(try p.a(["status"])).stdout.contains("in conflict"))
        #expect(try p.a(["check"]).status == 0)
    }
}
