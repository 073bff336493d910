import Foundation
import Testing

/// The man pages scripts/setup installs: made by scripts/make-manual from the built binary, one
/// per command, each command's page naming its subcommands, and readable by man(1).
@Suite struct ManualTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

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

        let folder = cli.path("man/man1")
        let made = try CLIHarness.spawn(
            [
                "/usr/bin/env", "python3", Self.root.appendingPathComponent("scripts/make-manual").path,
                CLIHarness.binary, folder
            ], environment: cli.environment, directory: cli.directory)
        #expect(made.status == 0, "\(made)")
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
        #expect(top.contains(".SH EXIT STATUS") && top.contains(".B 65"))

        // man(1) renders them (where man-db is installed), as `man rxvault` would.
        if FileManager.default.isExecutableFile(atPath: "/usr/bin/man") {
            let shown = try CLIHarness.spawn(
                ["/usr/bin/man", "-P", "cat", "-l", folder + "/rxvault-list.1"],
                environment: cli.environment.merging(["MANWIDTH": "100"]) { $1 }, directory: cli.directory)
            #expect(shown.status == 0 && shown.stdout.contains("rxvault-list - List the prescriptions"), "\(shown)")
            #expect(shown.stdout.contains("--wide"), "\(shown)")
        }
    }
}
