/// The confirmation of a destructive command: `--yes`, or a yes to a question on a terminal.
/// Created before the vault is opened, so a script that forgot `--yes` gets a usage error (64)
/// without typing a passphrase or touching anything.
struct Confirmation {
    private let given: Bool

    init(yes: Bool, command: String, verb: String) throws {
        if !yes && !Terminal.stdinIsTTY {
            throw CLIError(.usage, "\(command) needs confirmation", hint: "pass --yes to \(verb) without asking")
        }
        given = yes
    }

    /// Whether to go on: true with `--yes`; otherwise asks `question` (which may name what the
    /// owner is about to lose) and, on a no, says `declined` on stderr.
    func ask(_ question: @autoclosure () throws -> String, declined: String) rethrows -> Bool {
        if given { return true }
        if Terminal.confirm(try question()) { return true }
        Terminal.err("rxvault: \(declined)")
        return false
    }
}
