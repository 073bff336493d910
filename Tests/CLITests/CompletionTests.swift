import Foundation
import Testing

/// Dynamic shell completion through the binary, as the shell scripts call it
/// (`rxvault ---completion SUBCOMMAND -- ARGUMENT INDEX CURSOR WORDS...`): prescription ids,
/// client names and patient names from an unlocked vault's agent, and nothing (never a prompt)
/// when the vault is locked.
@Suite(.serialized) struct CompletionTests {
    /// Completes `words.last` as `argument` (positional@N or --option) of `subcommand`.
    static func complete(_ h: AgentHarness, _ subcommand: [String], _ argument: String, _ words: [String]) throws
        -> CLIHarness.Result
    {
        let prefix = words.last ?? ""
        return try h.cli.run(
            ["---completion"] + subcommand + ["--", argument, String(words.count - 1), String(prefix.count)] + words,
            environment: ["RXVAULT_PASSPHRASE_FILE": nil])
    }

    static func lines(_ r: CLIHarness.Result) -> [String] { r.stdout.split(separator: "\n").map(String.init) }

    @Test func offersIdsClientsAndPatientsWhileUnlockedAndNothingWhenLocked() throws {
        let h = try AgentHarness()
        let first = try h.cli.add(CLIHarness.glassesArguments)
        let second = try h.cli.add([
            "add", "glasses", "--patient", "Sam Doe", "--prescriber", "Dr Lee", "--issued", "2026-01-01",
            "--od", "-1.00", "--os", "-1.00"
        ])
        #expect(
            try h.cli.run(["client", "add", "lens-shop", "--generate", "--identity-out", h.cli.path("shop.key")]).status
                == 0)
        #expect(
            try h.cli.run(["client", "add", "clinic", "--generate", "--identity-out", h.cli.path("clinic.key")]).status
                == 0)

        // Locked: nothing is offered, nothing is asked, nothing is said.
        let locked = try Self.complete(h, ["show"], "positional@0", ["rxvault", "show", ""])
        #expect(locked.status == 0 && locked.stdout.isEmpty && locked.stderr.isEmpty, "\(locked)")

        try h.unlock()
        let ids = try Self.complete(h, ["show"], "positional@0", ["rxvault", "show", ""])
        #expect(ids.status == 0 && ids.stderr.isEmpty, "\(ids)")
        #expect(Set(Self.lines(ids)) == [first, second], "\(ids)")
        let prefixed = try Self.complete(h, ["show"], "positional@0", ["rxvault", "show", String(first.prefix(3))])
        #expect(
            Self.lines(prefixed).contains(first) && Self.lines(prefixed).allSatisfy { $0.hasPrefix(first.prefix(3)) },
            "\(prefixed)")

        let clients = try Self.complete(h, ["grant"], "positional@0", ["rxvault", "grant", ""])
        #expect(Self.lines(clients) == ["clinic", "lens-shop"], "\(clients)")
        let shop = try Self.complete(h, ["revoke"], "positional@0", ["rxvault", "revoke", "le"])
        #expect(Self.lines(shop) == ["lens-shop"], "\(shop)")
        let grantIDs = try Self.complete(h, ["grant"], "positional@1", ["rxvault", "grant", "clinic", ""])
        #expect(Set(Self.lines(grantIDs)) == [first, second], "\(grantIDs)")

        let patients = try Self.complete(h, ["query"], "--patient", ["rxvault", "query", "--patient", ""])
        #expect(Self.lines(patients) == ["Quintessa Marlowe", "Sam Doe"], "\(patients)")

        // --no-agent on the line being completed: the person asked for the passphrase path; offer nothing.
        let noAgent = try Self.complete(h, ["show"], "positional@0", ["rxvault", "--no-agent", "show", ""])
        #expect(noAgent.stdout.isEmpty, "\(noAgent)")

        // After lock, nothing again.
        #expect(try h.cli.run(["lock"]).status == 0)
        let relocked = try Self.complete(h, ["grant"], "positional@0", ["rxvault", "grant", ""])
        #expect(relocked.stdout.isEmpty && relocked.stderr.isEmpty, "\(relocked)")
    }

    @Test func theCompletionScriptsCallTheBinaryForDynamicValues() throws {
        let cli = try CLIHarness()
        for shell in ["bash", "zsh", "fish"] {
            let script = try cli.run(["--generate-completion-script", shell])
            #expect(script.status == 0, "\(script)")
            #expect(script.stdout.contains("---completion"), "\(shell)")
            #expect(script.stdout.contains("positional@0"), "\(shell)")
        }
    }
}
