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
            ["/usr/bin/env", "python3", "-c", script, String(columns), stderrToo ? "both" : "out", CLIHarness.binary]
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

    @Test func tablesFitTheTerminalByCuttingTheNameColumn() throws {
        let cli = try setUp()
        let whole = try cli.run(["list"])
        let full = whole.stdout.split(separator: "\n").map { (line: Substring) in line.count }.max() ?? 0
        #expect(whole.stdout.contains(Self.longName))
        let columns = full - 20
        let fitted = try Self.runOnTerminal(cli, ["list"], columns: columns)
        #expect(fitted.status == 0, "\(fitted)")
        let lines = fitted.stdout.split(separator: "\n")
        #expect(lines.count == 4)
        for line in lines { #expect(Self.visibleWidth(line) <= columns, "wider than \(columns): \(line)") }
        #expect(fitted.stdout.contains("…") && !fitted.stdout.contains(Self.longName), "\(fitted)")
        #expect(fitted.stdout.contains(String(Self.longName.prefix(10))), "\(fitted)")
        // Values are never cut: every lens notation is whole.
        for value in ["-2.25 -0.75 x180 add +2.00", "-3.25 bc 8.6 dia 14.2", "2028-03-01"] {
            #expect(fitted.stdout.contains(value), "\(value) in \(fitted)")
        }

        let wide = try Self.runOnTerminal(cli, ["list", "--wide"], columns: columns)
        #expect(wide.stdout.contains(Self.longName) && !wide.stdout.contains("…"), "\(wide)")
        // A pipe is never cut, whatever COLUMNS says.
        let piped = try cli.run(["list"], environment: ["COLUMNS": "40"])
        #expect(piped.stdout.contains(Self.longName) && !piped.stdout.contains("…"), "\(piped)")
    }

    @Test func grantsAreColouredAndCutToo() throws {
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
        let fitted = try Self.runOnTerminal(cli, ["grants"], columns: full - 15, environment: ["NO_COLOR": "1"])
        for line in fitted.stdout.split(separator: "\n") { #expect(line.count <= full - 15, "\(line)") }
        #expect(
            fitted.stdout.contains("the-lens-shop") && fitted.stdout.contains("…") && !fitted.stdout.contains(long),
            "\(fitted)")
    }
}
