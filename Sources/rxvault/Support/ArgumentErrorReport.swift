import ArgumentParser
import Foundation

/// Command-line errors found before a command runs (an unknown flag, a missing argument, a value
/// that does not parse, a `validate()` refusal) in rxvault's documented form: `rxvault: error:
/// ...` and `rxvault: hint: ...` on stderr, or one JSON object when `--format json` (or ndjson)
/// was asked for, and exit 64 (usage). swift-argument-parser's own `Error: ...` text is reworded
/// here, in one place, so no command can print the other form.
enum ArgumentErrorReport {
    /// Reports `error` if it is a command-line error and returns its exit status; nil for what is
    /// not an error to report here (help, version, an exit code a command already reported).
    static func report(_ error: any Error, arguments: [String]) -> Int32? {
        if error is ExitCode { return nil }
        let code = RxVaultCommand.exitCode(for: error)
        // --help and --version are clean exits: argument-parser prints them as it should.
        if code == .success { return nil }
        let (message, hint) = split(RxVaultCommand.fullMessage(for: error))
        CommandRunner.report(status: .usage, message: message, hint: hint, json: wantsJSON(arguments))
        return ExitStatus.usage.rawValue
    }

    /// argument-parser's full message is `Error: WHAT`, then optional `Help:`/`Usage:` lines and a
    /// "See '... --help'" line: the first becomes the error, the command's usage the hint.
    static func split(_ full: String) -> (message: String, hint: String?) {
        var message: [String] = []
        var usage: String?
        var seeHelp: String?
        for line in full.split(separator: "\n", omittingEmptySubsequences: true).map({ String($0) }) {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.hasPrefix("Error: ") {
                message.append(String(trimmed.dropFirst("Error: ".count)))
            } else if trimmed.hasPrefix("Usage: ") {
                usage = String(trimmed.dropFirst("Usage: ".count))
            } else if trimmed.hasPrefix("See '") {
                seeHelp = trimmed.dropFirst("See ".count).replacingOccurrences(of: " for more information.", with: "")
            } else if trimmed.hasPrefix("Help: ") || trimmed.isEmpty {
                continue
            } else if usage == nil {
                message.append(trimmed)
            }
        }
        let text = message.isEmpty ? "bad command line" : message.joined(separator: "\n")
        // Lower-case the first letter as every other rxvault error does ("missing expected argument").
        let lowered = text.prefix(1).lowercased() + text.dropFirst()
        // The usage line lists every option; the pointer to --help is the useful part of a hint.
        let hint = seeHelp.map { "see \($0)" } ?? usage.map { "usage: \($0)" }
        return (lowered, hint)
    }

    /// Whether the command line asks for JSON output, so the error should be JSON too.
    static func wantsJSON(_ arguments: [String]) -> Bool {
        for (index, argument) in arguments.enumerated() {
            if argument == "--format", index + 1 < arguments.count, ["json", "ndjson"].contains(arguments[index + 1]) {
                return true
            }
            if argument == "--format=json" || argument == "--format=ndjson" { return true }
            if argument == "--" { break }
        }
        return false
    }
}
