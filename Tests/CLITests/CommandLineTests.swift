import Foundation
import RxTestSupport
import Testing

/// The command line itself, across every command: errors in the documented form, `--help` that
/// offers only what a command accepts, and help text that reads as paragraphs.
@Suite struct CommandLineTests {
    /// Every command path (`["client", "add"]`...), read from the binary's own help, so a new
    /// command is covered without editing this test.
    static func commandPaths() throws -> [[String]] {
        try helpTexts.get().keys.filter { !$0.isEmpty }.sorted { $0.joined(separator: " ") < $1.joined(separator: " ") }
    }

    /// `rxvault PATH --help` as the binary prints it.
    static func help(_ path: [String]) throws -> String {
        try #require(try helpTexts.get()[path], "no command \(path)")
    }

    /// Every command's `--help` (the top level's under `[]`), read once per run of the suite
    /// (the help sweeps here and HostileInputTests walk every command).
    static let helpTexts = Result<[[String]: String], any Error> {
        let cli = try CLIHarness()
        var found: [[String]: String] = [:]
        var pending: [[String]] = [[]]
        while let path = pending.popLast() {
            let help = try cli.run(path + ["--help"]).stdout
            // "SUBCOMMANDS:" (or a group's "PRESCRIPTIONS SUBCOMMANDS:"), then "  name   abstract"
            // lines (wrapped abstracts are indented further), then a blank line.
            let lines = help.split(separator: "\n", omittingEmptySubsequences: false)
            var children: [[String]] = []
            for start in lines.indices where lines[start].hasSuffix("SUBCOMMANDS:") {
                for line in lines[(start + 1)...] {
                    if line.isEmpty { break }
                    guard line.hasPrefix("  "), line.dropFirst(2).first?.isLetter == true else { continue }
                    let name = String(line.dropFirst(2).prefix { $0.isLetter || $0 == "-" })
                    children.append(path + [name])
                }
            }
            found[path] = help
            pending += children
        }
        return found
    }

    /// The top-level help groups the commands, as git does its own.
    @Test func theTopLevelHelpGroupsTheCommands() throws {
        let help = try #require(try Self.helpTexts.get()[[]])
        for group in [
            "SET UP AND KEYS SUBCOMMANDS:", "PRESCRIPTIONS SUBCOMMANDS:", "PATIENTS SUBCOMMANDS:",
            "ATTACHMENTS SUBCOMMANDS:", "SHARING WITH CLIENT APPS SUBCOMMANDS:", "FILES AND BACKUPS SUBCOMMANDS:"
        ] {
            #expect(help.contains(group), "\(group)")
        }
        #expect(!help.contains("\nSUBCOMMANDS:"), "every visible command is in a group")
        let export = try #require(try Self.helpTexts.get()[["export"]]).split(whereSeparator: \.isWhitespace)
        #expect(export.joined(separator: " ").contains("CSV or a printable PDF"))
    }

    @Test func everyCommandIsFound() throws {
        let paths = try Self.commandPaths().map { $0.joined(separator: " ") }
        for expected in [
            "init", "list", "show", "client add", "client list", "backup verify", "restore", "grant", "log"
        ] {
            #expect(paths.contains(expected), "\(expected) missing from \(paths)")
        }
    }

    /// Every command names itself: without `commandName:`, swift-argument-parser derives the name
    /// with `String(describing:)` at each start, a scan of every protocol conformance in the
    /// binary per command, which once cost a fifth of the suite's time.
    @Test func everyCommandIsNamedInItsConfiguration() throws {
        let sources = Repository.root.appendingPathComponent("Sources/rxvault")
        let files =
            FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil)?
            .compactMap { $0 as? URL }.filter { $0.pathExtension == "swift" } ?? []
        var configurations = 0
        for file in files {
            let text = try String(contentsOf: file, encoding: .utf8)
            for part in text.components(separatedBy: "CommandConfiguration(").dropFirst() {
                configurations += 1
                // The call's first argument, where `commandName:` goes.
                let head = String(part.drop { $0 == " " || $0 == "\n" }.prefix(12))
                #expect(head == "commandName:", "\(file.lastPathComponent): a CommandConfiguration without commandName")
            }
        }
        #expect(configurations >= 50, "found \(configurations) command configurations under \(sources.path)")
    }

    /// Unknown flags, missing arguments, bad values and `validate()` refusals all print
    /// `rxvault: error: ...` (never argument-parser's `Error: ...`), a hint, and exit 64; with
    /// `--format json` the error is one JSON object.
    @Test(arguments: [
        ["show"], ["list", "--bogus"], ["list", "--format", "xml"], ["grant"], ["client", "add", "shop"],
        ["log", "--format", "csv"], ["export", "--out", "-"], ["preview", "abcd", "x.png", "--width", "3"],
        ["query", "--limit", "many"], ["init", "--kdf", "instant"]
    ])
    func argumentErrorsTakeTheDocumentedForm(arguments: [String]) throws {
        let cli = try CLIHarness()
        let r = try cli.run(arguments)
        #expect(r.status == 64, "\(r)")
        #expect(r.stderr.hasPrefix("rxvault: error: "), "\(r)")
        #expect(!r.stderr.contains("Error: "), "\(r)")
        #expect(r.stderr.contains("rxvault: hint: see 'rxvault "), "\(r)")
        #expect(r.stdout.isEmpty)
    }

    @Test(arguments: [
        ["show", "--format", "json"], ["list", "--format", "json", "--bogus"],
        ["grants", "--format=json", "--limit", "3"], ["query", "--format", "ndjson", "--sort", "colour"]
    ])
    func argumentErrorsAreJSONWhenJSONWasAskedFor(arguments: [String]) throws {
        let cli = try CLIHarness()
        let r = try cli.run(arguments)
        #expect(r.status == 64, "\(r)")
        let object = try cli.json(r.stderr)
        let error = try #require(object["error"] as? [String: Any], "\(r)")
        #expect(error["code"] as? String == "usage")
        #expect(error["exit"] as? Int == 64)
        #expect((error["message"] as? String)?.isEmpty == false)
    }

    /// Each `--format` value that `--help` lists is accepted by the command (the vault does not
    /// exist, so the command gets past parsing and stops at 66/67, never 64 for the format).
    @Test func helpOffersOnlyTheFormatsEachCommandAccepts() throws {
        let cli = try CLIHarness()
        // The positional arguments each command needs to get past parsing.
        let positionals: [String: [String]] = [
            "show": ["abcd"], "patient show": ["abcd"], "history": ["abcd"], "attachments": ["abcd"], "export": [],
            "backup verify": ["none.age"], "backup list": ["no-such-folder"], "copy": ["absent.rxv", "copy.rxv"],
            "merge": ["absent.rxv"], "sync": ["absent-remote"]
        ]
        var checked = 0
        for path in try Self.commandPaths() {
            let help = try Self.help(path).replacingOccurrences(of: "\n", with: " ")
                .replacingOccurrences(of: #"\s+"#, with: " ", options: .regularExpression)
            guard let option = help.range(of: " --format <format> "),
                let values = help.range(of: "(values: ", range: option.upperBound..<help.endIndex),
                // The values belong to --format only if no other option starts in between.
                !help[option.upperBound..<values.lowerBound].contains(" --")
            else { continue }
            let listed = help[values.upperBound...].prefix { $0 != ";" && $0 != ")" }.split(separator: ",")
                .map { $0.trimmingCharacters(in: .whitespaces) }
            let name = path.joined(separator: " ")
            for value in listed {
                var arguments =
                    path + (positionals[name] ?? []) + ["--format", value, "--vault", cli.path("absent.rxv")]
                if name == "export" { arguments += ["--out", "-"] }
                let r = try cli.run(arguments)
                #expect(r.status != 64, "\(name) --help offers --format \(value) but refuses it: \(r)")
                checked += 1
            }
        }
        #expect(checked >= 20, "found only \(checked) format values in the help texts")
    }

    /// Help text is written as paragraphs and left to argument-parser to wrap: a line that ends
    /// although the next line's first word would have fitted is a hard wrap wrapped again.
    @Test func helpTextFlows() throws {
        let width = 80 // argument-parser wraps to 79 columns of 80 when stdout is not a terminal
        for path in [[]] + (try Self.commandPaths()) {
            let help = try Self.help(path)
            let lines = help.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            // The overview and discussion: unindented lines before USAGE (options and subcommands
            // are single strings that argument-parser wraps itself).
            let prose = lines.prefix { !$0.hasPrefix("USAGE:") }
            for line in lines {
                #expect(
                    line.count <= width || line.hasPrefix("USAGE:"),
                    "rxvault \(path.joined(separator: " ")) --help: line over \(width) columns: \(line)")
            }
            for (line, next) in zip(prose, prose.dropFirst()) {
                // An example (indented) too long for the width comes back as an unindented fragment.
                if line.hasPrefix("  "), let first = next.first, first != " " {
                    #expect(
                        first.isUppercase,
                        "rxvault \(path.joined(separator: " ")) --help: an example is too wide and was wrapped:\n\(line)\n\(next)"
                    )
                }
                guard !line.isEmpty, !next.isEmpty, !line.hasPrefix(" "), !next.hasPrefix(" "), !line.hasSuffix(":"),
                    !next.hasPrefix("- ")
                else { continue }
                let firstWord =
                    next.trimmingCharacters(in: .whitespaces).split(separator: " ").first.map(String.init) ?? ""
                #expect(
                    line.count + 1 + firstWord.count >= width,
                    "rxvault \(path.joined(separator: " ")) --help breaks a line early:\n\(line)\n\(next)")
            }
        }
    }
}
