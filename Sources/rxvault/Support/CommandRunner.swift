import ArgumentParser
import Foundation
import RxAgent
import RxCrypto
import RxModel
import RxVault

/// Every command's body runs through here, so errors are reported the same way everywhere:
/// `rxvault: error: ...` (and `rxvault: hint: ...`) on stderr, or one JSON object when the
/// command was asked for JSON, then the documented exit code.
enum CommandRunner {
    static func run(json: Bool = false, _ body: () throws -> Void) throws {
        do { try body() } catch { throw reported(error, json: json) }
    }

    /// The same, for a command whose body is async (`serve`).
    static func run(json: Bool = false, _ body: () async throws -> Void) async throws {
        do { try await body() } catch { throw reported(error, json: json) }
    }

    /// argument-parser's own exits pass through; any other error is reported here and becomes
    /// its documented exit code.
    static func reported(_ error: any Error, json: Bool) -> any Error {
        if error is ExitCode || error is CleanExit { return error }
        let (status, message, hint) = describe(error)
        report(status: status, message: message, hint: hint, json: json)
        return ExitCode(status.rawValue)
    }

    static func describe(_ error: any Error) -> (ExitStatus, String, String?) {
        switch error {
        case let e as CLIError:
            return (e.status, e.message, e.hint)
        case let e as VaultError:
            if case .invalidPrescription(let invalid) = e {
                let lines = invalid.violations.map(\.description)
                let message =
                    lines.count == 1 ? "refused: \(lines[0])" : "refused:\n  " + lines.joined(separator: "\n  ")
                return (.invalidInput, message, "nothing was written")
            }
            return (e.exitStatus, e.description, Audience.isClient ? e.clientHint : e.hint)
        case let e as LensNotation.Unreadable:
            return (.invalidInput, e.description, nil)
        case let e as ImportError:
            // The first 20 problems are enough to fix a generator; thousands would bury the hint.
            let shown =
                e.problems.prefix(20)
                + (e.problems.count > 20 ? ["... and \(e.problems.count - 20) more problem(s)"] : [])
            let message =
                e.problems.count == 1
                ? "import refused: \(e.problems[0])"
                : "import refused (\(e.problems.count) problems):\n  " + shown.joined(separator: "\n  ")
            return (.invalidInput, message, "nothing was imported")
        case let e as AgeError:
            return (e == .noMatch ? .wrongPassphrase : .invalidInput, e.description, nil)
        case let e as CryptoError:
            return (.failure, e.description, nil)
        case let e as AgentError:
            return (e.exitStatus, e.description, nil)
        default:
            return (.failure, "unexpected error: \(String(describing: type(of: error)))", nil)
        }
    }

    static func report(status: ExitStatus, message rawMessage: String, hint: String?, json: Bool) {
        // Messages can quote values from files (an import, a vault written by someone else):
        // never let their control characters reach the terminal.
        let message = rawMessage.split(separator: "\n", omittingEmptySubsequences: false).map {
            Table.displayable(String($0))
        }
        .joined(separator: "\n")
        if json {
            var body: [String: Any] = ["code": status.name, "exit": Int(status.rawValue), "message": message]
            if let hint { body["hint"] = hint }
            if let data = try? JSONSerialization.data(
                withJSONObject: ["error": body], options: [.sortedKeys, .withoutEscapingSlashes])
            {
                StandardStream.write(Array(data) + [UInt8(ascii: "\n")], to: STDERR_FILENO)
                return
            }
        }
        // A "no" to a question is the person's answer, not an error (exit 2, "cancelled").
        Terminal.err(status == .cancelled ? "rxvault: \(message)" : "rxvault: error: \(message)")
        if let hint { Terminal.err("rxvault: hint: \(hint)") }
    }
}
