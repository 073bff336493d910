import Foundation
import Testing

/// Colour and width of `list`, `query` and `grants` through the binary, on a real pseudo-terminal
/// (python3's pty module, with the window size set before the binary starts) and through a pipe:
/// colour only on a terminal and never with NO_COLOR, names cut with "…" to fit the window,
/// `--wide` and pipes always whole.
@Suite struct TerminalOutputTests {
    static let red = "\u{1B}[31m", yellow = "\u{1B}[33m", reset = "\u{1B}[0m"
    static let longName = "Quintessa Marlowe-Fairweather of Upper Addleston"

    /// Runs rxvault with stdout on a new pseudo-terminal `columns` wide (stderr stays a pipe, or
    /// goes to the terminal too with `stderrToo`). What the terminal showed comes back as stdout,
    /// with the terminal's CRLF made LF.
    static func runOnTerminal(
        _ cli: CLIHarness, _ arguments: [String], columns: Int, stderrToo: Bool = false,
        environment extra: [String: String?] = [:]
    ) throws -> CLIHarness.Result {
        let script = """
            import fcntl, os, struct, sys, termios
            columns, both, argv = int(sys.argv[1]), sys.argv[2] == "both", sys.argv[3:]
            master, slave = os.openpty()
            fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, columns, 0, 0))
            pid = os.fork()
            if pid == 0:
                os.setsid()
                null = os.open("/dev/null", os.O_RDONLY)
                os.dup2(null, 0); os.dup2(slave, 1)
                if both: os.dup2(slave, 2)
                os.close(master); os.close(slave)
                os.execv(argv[0], argv)
            os.close(slave)
            out = b""
            while True:
                try:
                    chunk = os.read(master, 65536)
                except OSError:
                    break
                if not chunk:
                    break
                out += chunk
            _, status = os.waitpid(pid, 0)
            sys.stdout.buffer.write(out.replace(b"\\r\\n", b"\\n"))
            sys.exit(os.waitstatus_to_exitcode(status))
            """
        var env = cli.environment
        for (key, value) in extra { env[key] = value }
        return try CLIHarness.spawn(
            [
                "/usr/bin/env", "python3", "-c", script, String(columns), stderrToo ? "both" : "out",
                CLIHarness.binary(for: env)
            ]
                + arguments,
            environment: env, directory: cli.directory)
    }

    /// A vault with a valid, an expiring (16 days) and an expired prescription, one long name.
    func setUp() throws -> CLIHarness {
        let cli = try CLIHarness()
        try cli.initVault()
        _ = try cli.add(CLIHarness.glassesArguments)
        _ = try cli.add(CLIHarness.contactsArguments)
        _ = try cli.add([
            "add", "glasses", "--patient", Self.longName, "--prescriber", "Dr Lee",
            "--issued", "2024-01-01", "--expires", "2025-01-01", "--od", "-1.00", "--os", "-1.25"
        ])
        return cli
    }

    static func visibleWidth(_ line: Substring) -> Int {
        line.replacingOccurrences(of: red, with: "").replacingOccurrences(of: yellow, with: "")
            .replacingOccurrences(of: reset, with: "").count
    }

    @Test func expiredIsRedAndExpiringYellowOnATerminalOnly() throws {
        let cli = try setUp()
        for command in [["list"], ["query", "--patient", "Quintessa"]] {
            let r = try Self.runOnTerminal(cli, command + ["--wide"], columns: 250)
            #expect(r.status == 0, "\(r)")
            #expect(r.stdout.contains(Self.red + "2025-01-01" + Self.reset), "\(r)")
            #expect(r.stdout.contains(Self.red + "expired" + Self.reset), "\(r)")
            #expect(r.stdout.contains(Self.yellow + "2026-07-01" + Self.reset), "\(r)")
            #expect(r.stdout.contains(Self.yellow + "expiring in 16 days" + Self.reset), "\(r)")
            let valid = try #require(r.stdout.split(separator: "\n").first { $0.contains("2028-03-01") })
            #expect(!valid.contains("\u{1B}"), "a valid row is plain: \(valid)")

            let noColour = try Self.runOnTerminal(cli, command, columns: 250, environment: ["NO_COLOR": "1"])
            #expect(
                noColour.status == 0 && !noColour.stdout.contains("\u{1B}") && noColour.stdout.contains("expired"),
                "\(noColour)")
            let dumb = try Self.runOnTerminal(cli, command, columns: 250, environment: ["TERM": "dumb"])
            #expect(!dumb.stdout.contains("\u{1B}"), "\(dumb)")
            let piped = try cli.run(command)
            #expect(
                piped.status == 0 && !piped.stdout.contains("\u{1B}") && piped.stdout.contains("expired"), "\(piped)")
        }
    }

    /// At 80 columns the eyes go beneath each row, one line each, then the dates: names and
    /// values stay whole, every line fits, and `--wide` or a pipe keep one line per row.
    @Test func tablesFitEightyColumnsWithNamesWhole() throws {
        let cli = try setUp()
        let whole = try cli.run(["list"])
        #expect(whole.stdout.split(separator: "\n").count == 4)
        let fitted = try Self.runOnTerminal(cli, ["list"], columns: 80)
        #expect(fitted.status == 0, "\(fitted)")
        let lines = fitted.stdout.split(separator: "\n")
        for line in lines { #expect(Self.visibleWidth(line) <= 80, "wider than 80: \(line)") }
        #expect(fitted.stdout.contains(Self.longName) && !fitted.stdout.contains("…"), "\(fitted)")
        // Every lens notation whole, each eye on a line of its own under its row.
        #expect(fitted.stdout.contains("    OD  -2.25 -0.75 x180 add +2.00"), "\(fitted)")
        #expect(fitted.stdout.contains("    OS  -1.75 -0.50 x170 add +2.00 prism 1.5 BI"), "\(fitted)")
        #expect(fitted.stdout.contains("-3.25 bc 8.6 dia 14.2"), "\(fitted)")
        #expect(lines.count > 4, "\(fitted)")

        let wide = try Self.runOnTerminal(cli, ["list", "--wide"], columns: 80)
        #expect(wide.stdout.split(separator: "\n").count == 4, "\(wide)")
        // A pipe is never rearranged, whatever COLUMNS says.
        let piped = try cli.run(["list"], environment: ["COLUMNS": "40"])
        #expect(piped.stdout == whole.stdout, "\(piped)")
    }

    /// measurement list fits too: with three acuities and notes a row is over 100 columns; the
    /// notes, the acuities, then (for this long name) the axial lengths go beneath it, whole.
    @Test func measurementListFitsEightyColumns() throws {
        let cli = try setUp()
        _ = try cli.add([
            "measurement", "add", Self.longName, "--date", "2026-03-01", "--axial-length-od", "23.80",
            "--axial-length-os", "23.71", "--device", "IOLMaster 700", "--cycloplegic", "--va-od", "6/6",
            "--va-os-uncorrected", "20/40", "--va-ou", "logMAR -0.10"
        ])
        let piped = try cli.run(["measurement", "list"])
        let row = try #require(piped.stdout.split(separator: "\n").last)
        #expect(row.count > 100, "the case this is for: \(piped)")
        let fitted = try Self.runOnTerminal(cli, ["measurement", "list"], columns: 80)
        #expect(fitted.status == 0, "\(fitted)")
        for line in fitted.stdout.split(separator: "\n") { #expect(Self.visibleWidth(line) <= 80, "\(line)") }
        #expect(fitted.stdout.contains("    va OD cc 6/6, OU cc logMAR -0.10, OS sc 20/40"), "\(fitted)")
        #expect(fitted.stdout.contains("    notes IOLMaster 700, cycloplegic"), "\(fitted)")
        #expect(fitted.stdout.contains("    al od 23.80 mm  al os 23.71 mm"), "\(fitted)")
        #expect(fitted.stdout.contains(Self.longName), "\(fitted)")
        let wide = try Self.runOnTerminal(cli, ["measurement", "list", "--wide"], columns: 80)
        #expect(wide.stdout.split(separator: "\n").count == 2, "\(wide)")
    }

    /// client list fits too: the recipient (62 characters) goes beneath its row.
    @Test func clientListFitsEightyColumns() throws {
        let cli = try setUp()
        #expect(
            try cli.run(["client", "add", "lens shop", "--generate", "--identity-out", cli.path("shop.key")]).status
                == 0)
        let fitted = try Self.runOnTerminal(cli, ["client", "list"], columns: 80)
        for line in fitted.stdout.split(separator: "\n") { #expect(Self.visibleWidth(line) <= 80, "\(line)") }
        #expect(fitted.stdout.contains("    recipient age1"), "\(fitted)")
        #expect(try cli.run(["client", "list"]).stdout.split(separator: "\n").count == 2)
    }

    /// history and attachments fit too; the SHA-256 only with --long (or JSON).
    @Test func historyAndAttachmentsFitEightyColumns() throws {
        let cli = try setUp()
        let rx = try cli.add(CLIHarness.glassesArguments)
        #expect(
            try cli.run(["edit", rx, "--os", "-2.00 -0.50 x170 add +2.00 prism 1.5 BI", "--note", "changed"]).status
                == 0)
        #expect(try cli.run(["attach", rx, AttachmentTests.photo]).status == 0)
        for command in [["history", rx], ["attachments", rx]] {
            let fitted = try Self.runOnTerminal(cli, command, columns: 80)
            #expect(fitted.status == 0, "\(fitted)")
            for line in fitted.stdout.split(separator: "\n") {
                #expect(Self.visibleWidth(line) <= 80, "\(command): wider than 80: \(line)")
            }
        }
        let attachments = try cli.run(["attachments", rx])
        #expect(!attachments.stdout.contains("SHA-256"), "\(attachments)")
        let long = try cli.run(["attachments", rx, "--long"])
        #expect(long.stdout.contains("SHA-256"), "\(long)")
        let hash = try #require(
            (try cli.json(try cli.run(["attachments", rx, "--format", "json"]).stdout)["attachments"]
                as? [[String: Any]])?.first?["sha256"] as? String)
        #expect(long.stdout.contains(hash))
    }

    /// log: newest first, an export's many ids as the first and a count, --limit, and a pager on
    /// a terminal only when the table is taller than the window.
    @Test func theLogIsNewestFirstLimitedAndPaged() throws {
        let cli = try setUp()
        #expect(try cli.run(["export", "--format", "json", "--out", cli.path("all.json")]).status == 0)
        #expect(
            try cli.run(["client", "add", "shop", "--generate", "--identity-out", cli.path("shop.key")]).status == 0)
        let rx = try cli.add(CLIHarness.glassesArguments)
        for _ in 0..<12 {
            #expect(try cli.run(["grant", "shop", rx]).status == 0)
            #expect(try cli.run(["revoke", "shop", rx]).status == 0)
        }
        let log = try cli.run(["log"])
        let rows = log.stdout.split(separator: "\n").dropFirst()
        let sequences = rows.compactMap { Int($0.prefix { $0.isNumber }) }
        #expect(sequences == sequences.sorted(by: >) && sequences.count >= 26, "\(log)")
        #expect(log.stdout.contains(" +2 "), "an export of three prescriptions: \(log)")
        let everything = try cli.run(["log", "--long"])
        #expect(everything.stdout.split(separator: "\n").contains { $0.contains(",") && $0.contains("export") })
        let limited = try cli.run(["log", "--limit", "3"])
        #expect(limited.stdout.split(separator: "\n").count == 4, "\(limited)")
        #expect(limited.stdout.split(separator: "\n")[1].hasPrefix(String(sequences[0])), "\(limited)")

        let paged = try Self.runOnTerminal(cli, ["log"], columns: 200, environment: ["PAGER": "sed s/^/paged:/"])
        #expect(paged.status == 0 && paged.stdout.contains("paged:SEQ"), "\(paged)")
        let direct = try Self.runOnTerminal(
            cli, ["log", "--no-pager"], columns: 200, environment: ["PAGER": "sed s/^/paged:/"])
        #expect(direct.status == 0 && !direct.stdout.contains("paged:"), "\(direct)")
        let short = try Self.runOnTerminal(
            cli, ["log", "--limit", "5"], columns: 200, environment: ["PAGER": "sed s/^/paged:/"])
        #expect(!short.stdout.contains("paged:"), "it fits the window: \(short)")
    }

    @Test func grantsAreColouredAndFitToo() throws {
        let cli = try setUp()
        let rx = try cli.add(CLIHarness.glassesArguments)
        let long = "the-lens-shop-on-the-corner-of-high-street-and-mill-lane"
        #expect(try cli.run(["client", "add", long, "--generate", "--identity-out", cli.path("shop.key")]).status == 0)
        #expect(
            try cli.run(["client", "add", "clinic", "--generate", "--identity-out", cli.path("clinic.key")]).status == 0
        )
        #expect(try cli.run(["grant", long, rx, "--expires", "2026-07-01"]).status == 0)
        #expect(try cli.run(["grant", "clinic", rx, "--expires", "2026-06-20"]).status == 0)

        let soon = try Self.runOnTerminal(cli, ["grants", "--wide"], columns: 250)
        #expect(soon.stdout.contains(Self.yellow + "2026-07-01" + Self.reset), "\(soon)")
        #expect(soon.stdout.contains(Self.yellow + "active" + Self.reset), "\(soon)")
        // Later, the clinic's grant has ended (red); the shop's still runs out soon (yellow).
        let later = try Self.runOnTerminal(
            cli, ["grants", "--wide"], columns: 250, environment: ["RXVAULT_TODAY": "2026-06-25"])
        #expect(later.stdout.contains(Self.red + "expired" + Self.reset), "\(later)")
        #expect(later.stdout.contains(Self.yellow + "2026-07-01" + Self.reset), "\(later)")
        #expect(!(try cli.run(["grants"])).stdout.contains("\u{1B}"))

        let full =
            try cli.run(["grants"]).stdout.split(separator: "\n").map { (line: Substring) in line.count }.max() ?? 0
        #expect(full > 80)
        let fitted = try Self.runOnTerminal(cli, ["grants"], columns: 80, environment: ["NO_COLOR": "1"])
        for line in fitted.stdout.split(separator: "\n") { #expect(line.count <= 80, "\(line)") }
        // The name stays whole; the times go beneath the row.
        #expect(fitted.stdout.contains(long) && !fitted.stdout.contains("…"), "\(fitted)")
        #expect(fitted.stdout.contains("    granted "), "\(fitted)")
    }
}
