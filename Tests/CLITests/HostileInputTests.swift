import Foundation
import RxStore
import Testing

/// Every command, with paths and values a user (or a script with a bug) can get wrong: rxvault
/// answers with a documented exit code and a message, never dies by a signal (a Swift trap is
/// SIGILL/SIGTRAP) and never reports an internal error.
@Suite struct HostileInputTests {
    static let documented: Set<Int32> = [0, 64, 65, 66, 67, 73, 74, 75, 76, 77]

    /// The positional arguments each command needs to get past parsing (ids that do not exist).
    static let positionals: [String: [String]] = [
        "add": ["glasses"], "edit": ["abcd"], "show": ["abcd"], "history": ["abcd"], "remove": ["abcd"],
        "attach": ["abcd", "scan.png"], "attachments": ["abcd"], "extract": ["abcd", "scan.png"],
        "detach": ["abcd", "scan.png"], "preview": ["abcd", "scan.png"], "client add": ["shop"],
        "client show": ["shop"], "client remove": ["shop"], "grant": ["shop", "abcd"], "revoke": ["shop", "abcd"],
        "import": ["in.json"], "backup": ["out.age"], "backup verify": ["in.age"], "restore": ["in.age"]
    ]

    static func arguments(_ path: [String]) -> [String] {
        let name = path.joined(separator: " ")
        var arguments = path + (positionals[name] ?? [])
        if name == "export" { arguments += ["--format", "json", "--out", "-"] }
        if name == "client add" { arguments += ["--generate", "--identity-out", "shop.key"] }
        if ["remove", "detach", "client remove"].contains(name) { arguments.append("--yes") }
        return arguments
    }

    static func expectDocumented(_ r: CLIHarness.Result, _ what: String) {
        #expect(!r.signalled, "\(what) crashed: \(r)")
        #expect(documented.contains(r.status), "\(what) exited \(r.status), not a documented code: \(r)")
        #expect(!r.stderr.contains("unexpected error") && !r.stderr.contains("Fatal error"), "\(what): \(r)")
    }

    /// Vault paths that are short, relative, odd or impossible, for every command.
    @Test func everyCommandWithHostileVaultPaths() throws {
        let cli = try CLIHarness()
        try FileManager.default.createDirectory(atPath: cli.path("dir"), withIntermediateDirectories: true)
        _ = try cli.write("not a vault\n", to: "file")
        try FileManager.default.createSymbolicLink(atPath: cli.path("loop"), withDestinationPath: cli.path("loop"))
        // One odd path per kind; every command meets each of them over the run, so the sweep
        // stays quick while no command escapes any kind.
        let paths = [
            "V", ".", "", "-", "dir/", "file/vault.rxv", "loop", "/dev/null",
            String(repeating: "x", count: 5000), "\u{1b}[31mred"
        ]
        for (index, path) in try CommandLineTests.commandPaths().enumerated() where path != ["init"] {
            for vault in [
                paths[index % paths.count], paths[(index + 3) % paths.count], paths[(index + 7) % paths.count], "V"
            ] {
                let r = try cli.run(Self.arguments(path) + ["--vault", vault])
                Self.expectDocumented(r, "rxvault \(path.joined(separator: " ")) --vault '\(vault.prefix(40))'")
            }
        }
    }

    /// `init` at each of those paths creates a vault where it can and refuses clearly where it
    /// cannot; the one-letter relative path used to die with SIGILL.
    @Test func initWithShortAndOddPaths() throws {
        let cli = try CLIHarness()
        _ = try cli.write("not a vault\n", to: "file")
        let created = try cli.run(["--vault", "V", "init", "--kdf", "interactive"])
        #expect(created.status == 0 && !created.signalled, "\(created)")
        #expect(FileManager.default.fileExists(atPath: cli.path("V")))
        #expect(try cli.run(["--vault", "V", "list"]).status == 0)
        for vault in ["V", ".", "/", "", "..", "file", "file/vault.rxv", "/proc/x/vault.rxv", "new/dir/v.rxv", "v.rxv/"]
        {
            let r = try cli.run(["--vault", vault, "init", "--kdf", "interactive"])
            Self.expectDocumented(r, "init --vault '\(vault)'")
        }
    }

    /// Numbers too large, negative, non-finite or empty, where commands take numbers and durations.
    @Test(arguments: [
        ["query", "--limit", "99999999999999999999"], ["query", "--limit", "-1"], ["query", "--limit", "0"],
        ["query", "--expiring-within", "99999999999999d"], ["query", "--expiring-within", "9223372036854775807w"],
        ["query", "--sphere-min", "1e309"], ["query", "--sphere-max", "nan"], ["query", "--cyl-min", ""],
        ["query", "--valid-on", "99999-01-01"], ["query", "--issued-after", "-2026-01-01"],
        ["show", "abcd", "--version", "-1"], ["show", "abcd", "--version", "99999999999999999999"],
        ["grant", "shop", "abcd", "--expires", "99999999999999999d"], ["grant", "shop", "abcd", "--expires", "-5d"],
        ["preview", "abcd", "x", "--width", "-1"], ["preview", "abcd", "x", "--width", "9223372036854775807"],
        ["init", "--max-attachment-size", "9223372036854775807"], ["init", "--max-attachment-size", "1e309"],
        ["init", "--max-attachment-size", "-1"], ["init", "--max-attachment-size", "1099511627777"],
        ["log", "--since", "0000-00-00"], ["log", "--limit", "-3"],
        [
            "add", "glasses", "--patient", "P", "--prescriber", "D", "--issued", "2026-01-01", "--od",
            "-99999999999999999999.00"
        ],
        [
            "add", "glasses", "--patient", "P", "--prescriber", "D", "--issued", "2026-01-01", "--od",
            "-1.00 -0.50 x99999999999999999999"
        ],
        [
            "add", "glasses", "--patient", "P", "--prescriber", "D", "--issued", "2026-01-01", "--od",
            "+1.00 prism 99999999999999999999 @ 99999999999999999999"
        ],
        [
            "add", "glasses", "--patient", "P", "--prescriber", "D", "--issued", "2026-01-01", "--od", "-1", "--pd",
            "1e309"
        ],
        [
            "add", "contacts", "--patient", "P", "--prescriber", "D", "--issued", "2026-01-01", "--expires",
            "2026-02-30", "--od", "-1 bc 9999999999999999 dia -0"
        ]
    ])
    func hostileValues(arguments: [String]) throws {
        let cli = try CLIHarness()
        if arguments.first != "init" { try cli.initVault() }
        let r = try cli.run(arguments)
        Self.expectDocumented(r, arguments.joined(separator: " "))
        #expect(
            r.status != 0 || arguments.first == "log" || arguments.first == "query", "\(arguments) was accepted: \(r)")
    }

    /// Environment values rxvault reads as numbers.
    @Test func hostileEnvironmentValues() throws {
        let cli = try CLIHarness()
        try cli.initVault()
        for (name, value) in [
            ("RXVAULT_BUSY_TIMEOUT", "99999999999999999999"), ("RXVAULT_BUSY_TIMEOUT", "-1"),
            ("RXVAULT_BUSY_TIMEOUT", "nan"), ("RXVAULT_PARSER_TIMEOUT", "9223372036854775807"),
            ("RXVAULT_PARSER_TIMEOUT", "-1"), ("RXVAULT_TODAY", "99999-12-31"), ("RXVAULT_TODAY", "0000-01-01")
        ] {
            let r = try cli.run(["list"], environment: [name: value])
            Self.expectDocumented(r, "\(name)=\(value) list")
        }
    }

    /// Header fields read before the passphrase is checked, set to extremes by someone with write
    /// access: `status`, `list` and `check` refuse with a documented code (76 or 66), never trap,
    /// allocate gigabytes or spin. `max_attachment_bytes = Int64.max` made `status` die with SIGILL.
    @Test(arguments: [
        ("max_attachment_bytes", "9223372036854775807"), ("max_attachment_bytes", "-1"),
        ("max_attachment_bytes", "1099511627777"),
        ("kdf_ops_limit", "4294967295"), ("kdf_ops_limit", "9223372036854775807"), ("kdf_ops_limit", "0"),
        ("kdf_mem_limit", "4398046511104"), ("kdf_mem_limit", "-9223372036854775808"), ("kdf_mem_limit", "1"),
        ("format_version", "9223372036854775807"), ("format_version", "-1"), ("format_version", "0"),
        ("kdf_algorithm", "'scrypt'"), ("kdf_salt", "x''"), ("wrapped_root_key", "zeroblob(100000)")
    ])
    func extremeHeaderValues(column: String, value: String) throws {
        let cli = try CLIHarness()
        try cli.initVault()
        let db = try Database(path: cli.vaultPath)
        // The attacker is not bound by the schema's CHECK constraints.
        try db.prepare("PRAGMA ignore_check_constraints = ON").run([])
        try db.prepare("UPDATE vault_header SET \(column) = \(value)").run([])
        for command in [["status"], ["status", "--passphrase-file", cli.passphraseFile], ["list"], ["check"]] {
            let r = try cli.run(command)
            Self.expectDocumented(r, "\(column) = \(value): \(command.joined(separator: " "))")
            #expect(
                r.status == 76 || r.status == 66 || (command == ["status"] && r.status == 0),
                "\(column) = \(value): \(command): \(r)")
        }
    }
}
