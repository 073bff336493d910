/// The confirmation of a destructive command: `--yes`, or a yes to a question on the terminal
/// (the controlling one, so stdin may carry data).
///
/// Asked only once the command's targets are resolved, so an unknown id or name is reported
/// (not found, 67) before anything is asked or demanded. Without `--yes` and without a terminal
/// to ask on, or with `--no-input`, the command is a usage error (64); a question answered with
/// anything but yes is "cancelled" (2). Either way nothing is changed, and the exit status says
/// so to a script.
struct Confirmation {
    private let given: Bool
    private let noInput: Bool
    private let command: String
    private let verb: String

    init(yes: Bool, noInput: Bool, command: String, verb: String) {
        given = yes
        self.noInput = noInput
        self.command = command
        self.verb = verb
    }

    /// Returns when the owner confirmed (or passed `--yes`); throws otherwise. `question` may name
    /// what the owner is about to lose.
    func require(_ question: @autoclosure () throws -> String) throws {
        if given { return }
        guard !noInput, Terminal.canAsk else {
            throw CLIError(
                .usage,
                "\(command) needs confirmation and "
                    + (noInput ? "--no-input forbids asking" : "there is no terminal to ask on"),
                hint: "pass --yes to \(verb) without asking")
        }
        guard Terminal.confirm(try question()) else {
            throw CLIError(.cancelled, "cancelled: nothing changed")
        }
    }
}
