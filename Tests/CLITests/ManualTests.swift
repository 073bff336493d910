import Foundation
import RxTestSupport
import Testing

/// The man pages scripts/setup installs: made by scripts/make-manual from the built binary, one
/// per command, each command's page naming its subcommands, and readable by man(1).
@Suite struct ManualTests {
    /// The pages scripts/make-manual makes from the built binary, in the harness's folder.
    static func makePages(_ cli: CLIHarness) throws -> String {
        let folder = cli.path("man/man1")
        let made = try CLIHarness.spawn(
            [
                "/usr/bin/env", "python3", Repository.path("scripts/make-manual"),
                CLIHarness.binary, folder
            ], environment: cli.environment, directory: cli.directory)
        #expect(made.status == 0, "\(made)")
        return folder
    }

    /// Every command people see, as the words that name it ("client add"), from the binary.
    static func commands(_ node: [String: Any], _ path: [String]) -> [[String]] {
        let subcommands = (node["subcommands"] as? [[String: Any]] ?? []).filter {
            ($0["shouldDisplay"] as? Bool ?? true) && $0["commandName"] as? String != "help"
        }
        return [path] + subcommands.flatMap { commands($0, path + [$0["commandName"] as! String]) }
    }

    @Test func everyCommandHasAPageAndEveryPageNamesItsSubcommands() throws {
        let cli = try CLIHarness()
        let dump = try CLIHarness.spawn(
            [CLIHarness.binary, "--experimental-dump-help"], environment: cli.environment, directory: cli.directory)
        let tool = try #require(try cli.json(dump.stdout)["command"] as? [String: Any])
        let all = Self.commands(tool, ["rxvault"])
        // Not vacuous: the tree has the commands the README documents.
        for expected in [
            ["rxvault", "attach"], ["rxvault", "list"], ["rxvault", "client", "add"], ["rxvault", "backup", "verify"]
        ] {
            #expect(all.contains(expected), "\(expected)")
        }
        #expect(!all.contains(["rxvault", "_parse-untrusted"]))

        let folder = try Self.makePages(cli)
        let pages = Set(try FileManager.default.contentsOfDirectory(atPath: folder))
        #expect(pages == Set(all.map { $0.joined(separator: "-") + ".1" }), "\(pages.sorted())")

        func page(_ path: [String]) throws -> String {
            try String(contentsOfFile: folder + "/" + path.joined(separator: "-") + ".1", encoding: .utf8)
        }
        for path in all {
            let text = try page(path)
            #expect(text.hasPrefix(".TH \(path.joined(separator: "\\-").uppercased()) 1 "), "\(path)")
            // Each page names its own subcommands and points to their pages.
            for child in all where child.count == path.count + 1 && Array(child.prefix(path.count)) == path {
                #expect(
                    text.contains(".B \(child.last!.replacingOccurrences(of: "-", with: "\\-"))\n"),
                    "\(path) lists \(child)")
                #expect(text.contains(".BR \(child.joined(separator: "\\-")) (1)"), "\(path) refers to \(child)")
            }
        }
        // The top page names every top-level command, and the attach page its new flag.
        let top = try page(["rxvault"])
        for path in all where path.count == 2 {
            #expect(top.contains(".B \(path[1].replacingOccurrences(of: "-", with: "\\-"))\n"), "\(path)")
        }
        #expect(try page(["rxvault", "attach"]).contains("\\-\\-full\\-size"))
        // The per-field flags --help leaves out are in the synopsis and the options of add and edit.
        for command in ["add", "edit"] {
            let text = try page(["rxvault", command])
            let synopsis = text.components(separatedBy: ".SH DESCRIPTION")[0]
            #expect(synopsis.contains("[\\-\\-od\\-sphere <"), "\(command)")
            #expect(text.contains(".B \\-\\-os\\-cyl <"), "\(command)")
        }
        #expect(top.contains(".SH EXIT STATUS") && top.contains(".B 65"))
    }

    /// man(1) renders them, as `man rxvault` would.
    @Test(
        .enabled(
            if: FileManager.default.isExecutableFile(atPath: "/usr/bin/man"),
            "man-db is not installed (apt-get install man-db)"))
    func manRendersThePages() throws {
        let cli = try CLIHarness()
        let folder = try Self.makePages(cli)
        let shown = try CLIHarness.spawn(
            ["/usr/bin/man", "-P", "cat", "-l", folder + "/rxvault-list.1"],
            environment: cli.environment.merging(["MANWIDTH": "100"]) { $1 }, directory: cli.directory)
        #expect(shown.status == 0 && shown.stdout.contains("rxvault-list - List the prescriptions"), "\(shown)")
        #expect(shown.stdout.contains("--wide"), "\(shown)")
    }
}
