import Foundation
import Testing

/// `rxvault merge` of key slots and settings (issue 48, items 3 and 4) through the binary: a
/// slot added on one computer comes in, a slot removed (or re-wrapped because its passphrase
/// leaked) on either stays removed, the slot that opened the vault is never taken away under
/// the owner, and settings changed on one side apply (on both, the later change, said).
@Suite struct MergeKeySlotsCLITests {
    /// Two computers: A (the harness's vault and HOME) and B (its own HOME, a copy made now).
    struct Pair {
        let d: DeviceForkTests.Devices
        let bVault: String

        /// A copy of A's vault as it is now, opened once on B so that B has seen it.
        init(_ d: DeviceForkTests.Devices, copy name: String) throws {
            self.d = d
            bVault = try d.cli.consistentCopy(name)
            #expect(try b(["list"]).status == 0)
        }

        @discardableResult
        func a(_ arguments: [String], passphrase: String? = nil) throws -> CLIHarness.Result {
            try d.cli.run(arguments, environment: passphrase.map { ["RXVAULT_PASSPHRASE_FILE": $0] } ?? [:])
        }

        @discardableResult
        func b(_ arguments: [String], passphrase: String? = nil) throws -> CLIHarness.Result {
            var environment: [String: String?] = ["HOME": d.bHome, "RXVAULT_PATH": bVault]
            if let passphrase { environment["RXVAULT_PASSPHRASE_FILE"] = passphrase }
            return try d.cli.run(arguments, environment: environment)
        }

        /// Both copies export the same prescriptions, patients, clients and grants.
        func expectConverged() throws {
            let exportA = MergeCLITests.exported(try a(["export", "--format", "json", "--out", "-"]))
            let exportB = MergeCLITests.exported(try b(["export", "--format", "json", "--out", "-"]))
            #expect(exportA == exportB && !exportA.isEmpty)
        }

        /// Each side's runner, with the default passphrase or another one.
        var sides: [(name: String, run: ([String], String?) throws -> CLIHarness.Result)] {
            [("A", { try a($0, passphrase: $1) }), ("B", { try b($0, passphrase: $1) })]
        }

        /// The key slots `key list --format json` names on one side, by id.
        func slots(_ side: String, passphrase: String? = nil) throws -> [Int] {
            let arguments = ["key", "list", "--format", "json"]
            let listed =
                side == "A" ? try a(arguments, passphrase: passphrase) : try b(arguments, passphrase: passphrase)
            #expect(listed.status == 0, "\(listed)")
            return listed.stdout.matches(of: /"slot" : (\d+)/).compactMap { Int($0.1) }.sorted()
        }
    }

    /// A passphrase file with `text`, private as rxvault requires.
    static func passphrase(_ d: DeviceForkTests.Devices, _ name: String, _ text: String) throws -> String {
        try d.cli.write(text + "\n", to: name)
    }

    /// The brief's case: a slot added on A, another removed on B (its passphrase leaked), merged
    /// both ways: both copies hold the new slot and not the removed one, `check` passes on both,
    /// the removed passphrase opens neither and the added one opens both.
    @Test func aSlotAddedOnOneSideAndOneRemovedOnTheOtherMergeBothWays() throws {
        let d = try DeviceForkTests.Devices()
        let leaked = try Self.passphrase(d, "leaked", "a passphrase that leaked 2026")
        let added = try Self.passphrase(d, "added", "the laptop's new passphrase 2026")
        #expect(try d.a(["key", "add", "--kdf", "interactive", "--new-passphrase-file", leaked]).status == 0)
        let p = try Pair(d, copy: "b-slots.rxv")
        #expect(try p.slots("A") == [1, 2] && (try p.slots("B")) == [1, 2])

        #expect(try p.a(["key", "add", "--kdf", "interactive", "--new-passphrase-file", added]).status == 0)
        #expect(try p.b(["key", "remove", "2", "--yes"]).status == 0)
        #expect(try p.slots("A") == [1, 2, 3])

        let intoA = try p.a(["merge", p.bVault])
        #expect(intoA.status == 0 && intoA.stdout.contains("removed key slot 2, as the other copy did"), "\(intoA)")
        let intoB = try p.b(["merge", d.cli.vaultPath])
        #expect(intoB.status == 0 && intoB.stdout.contains("added key slot 3 of the other copy"), "\(intoB)")
        for (name, run) in p.sides {
            #expect(try p.slots(name) == [1, 3], "\(name)")
            #expect(try run(["check"], nil).status == 0, "\(name)")
            let withLeaked = try run(["list"], leaked)
            #expect(withLeaked.status == 77, "the removed passphrase opens \(name): \(withLeaked)")
            #expect(try run(["list"], added).status == 0, "the added passphrase opens \(name)")
        }
        // Merging again either way brings nothing back, and the copies agree.
        #expect(try p.a(["merge", p.bVault]).status == 0)
        #expect(try p.b(["merge", d.cli.vaultPath]).status == 0)
        #expect(try p.slots("A") == [1, 3] && (try p.slots("B")) == [1, 3])
        try p.expectConverged()
    }

    /// Slot 1 (made by `init`, before slots carried stamps) re-wrapped on A because its
    /// passphrase leaked: B, opened with another passphrase, takes A's slot 1, and the old
    /// passphrase opens neither copy. A third copy opened with the old passphrase itself keeps
    /// it (a merge never takes away the way the owner came in), says so, and still brings the
    /// rest in; merging that copy back into A does not put the old passphrase back.
    @Test func aPassphraseChangedBecauseItLeakedStaysChanged() throws {
        let d = try DeviceForkTests.Devices()
        let partner = try Self.passphrase(d, "partner", "the partner's passphrase 2026")
        let fresh = try Self.passphrase(d, "fresh", "a fresh passphrase for slot one")
        #expect(try d.a(["key", "add", "--kdf", "interactive", "--new-passphrase-file", partner]).status == 0)
        let p = try Pair(d, copy: "b-passwd.rxv")
        let cVault = try d.cli.consistentCopy("c-passwd.rxv")
        let cHome = d.cli.path("c-home")
        try FileManager.default.createDirectory(atPath: cHome, withIntermediateDirectories: true)
        func c(_ arguments: [String], passphrase: String? = nil) throws -> CLIHarness.Result {
            var environment: [String: String?] = ["HOME": cHome, "RXVAULT_PATH": cVault]
            if let passphrase { environment["RXVAULT_PASSPHRASE_FILE"] = passphrase }
            return try d.cli.run(arguments, environment: environment)
        }
        #expect(try c(["list"]).status == 0)

        let changed = try p.a(["passwd", "--new-passphrase-file", fresh])
        #expect(changed.status == 0, "\(changed)")
        let ann = try #require(
            try p.a(DeviceForkTests.annGlasses, passphrase: fresh).stdout.split(separator: "\n").first)

        let intoB = try p.b(["merge", d.cli.vaultPath], passphrase: partner)
        #expect(intoB.status == 0 && intoB.stdout.contains("took key slot 1 as the other copy changed it"), "\(intoB)")
        #expect(try p.b(["list"]).status == 77, "the leaked passphrase no longer opens B")
        #expect(try p.b(["check"], passphrase: fresh).status == 0)
        #expect(try p.b(["list"], passphrase: fresh).stdout.contains(ann))

        // C is opened with the old passphrase: slot 1 is kept there, said on stderr.
        let intoC = try c(["merge", d.cli.vaultPath])
        #expect(intoC.status == 0 && intoC.stdout.contains("1 new prescription"), "\(intoC)")
        #expect(intoC.stderr.contains("key slot 1, which opened the vault in this command"), "\(intoC)")
        #expect(try c(["check"]).status == 0)
        #expect(try c(["list"]).status == 0, "C still opens with the old passphrase, as the note says")
        // A takes C's changes (its merge entry) but not the old slot 1 back.
        let back = try p.a(["merge", cVault], passphrase: fresh)
        #expect(back.status == 0, "\(back)")
        #expect(try p.a(["list"]).status == 77, "the old passphrase stays out of A")
        #expect(try p.a(["check"], passphrase: fresh).status == 0)
    }

    /// Settings: one changed on each side applies on both; one changed on both sides is a
    /// conflict said by the merge, and both copies end with the same value.
    @Test func settingsChangedOnEitherSideApplyAndBothChangedIsSaid() throws {
        let d = try DeviceForkTests.Devices()
        let p = try Pair(d, copy: "b-settings.rxv")
        #expect(try p.a(["config", "set", "assumed-validity", "glasses=2y"]).status == 0)
        #expect(try p.b(["config", "set", "max-attachment-size", "64MiB"]).status == 0)
        let intoA = try p.a(["merge", p.bVault])
        #expect(
            intoA.status == 0
                && intoA.stdout.contains("setting max-attachment-size 67108864 bytes, from the other copy"),
            "\(intoA)")
        #expect(try p.b(["merge", d.cli.vaultPath]).status == 0)
        for (name, run) in p.sides {
            #expect(try run(["config", "get", "max-attachment-size"], nil).stdout == "67108864\n", "\(name)")
            #expect(try run(["config", "get", "assumed-validity"], nil).stdout == "glasses=2y\n", "\(name)")
            #expect(try run(["check"], nil).status == 0, "\(name)")
        }

        #expect(try p.a(["config", "set", "assumed-validity", "contacts=1y"]).status == 0)
        #expect(try p.b(["config", "set", "assumed-validity", "glasses=18m"]).status == 0)
        let both = try p.a(["merge", p.bVault])
        #expect(
            both.status == 0
                && both.stdout.contains(
                    "conflict: assumed-validity was changed in both copies (contacts=1y here, glasses=18m there)"),
            "\(both)")
        #expect(try p.b(["merge", d.cli.vaultPath]).status == 0)
        let onA = try p.a(["config", "get", "assumed-validity"]).stdout
        #expect(
            onA == (try p.b(["config", "get", "assumed-validity"])).stdout
                && ["contacts=1y\n", "glasses=18m\n"].contains(onA))
        #expect(try p.a(["check"]).status == 0 && (try p.b(["check"])).status == 0)
        try p.expectConverged()
    }
}
