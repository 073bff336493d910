/// The confirmation of a destructive command: `--yes`, or a yes to a question on the terminal
/// (the controlling one, so stdin may carry data). Created before the vault is opened, so a
/// script that forgot `--yes` gets a usage error (64) without typing a passphrase or touching
/// anything. `--no-input` never asks, a confirmation included.
struct Confirmation {
    private let given: Bool

    init(yes: Bool, noInput: Bool, command: String, verb: String) throws {
        if !yes && (noInput || !Terminal.canAsk) {
            throw CLIError(.usage, "\(command) needs confirmation and " + (noInput ? "--no-input forbids asking" : "there is no terminal to ask on"),
                           hint: "pass --yes to \(verb) without asking")
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
