import Foundation
import Testing

/// Every file rxvault reads (to attach or import, a backup, a passphrase or identity file), given
/// as a directory, a missing file, an unreadable file, /dev/null or a FIFO: a clear message and
/// a documented exit code, never a crash, an "unexpected error" or a message about something
/// else (README.md, "Exit codes"; Support/InputFile.swift).
@Suite struct InputFileTests {
    func setUp() throws -> (CLIHarness, String) {
        let cli = try CLIHarness()
        try cli.initVault()
        let id = try cli.add(CLIHarness.glassesArguments)
        #expect(try cli.run(["backup", cli.path("b.age")]).status == 0)
        _ = try cli.ageKeygen("id.key")
        return (cli, id)
    }

    /// Each command that reads a file, with `FILE` where the file goes; `data` when the file is
    /// data (a missing one is 67), not a passphrase or identity (a missing one is a setting: 64).
    static func readers(_ cli: CLIHarness, _ id: String) -> [(arguments: [String], data: Bool)] {
        [
            (["import", "FILE"], true), (["import", "FILE", "--dry-run"], true), (["attach", id, "FILE"], true),
            (["restore", "FILE", "--to", cli.path("restored.rxv")], true), (["backup", "verify", "FILE"], true),
            (["list", "--passphrase-file", "FILE"], false), (["--identity", "FILE", "list"], false),
            (["export", "--format", "json", "--out", cli.path("e.age"), "--age-passphrase-file", "FILE"], false),
            (["backup", "verify", cli.path("b.age"), "--age-identity", "FILE"], false),
            (["passwd", "--new-passphrase-file", "FILE"], false)
        ]
    }

    static func with(_ arguments: [String], _ file: String) -> [String] { arguments.map { $0 == "FILE" ? file : $0 } }

    static func expectClear(_ r: CLIHarness.Result, _ what: String) {
        #expect(!r.signalled, "\(what) crashed: \(r)")
        #expect(r.stderr.hasPrefix("rxvault: error: "), "\(what): \(r)")
        #expect(!r.stderr.contains("unexpected error"), "\(what): \(r)")
    }

    @Test func aDirectoryIsRefusedByEveryReader() throws {
        let (cli, id) = try setUp()
        try FileManager.default.createDirectory(atPath: cli.path("folder"), withIntermediateDirectories: true)
        let before = cli.vaultFileBytes()
        for (arguments, _) in Self.readers(cli, id) {
            let r = try cli.run(Self.with(arguments, cli.path("folder")))
            Self.expectClear(r, "\(arguments)")
            #expect(r.status == 64, "\(arguments): \(r)")
            #expect(r.stderr.contains("\(cli.path("folder")) is a directory, not a file"), "\(arguments): \(r)")
        }
        // Data files are looked at before the passphrase: no passphrase source is needed to hear it.
        for (arguments, data) in Self.readers(cli, id) where data {
            let r = try cli.run(Self.with(arguments, cli.path("folder")), environment: ["RXVAULT_PASSPHRASE_FILE": nil])
            #expect(r.status == 64 && r.stderr.contains("is a directory"), "\(arguments): \(r)")
        }
        #expect(cli.vaultFileBytes() == before, "the vault changed")
        #expect(!FileManager.default.fileExists(atPath: cli.path("restored.rxv")))
    }

    @Test func aMissingFileIsNamed() throws {
        let (cli, id) = try setUp()
        _ = try cli.write("a file\n", to: "plain")
        for missing in [cli.path("missing"), cli.path("plain/under-a-file")] {
            for (arguments, data) in Self.readers(cli, id) {
                let r = try cli.run(Self.with(arguments, missing))
                Self.expectClear(r, "\(arguments)")
                #expect(r.status == (data ? 67 : 64), "\(arguments): \(r)")
                #expect(r.stderr.contains("cannot read") && r.stderr.contains(missing), "\(arguments): \(r)")
            }
        }
    }

    /// /dev/null is an empty file: each reader says what is wrong with an empty one.
    @Test func devNullIsAnEmptyFile() throws {
        let (cli, id) = try setUp()
        let expected: [String: (Int32, String)] = [
            "import": (65, "neither JSON nor an age file"), "attach": (65, "refused"),
            "restore": (65, "is neither an age file nor a vault"),
            "backup": (65, "is neither an age file nor a vault"), "list": (64, "is empty"),
            "--identity": (64, "is not an age identity file"),
            "export": (64, "is empty"), "passwd": (64, "is empty")
        ]
        for (arguments, _) in Self.readers(cli, id) {
            let r = try cli.run(Self.with(arguments, "/dev/null"))
            Self.expectClear(r, "\(arguments)")
            var (status, text) = try #require(expected[arguments[0]])
            if arguments.contains("--age-identity") { (status, text) = (64, "is not an age identity file") }
            #expect(r.status == status && r.stderr.contains(text), "\(arguments): \(r)")
        }
    }

    /// A FIFO (or `<(command)`) is read as a stream until its writer closes it, as cat reads it.
    @Test func aFIFOIsReadAsAStream() throws {
        let (cli, id) = try setUp()
        let exported = try cli.run(["export", id, "--format", "json", "--out", cli.path("rx.json")])
        #expect(exported.status == 0, "\(exported)")
        for (source, arguments) in [
            (cli.path("rx.json"), ["import", "FILE", "--dry-run"]),
            (cli.passphraseFile, ["list", "--passphrase-file", "FILE"])
        ] {
            let fifo = cli.path("fifo")
            unlink(fifo)
            #expect(mkfifo(fifo, 0o600) == 0)
            // The writer gives up after a minute, so a reader that never opens cannot hang the test.
            let writer = Process()
            writer.executableURL = URL(fileURLWithPath: "/usr/bin/timeout")
            writer.arguments = ["60", "/bin/sh", "-c", "cat \"$0\" > \"$1\"", source, fifo]
            try writer.run()
            let r = try cli.run(Self.with(arguments, fifo), timeout: 90)
            writer.waitUntilExit()
            #expect(r.status == 0, "\(arguments): \(r)")
            #expect(r.stdout.contains(id.prefix(8)), "\(arguments): \(r)")
        }
    }

    /// A file that exists but cannot be read is refused as such (64), not called missing.
    /// The suite runs as root in CI, and root reads a file whatever its mode: there, rxvault runs
    /// as nobody (util-linux setpriv) for this case; without setpriv it cannot be tested as root.
    @Test func anUnreadableFileIsSaidToBeUnreadable() throws {
        let cli = try CLIHarness()
        let locked = try cli.write("{}\n", to: "locked.json")
        try FileManager.default.setAttributes([.posixPermissions: 0], ofItemAtPath: locked)
        // import, restore and backup verify open their file before the vault, so nobody (who
        // cannot read the vault either) meets this refusal first.
        let commands = [
            ["import", locked], ["restore", locked, "--to", cli.path("r.rxv")], ["backup", "verify", locked]
        ]
        for arguments in commands {
            let r: CLIHarness.Result
            if getuid() == 0 {
                let setpriv = "/usr/bin/setpriv"
                guard FileManager.default.isExecutableFile(atPath: setpriv) else {
                    Issue.record("setpriv is needed to test unreadable files as root (apt-get install util-linux)")
                    return
                }
                r = try CLIHarness.spawn(
                    [setpriv, "--reuid", "65534", "--regid", "65534", "--clear-groups", CLIHarness.binary] + arguments,
                    environment: cli.environment, directory: URL(fileURLWithPath: "/"))
            } else {
                r = try cli.run(arguments)
            }
            Self.expectClear(r, "\(arguments)")
            #expect(r.status == 64, "\(arguments): \(r)")
            #expect(r.stderr.contains("cannot read \(locked): Permission denied"), "\(arguments): \(r)")
        }
    }
}
