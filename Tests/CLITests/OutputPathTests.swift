import Foundation
import Testing

/// Output paths that can never be a new file are refused up front (73), before a passphrase is
/// asked for or any work is done, the same way by every command that writes a file
/// (Support/WriteTarget.swift): a directory, a path ending in '/', a path whose folder is a file
/// or is missing, something that is not a regular file (a FIFO here; /dev/null alike), and an
/// existing file without --force.
@Suite struct OutputPathTests {
    func setUp() throws -> (CLIHarness, String) {
        let cli = try CLIHarness()
        try cli.initVault()
        let id = try cli.add(CLIHarness.glassesArguments)
        #expect(try cli.run(["attach", id, AttachmentTests.photo, "--name", "photo.png"]).status == 0)
        #expect(try cli.run(["backup", cli.path("b.age")]).status == 0)
        try FileManager.default.createDirectory(atPath: cli.path("folder"), withIntermediateDirectories: true)
        _ = try cli.write("a file\n", to: "plain")
        #expect(mkfifo(cli.path("fifo"), 0o600) == 0)
        return (cli, id)
    }

    /// Each command that writes a file, with `OUT` where its path goes.
    static func writers(_ cli: CLIHarness, _ id: String) -> [[String]] {
        [
            ["export", "--format", "json", "--out", "OUT"], ["extract", id, "photo.png", "--out", "OUT"],
            ["preview", id, "photo.png", "--out", "OUT"], ["backup", "OUT"],
            ["restore", cli.path("b.age"), "--to", "OUT"],
            ["client", "add", "shop", "--generate", "--identity-out", "OUT"]
        ]
    }

    /// The path and a part of the message that says what is wrong with it. (A folder is a
    /// destination for `backup`: it writes a dated file inside; see `backupTakesAFolder`.)
    static func impossible(_ cli: CLIHarness, for command: String = "") -> [(String, String)] {
        if command == "backup" {
            return [
                (cli.path("plain/out"), "\(cli.path("plain")) is not a directory"),
                (cli.path("new") + "/", "ends in '/'"),
                (cli.path("fifo"), "is not a regular file")
            ]
        }
        return impossibleForAFile(cli)
    }

    static func impossibleForAFile(_ cli: CLIHarness) -> [(String, String)] {
        [
            (cli.path("folder"), "is a directory"), (cli.path("folder") + "/", "is a directory"),
            (cli.path("plain/out"), "\(cli.path("plain")) is not a directory"), (cli.path("new") + "/", "ends in '/'"),
            (cli.path("fifo"), "is not a regular file")
        ]
    }

    static func with(_ arguments: [String], _ out: String) -> [String] { arguments.map { $0 == "OUT" ? out : $0 } }

    @Test func impossiblePathsAreRefusedBeforeThePassphrase() throws {
        let (cli, id) = try setUp()
        let before = cli.vaultFileBytes()
        for arguments in Self.writers(cli, id) {
            var cases = Self.impossible(cli, for: arguments[0])
            // restore creates missing folders (as init does); the others do not.
            if arguments[0] != "restore" {
                cases.append((cli.path("missing/out"), "the directory \(cli.path("missing")) does not exist"))
            }
            for (out, problem) in cases {
                // No passphrase source and no terminal: had rxvault got as far as the passphrase,
                // it would say that one is needed (64).
                let r = try cli.run(Self.with(arguments, out), environment: ["RXVAULT_PASSPHRASE_FILE": nil])
                #expect(r.status == 73 && !r.signalled, "\(arguments) \(out): \(r)")
                #expect(
                    r.stderr.hasPrefix("rxvault: error: ") && r.stderr.contains(problem), "\(arguments) \(out): \(r)")
            }
            // An existing file, without --force.
            let r = try cli.run(Self.with(arguments, cli.path("plain")), environment: ["RXVAULT_PASSPHRASE_FILE": nil])
            #expect(
                r.status == 73 && r.stderr.contains("already exists") && r.stderr.contains("--force"),
                "\(arguments): \(r)")
        }
        #expect(cli.vaultFileBytes() == before, "the vault changed")
        #expect(try FileManager.default.contentsOfDirectory(atPath: cli.path("folder")).isEmpty)
        #expect(
            !FileManager.default.fileExists(atPath: cli.path("new"))
                && !FileManager.default.fileExists(atPath: cli.path("missing")))
    }

    /// --force replaces a file, never a directory or a FIFO (a rename would put a file in the
    /// place of the node itself: as root, of /dev/null).
    @Test func forceReplacesOnlyARegularFile() throws {
        let (cli, id) = try setUp()
        for arguments in Self.writers(cli, id) where arguments[0] != "client" {
            for (out, problem) in Self.impossible(cli, for: arguments[0]) {
                let r = try cli.run(Self.with(arguments, out) + ["--force"])
                #expect(r.status == 73 && r.stderr.contains(problem), "\(arguments) \(out) --force: \(r)")
            }
        }
        var info = stat()
        #expect(lstat(cli.path("fifo"), &info) == 0 && info.st_mode & S_IFMT == S_IFIFO, "the FIFO was replaced")
        #expect(try FileManager.default.contentsOfDirectory(atPath: cli.path("folder")).isEmpty)
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: cli.directory.path).filter {
            $0.contains(".rxvault-") || $0.contains(".restore-")
        }
        #expect(leftovers.isEmpty, "temporary files were left: \(leftovers)")
        // A regular file is replaced, as before.
        let forced = try cli.run(["export", "--format", "json", "--out", cli.path("plain"), "--force"])
        #expect(forced.status == 0, "\(forced)")
        #expect(try String(contentsOfFile: cli.path("plain"), encoding: .utf8).contains("rxvault/export/v1"))
    }

    /// init: a vault path that can never be a file is refused before the new passphrase is asked for.
    @Test func initRefusesImpossiblePathsBeforeThePassphrase() throws {
        let cli = try CLIHarness()
        _ = try cli.write("a file\n", to: "plain")
        for (vault, status, problem) in [
            (cli.path("plain/v.rxv"), 73, "\(cli.path("plain")) is not a directory"),
            (cli.path("new") + "/", 73, "ends in '/'"), ("", 64, "is empty")
        ] {
            let r = try cli.run(
                ["init", "--kdf", "interactive", "--vault", vault], environment: ["RXVAULT_PASSPHRASE_FILE": nil])
            #expect(r.status == Int32(status) && r.stderr.contains(problem), "init --vault '\(vault)': \(r)")
        }
        #expect(!FileManager.default.fileExists(atPath: cli.path("new")))
        // Missing folders are still made for a path that can be a file.
        let r = try cli.run(["init", "--kdf", "interactive", "--vault", cli.path("made/here/v.rxv")])
        #expect(r.status == 0, "\(r)")
    }
}
