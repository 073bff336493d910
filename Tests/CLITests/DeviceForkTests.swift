import Foundation
import Testing

/// One vault on two computers (issue 48, item 1): a copy from another line of history, put over
/// the vault by a sync tool or by hand, is named as a fork, not taken for the vault; an older
/// copy is still a rollback; a later state of the same line opens silently. Each "computer" is
/// its own HOME (its own state folder: replica and knowledge).
@Suite struct DeviceForkTests {
    static let annGlasses = [
        "add", "glasses", "--patient", "Ann Example", "--prescriber", "Dr Who", "--issued", "2026-05-01", "--expires",
        "2028-05-01",
        "--od", "-1.00", "--os", "-1.25"
    ]
    static let bobContacts = [
        "add", "contacts", "--patient", "Bob Example", "--prescriber", "Dr Who", "--issued", "2026-05-02", "--expires",
        "2027-05-02",
        "--od", "-2.00 bc 8.6 dia 14.2", "--os", "-2.25 bc 8.6 dia 14.2", "--brand", "Acme Daily"
    ]

    /// Two computers, A (the harness's HOME) and B (another HOME), each with its own copy.
    struct Devices {
        let cli: CLIHarness
        let bHome: String
        let bVault: String

        init() throws {
            cli = try CLIHarness()
            try cli.initVault()
            _ = try cli.add(CLIHarness.glassesArguments)
            bHome = cli.path("b-home")
            try FileManager.default.createDirectory(atPath: bHome, withIntermediateDirectories: true)
            bVault = try cli.consistentCopy("b-vault.rxv")
        }

        @discardableResult
        func a(_ arguments: [String]) throws -> CLIHarness.Result { try cli.run(arguments) }

        @discardableResult
        func b(_ arguments: [String]) throws -> CLIHarness.Result {
            try cli.run(arguments, environment: ["HOME": bHome, "RXVAULT_PATH": bVault])
        }

        /// B's file put over A's, as a sync tool or a careless copy does (a rename: new inode).
        func putBsFileOverAs() throws {
            let incoming = cli.vaultPath + ".incoming"
            try? FileManager.default.removeItem(atPath: incoming)
            try FileManager.default.copyItem(atPath: bVault, toPath: incoming)
            for suffix in ["-wal", "-shm"] { unlink(cli.vaultPath + suffix) }
            #expect(rename(incoming, cli.vaultPath) == 0)
        }
    }

    /// The scenario: both write apart, B's file lands on A. A reads B's state (reading
    /// still works) but is told, on every command, that this is another line of history that
    /// lacks a write made on A; `check` fails (76); owner writes are refused until accepted.
    @Test func aCopyFromAnotherLineOfHistoryIsAForkNotTheVault() throws {
        let d = try Devices()
        let ann = try #require(try d.a(Self.annGlasses).stdout.split(separator: "\n").first.map(String.init))
        #expect(try d.b(Self.bobContacts).status == 0)
        // A's side kept beside the vault, as Syncthing keeps the side it sets aside.
        let conflict = "vault.sync-conflict-20261207-101500-ABCDEFG.rxv"
        _ = try d.cli.consistentCopy(conflict)
        try d.putBsFileOverAs()

        let list = try d.a(["list"])
        #expect(list.stderr.contains("the writes it lacks are in \(conflict) beside it"), "\(list)")
        #expect(list.status == 0 && list.stdout.contains("Bob Example") && !list.stdout.contains(ann), "\(list)")
        #expect(list.stderr.contains("another line of history"), "\(list)")
        #expect(list.stderr.contains("lacks 1 write made on this computer (prescription \(ann))"), "\(list)")
        #expect(list.stderr.contains("holds 1 write never seen here"), "\(list)")

        let check = try d.a(["check"])
        #expect(check.status == 76 && check.stdout.contains("FAIL line of history"), "\(check)")
        let json = try d.a(["check", "--format", "json"])
        #expect(json.status == 76 && json.stdout.contains("another line of history"), "\(json)")

        let write = try d.a(Self.annGlasses)
        #expect(write.status == 76 && write.stderr.contains("--accept-fork"), "\(write)")
        #expect(!(try d.a(["list"]).stdout.contains("Ann Example")))

        // --accept-rollback is not for a fork: said so, nothing accepted.
        let wrongFlag = try d.a(["check", "--accept-rollback"])
        #expect(wrongFlag.status == 64 && wrongFlag.stderr.contains("--accept-fork"), "\(wrongFlag)")
        #expect(try d.a(["check"]).status == 76)

        // B's own computer sees its own line: nothing to say.
        let onB = try d.b(["list"])
        #expect(onB.status == 0 && !onB.stderr.contains("warning"), "\(onB)")

        // Accepted: A goes on from B's state, with a new replica for its writes.
        let accepted = try d.a(["check", "--accept-fork"])
        #expect(accepted.status == 0, "\(accepted)")
        let again = try d.a(Self.annGlasses)
        #expect(again.status == 0 && !again.stderr.contains("warning"), "\(again)")
        let after = try d.a(["list"])
        #expect(after.stdout.contains("Ann Example") && after.stdout.contains("Bob Example"), "\(after)")
        #expect(try d.a(["check"]).status == 0)
    }

    /// A later state of the same line (B took A's newest file and wrote on it) opens on A without
    /// a word, and A writes on it.
    @Test func aLaterStateOfTheSameLineOpensSilently() throws {
        let d = try Devices()
        #expect(try d.b(Self.bobContacts).status == 0)
        try d.putBsFileOverAs()
        let list = try d.a(["list"])
        #expect(list.status == 0 && list.stdout.contains("Bob Example") && list.stderr.isEmpty, "\(list)")
        #expect(try d.a(Self.annGlasses).status == 0)
        #expect(try d.a(["check"]).status == 0)
    }

    /// An older copy of the same line is a rollback, as before: named so, check fails, and
    /// `--accept-rollback` takes it.
    @Test func anOlderCopyIsStillARollback() throws {
        let d = try Devices()
        #expect(try d.a(Self.annGlasses).status == 0)
        try d.putBsFileOverAs()
        let list = try d.a(["list"])
        #expect(list.stderr.contains("older than a copy of it this computer has seen"), "\(list)")
        #expect(list.stderr.contains("lacks 1 write made on this computer"), "\(list)")
        #expect(try d.a(["check"]).status == 76)
        #expect(try d.a(Self.bobContacts).status == 76)
        #expect(try d.a(["check", "--accept-rollback"]).status == 0)
        #expect(try d.a(Self.bobContacts).status == 0)
    }

    /// What a computer knows of a vault is one file per vault id, whatever path reaches it.
    @Test func knowledgeIsKeptPerVaultNotPerPath() throws {
        let d = try Devices()
        #expect(try d.a(Self.annGlasses).status == 0)
        let link = d.cli.path("another-name.rxv")
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: d.cli.vaultPath)
        #expect(try d.a(["list", "--vault", link]).status == 0)
        let folder = d.cli.path(".local/state/rxvault")
        let knowledge = try FileManager.default.contentsOfDirectory(atPath: folder).filter {
            $0.hasSuffix(".knowledge")
        }
        #expect(knowledge.count == 1, "\(knowledge)")
        let text = try String(contentsOfFile: folder + "/" + knowledge[0], encoding: .utf8)
        #expect(text.hasPrefix("rxvault device knowledge 1\nreplica "), "\(text)")
    }
}
