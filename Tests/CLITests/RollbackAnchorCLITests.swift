import Foundation
import RxStore
import Testing

/// A rollback anchor belongs to the vault file it was taken from (vault id and path),
/// not to every file holding that vault, so a side restore does not hold the main vault back;
/// anchors of the old layout (vault id alone) keep protecting their file; an anchor that cannot
/// be kept is said, once per command.
@Suite struct RollbackAnchorCLITests {
    func copy(_ cli: CLIHarness, _ name: String) throws -> String { try cli.consistentCopy(name) }

    func putInPlace(_ copy: String, _ cli: CLIHarness) throws {
        for suffix in ["", "-wal", "-shm"] { unlink(cli.vaultPath + suffix) }
        try FileManager.default.copyItem(atPath: copy, toPath: cli.vaultPath)
    }

    /// A new machine restores an older backup as its vault, then a newer one beside it: the side
    /// copy's restore does not hold the main vault back, which keeps working. The side copy is
    /// another line of history than the one this machine writes (format 8, issue 48): it reads,
    /// named a fork, and is not written until accepted.
    @Test func aSideRestoreDoesNotHoldTheMainVaultBack() throws {
        let cli = try CLIHarness()
        try cli.initVault()
        let id = try cli.add(CLIHarness.glassesArguments)
        #expect(try cli.run(["backup", cli.path("b1.age")]).status == 0)
        for n in 1...3 { #expect(try cli.run(["edit", id, "--note", "on the old machine \(n)"]).status == 0) }
        #expect(try cli.run(["backup", cli.path("b2.age")]).status == 0)

        let home = cli.path("newhome")
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        let fresh: [String: String?] = ["HOME": home, "RXVAULT_PATH": nil, "XDG_STATE_HOME": nil, "XDG_DATA_HOME": nil]
        let restored = try cli.run(["restore", cli.path("b1.age")], environment: fresh)
        #expect(restored.status == 0, "\(restored)")
        #expect(try cli.run(["edit", id, "--note", "on the new machine"], environment: fresh).status == 0)
        #expect(try cli.run(["backup", cli.path("b3.age")], environment: fresh).status == 0)
        let side = cli.path("side/vault.rxv")
        let sideRestore = try cli.run(["restore", cli.path("b2.age"), "--to", side], environment: fresh)
        #expect(sideRestore.status == 0, "\(sideRestore)")
        let sideRead = try cli.run(["show", id, "--vault", side], environment: fresh)
        #expect(sideRead.status == 0 && sideRead.stderr.contains("another line of history"), "\(sideRead)")
        let sideWrite = try cli.run(["edit", id, "--vault", side, "--note", "on the side copy"], environment: fresh)
        #expect(sideWrite.status == 76 && sideWrite.stderr.contains("--accept-fork"), "\(sideWrite)")

        let write = try cli.run(["edit", id, "--note", "on the main vault again"], environment: fresh)
        #expect(write.status == 0 && !write.stderr.contains("older than"), "\(write)")
        let shown = try cli.run(["show", id], environment: fresh)
        #expect(shown.status == 0 && !shown.stderr.contains("warning"), "\(shown)")
        // One counter anchor per file, in the new machine's state folder, beside what the machine
        // knows of the vault (one for both files).
        let folder = try FileManager.default.contentsOfDirectory(atPath: home + "/.local/state/rxvault")
        #expect(folder.filter { $0.hasSuffix(".knowledge") }.count == 1, "\(folder)")
        // (and the backups this computer made: `<vault id>.backups`).
        let anchors = folder.filter {
            !$0.hasSuffix(".knowledge") && !$0.hasSuffix(".lock") && !$0.hasSuffix(".backups")
        }
        .sorted()
        #expect(
            anchors.count == 2 && anchors.allSatisfy { $0.count == 65 && $0.dropFirst(32).first == "-" }, "\(anchors)")
    }

    /// The same path keeps its anchor whatever replaces the file: an older copy put there by a
    /// rename is still caught.
    @Test func anOlderCopyAtTheSamePathIsStillCaught() throws {
        let cli = try CLIHarness()
        try cli.initVault()
        let id = try cli.add(CLIHarness.glassesArguments)
        let old = try copy(cli, "old.rxv")
        #expect(try cli.run(["edit", id, "--note", "newer"]).status == 0)
        let moved = cli.vaultPath + ".incoming"
        try FileManager.default.copyItem(atPath: old, toPath: moved)
        for suffix in ["-wal", "-shm"] { unlink(cli.vaultPath + suffix) }
        #expect(rename(moved, cli.vaultPath) == 0)
        let shown = try cli.run(["show", id])
        #expect(
            shown.status == 0 && shown.stderr.contains("older than a copy of it this computer has seen"), "\(shown)")
        #expect(try cli.run(["edit", id, "--note", "on the old copy"]).status == 76)
    }

    /// An anchor kept by rxvault before per-file anchors (named by the vault id alone) still
    /// catches a rollback of the file it protected, and is taken over by that file once it is
    /// back at or past the anchor's counter.
    @Test func anAnchorOfTheOldLayoutStillCatchesARollbackOfItsFile() throws {
        let cli = try CLIHarness()
        let state = cli.path("state")
        cli.environment["XDG_STATE_HOME"] = state
        try cli.initVault()
        let id = try cli.add(CLIHarness.glassesArguments)
        let old = try copy(cli, "old.rxv")
        #expect(try cli.run(["edit", id, "--note", "newer"]).status == 0)
        let newest = try copy(cli, "newest.rxv")
        let status = try cli.json(try cli.run(["status", "--format", "json"]).stdout)
        let vaultID = try #require(status["vaultID"] as? String)
        let folder = state + "/rxvault"
        let anchor = try #require(
            try FileManager.default.contentsOfDirectory(atPath: folder).first { $0.hasPrefix(vaultID + "-") })
        let text = try String(contentsOfFile: folder + "/" + anchor, encoding: .utf8)
        let counter = try #require(text.split(separator: "\n").first.flatMap { Int($0) })

        // The state folder as the old layout left it: one file per vault id, the counter alone.
        for name in try FileManager.default.contentsOfDirectory(atPath: folder) {
            try FileManager.default.removeItem(atPath: folder + "/" + name)
        }
        try "\(counter)\n".write(toFile: folder + "/" + vaultID, atomically: true, encoding: .utf8)

        try putInPlace(old, cli)
        let shown = try cli.run(["show", id])
        #expect(
            shown.status == 0 && shown.stderr.contains("older than a copy of it this computer has seen"), "\(shown)")
        #expect(try cli.run(["edit", id, "--note", "on the old copy"]).status == 76)
        #expect(FileManager.default.fileExists(atPath: folder + "/" + vaultID))

        // The file it protected, back as it was: it records an anchor of its own. The old one
        // stays (it may have been taken from another file that has not opened yet).
        try putInPlace(newest, cli)
        let back = try cli.run(["show", id])
        #expect(back.status == 0 && !back.stderr.contains("warning"), "\(back)")
        #expect(FileManager.default.fileExists(atPath: folder + "/" + vaultID))
        let own = try FileManager.default.contentsOfDirectory(atPath: folder).filter {
            $0 != vaultID && !$0.hasSuffix(".knowledge") && !$0.hasSuffix(".lock")
        }
        #expect(own.count == 1 && own[0].hasPrefix(vaultID + "-"), "\(own)")
        // And keeps catching what the old anchor caught.
        try putInPlace(old, cli)
        let again = try cli.run(["edit", id, "--note", "on the old copy"])
        #expect(again.status == 76 && again.stderr.contains("--accept-rollback"), "\(again)")
    }

    @Test func anAnchorThatCannotBeKeptIsSaidOncePerCommand() throws {
        let cli = try CLIHarness()
        try cli.initVault()
        let id = try cli.add(CLIHarness.glassesArguments)
        let warning = "warning: this computer cannot remember the newest state of the vault"
        func occurrences(_ text: String) -> Int { text.components(separatedBy: warning).count - 1 }

        // No HOME, no XDG_STATE_HOME: a write opens and commits, and warns once.
        let noHome = try cli.run(["edit", id, "--note", "no home"], environment: ["HOME": nil, "XDG_STATE_HOME": nil])
        #expect(noHome.status == 0 && occurrences(noHome.stderr) == 1, "\(noHome)")
        #expect(
            noHome.stderr.contains("(HOME is not set and neither is XDG_STATE_HOME)")
                && noHome.stderr.contains("set XDG_STATE_HOME"), "\(noHome)")
        // A relative HOME is no place either (a relative XDG_STATE_HOME is ignored, as the spec says).
        let relative = try cli.run(["list"], environment: ["HOME": "relative/home", "XDG_STATE_HOME": "relative/state"])
        #expect(relative.status == 0 && occurrences(relative.stderr) == 1, "\(relative)")
        #expect(
            relative.stderr.contains(
                "HOME (relative/home) is not an absolute path (XDG_STATE_HOME is not an absolute path)"), "\(relative)")
        #expect(!FileManager.default.fileExists(atPath: cli.path("relative")))
        // A state folder that cannot be written (a file where the folder should be, which even
        // root cannot write into): the reason is named.
        let notAFolder = try cli.write("a file\n", to: "state")
        let blocked = try cli.run(["edit", id, "--note", "blocked"], environment: ["XDG_STATE_HOME": notAFolder])
        #expect(blocked.status == 0 && occurrences(blocked.stderr) == 1, "\(blocked)")
        #expect(blocked.stderr.contains("cannot create \(notAFolder)/rxvault: Not a directory"), "\(blocked)")
        if getuid() != 0 {
            let locked = cli.path("locked")
            try FileManager.default.createDirectory(atPath: locked + "/rxvault", withIntermediateDirectories: true)
            chmod(locked + "/rxvault", 0o500)
            defer { chmod(locked + "/rxvault", 0o700) }
            let refused = try cli.run(["list"], environment: ["XDG_STATE_HOME": locked])
            #expect(
                refused.status == 0 && occurrences(refused.stderr) == 1 && refused.stderr.contains("Permission denied"),
                "\(refused)")
        }
        // Where it can be kept, nothing is said.
        let kept = try cli.run(["list"])
        #expect(kept.status == 0 && occurrences(kept.stderr) == 0, "\(kept)")
    }
}
