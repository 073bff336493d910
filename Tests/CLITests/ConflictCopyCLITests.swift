import Foundation
import RxTestSupport
import Testing

/// Conflict copies beside the vault through the binary (issue 48): the notice every command
/// says first on a terminal (and never into a pipe), and `status` and `check`, which always
/// name them, in text and JSON, without changing check's exit status.
@Suite struct ConflictCopyCLITests {
    static let syncthingName = "vault.sync-conflict-20261207-101500-ABCDEFG.rxv"
    static let dropboxName = "vault (Sam's conflicted copy 2026-12-07).rxv"

    /// A vault with one prescription, and a copy of it under Syncthing's name.
    func setUp() throws -> CLIHarness {
        let cli = try CLIHarness()
        try cli.initVault()
        _ = try cli.add(CLIHarness.glassesArguments)
        try FileManager.default.copyItem(atPath: cli.vaultPath, toPath: cli.path(Self.syncthingName))
        return cli
    }

    @Test func everyCommandNamesThemFirstOnATerminal() throws {
        let cli = try setUp()
        for command in [["list"], ["log"], ["history", "ffffffff"]] {
            let r = try TerminalOutputTests.runOnTerminal(cli, command, columns: 200, stderrToo: true)
            let first = r.stdout.split(separator: "\n").first.map(String.init) ?? ""
            #expect(
                first
                    == "rxvault: 1 conflict copy beside the vault: \(Self.syncthingName); it may hold writes this file lacks: 'rxvault merge COPY' brings them in; delete a copy once merged",
                "\(command): \(r)")
            #expect(r.stdout.components(separatedBy: "conflict copy beside").count == 2, "once: \(r)")
        }
        // Into a pipe (a script, a log), nothing new.
        let piped = try cli.run(["list"])
        #expect(piped.status == 0, "\(piped)")
        #expect(!piped.stderr.contains("conflict"), "\(piped)")
    }

    @Test func severalAreCountedAndTheFirstFewNamed() throws {
        let cli = try setUp()
        try FileManager.default.copyItem(atPath: cli.vaultPath, toPath: cli.path(Self.dropboxName))
        for i in 1...3 {
            try FileManager.default.copyItem(
                atPath: cli.vaultPath, toPath: cli.path("vault_conflict-2026120\(i)-101500.rxv"))
        }
        let r = try TerminalOutputTests.runOnTerminal(cli, ["list"], columns: 200, stderrToo: true)
        #expect(r.stdout.contains("rxvault: 5 conflict copies beside the vault: "), "\(r)")
        #expect(
            r.stdout.contains(" and 2 more; they may hold writes this file lacks: 'rxvault merge COPY' brings them in"),
            "\(r)")
    }

    @Test func statusNamesThemInTextAndJSON() throws {
        let cli = try setUp()
        try FileManager.default.copyItem(atPath: cli.vaultPath, toPath: cli.path("kept.rxv"))
        let text = try cli.run(["status"])
        #expect(text.status == 0, "\(text)")
        #expect(text.stdout.contains("conflict copies"), "\(text)")
        #expect(text.stdout.contains("\(Self.syncthingName) (Syncthing's conflict copy, write "), "\(text)")
        #expect(text.stdout.contains("kept.rxv (another file of this vault, write "), "\(text)")
        #expect(text.stdout.contains("'rxvault merge COPY' brings them in"), "\(text)")

        let json = try cli.run(["status", "--format", "json"])
        let object = try #require(try JSONSerialization.jsonObject(with: json.stdoutData) as? [String: Any])
        let copies = try #require(object["conflictCopies"] as? [[String: Any]])
        let byName = Dictionary(uniqueKeysWithValues: copies.map { ($0["name"] as? String ?? "", $0) })
        #expect(Set(byName.keys) == [Self.syncthingName, "kept.rxv"], "\(json)")
        let syncthing = try #require(byName[Self.syncthingName])
        #expect(syncthing["form"] as? String == "syncthing")
        #expect(syncthing["path"] as? String == cli.path(Self.syncthingName))
        #expect((syncthing["writeCounter"] as? Int ?? 0) > 0)
        #expect((syncthing["modified"] as? String)?.hasSuffix("Z") == true)
        #expect(byName["kept.rxv"]?["form"] as? String == "vault-copy")

        // None beside it: an empty array, and no line in the text.
        try FileManager.default.removeItem(atPath: cli.path(Self.syncthingName))
        try FileManager.default.removeItem(atPath: cli.path("kept.rxv"))
        let none = try cli.run(["status", "--format", "json"])
        let empty = try #require(try JSONSerialization.jsonObject(with: none.stdoutData) as? [String: Any])
        #expect((empty["conflictCopies"] as? [Any])?.isEmpty == true, "\(none)")
        #expect(!(try cli.run(["status"]).stdout.contains("conflict copies")))
    }

    @Test func checkNamesThemAndStillPasses() throws {
        let cli = try setUp()
        let text = try cli.run(["check"])
        #expect(text.status == 0, "copies alone are no integrity error: \(text)")
        #expect(text.stdout.contains("ok   conflict copies beside the vault: 1 checked"), "\(text)")
        #expect(text.stdout.contains("     note: \(Self.syncthingName) (Syncthing's conflict copy, write "), "\(text)")

        let json = try cli.run(["check", "--format", "json"])
        #expect(json.status == 0, "\(json)")
        let object = try #require(try JSONSerialization.jsonObject(with: json.stdoutData) as? [String: Any])
        #expect(object["ok"] as? Bool == true)
        let copies = try #require(object["conflictCopies"] as? [[String: Any]])
        #expect(copies.map { $0["name"] as? String } == [Self.syncthingName])
        let stages = try #require(object["stages"] as? [[String: Any]])
        #expect(stages.last?["stage"] as? String == "conflict copies beside the vault")
        // On a terminal, check names them in its report, not in a line before it.
        let terminal = try TerminalOutputTests.runOnTerminal(cli, ["check"], columns: 200, stderrToo: true)
        #expect(!terminal.stdout.contains("rxvault: 1 conflict copy"), "\(terminal)")
        #expect(terminal.stdout.contains("note: \(Self.syncthingName)"), "\(terminal)")
    }

    /// Another vault in the folder, even under a sync tool's name, is no copy of this one; a
    /// vault in PostgreSQL has no folder and no copies (tested with the database's commands).
    @Test func anotherVaultIsNone() throws {
        let cli = try CLIHarness()
        try cli.initVault()
        try createVault(at: cli.path(Self.dropboxName), passphrase: "another passphrase")
        let json = try cli.run(["status", "--format", "json"])
        let object = try #require(try JSONSerialization.jsonObject(with: json.stdoutData) as? [String: Any])
        #expect((object["conflictCopies"] as? [Any])?.isEmpty == true, "\(json)")
    }
}
