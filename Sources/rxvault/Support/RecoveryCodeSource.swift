import ArgumentParser
import Foundation
import RxAgent
import RxCrypto
import RxVault

/// Where a recovery code comes from: a file (its whole text, up to a few lines) or a prompt
/// without echo. Never argv, as for passphrases. A mistyped group is named (exit 65). The prompt
/// names `label`: the vault, or the backup whose vault the code is for.
enum RecoveryCodeSource {
    static func read(file: String?, options: VaultOptions, label: String) throws -> RecoveryCode {
        let typed: SecretBytes
        if let file {
            let fd = try KeyFile.open(file, what: "recovery code")
            defer { close(fd) }
            guard let text = Terminal.readAll(fd: fd, limit: 1024), text.count > 0 else {
                throw CLIError(.usage, "the recovery code file \(file) is empty")
            }
            typed = text
        } else {
            if options.noInput {
                throw CLIError(
                    .usage, "a recovery code is needed and --no-input forbids asking for one",
                    hint: "give --recovery-key-file FILE")
            }
            guard Terminal.canAsk else {
                throw CLIError(
                    .usage, "a recovery code is needed and there is no terminal to ask on",
                    hint: "give --recovery-key-file FILE")
            }
            guard let line = Terminal.readSecretLine(prompt: "Recovery code for \(label): "), line.count > 0 else {
                throw CLIError(.usage, "no recovery code entered")
            }
            typed = line
        }
        do { return try RecoveryCode.parse(typed) } catch {
            throw CLIError(
                .invalidInput, error.description,
                hint:
                    "type the code as 'rxvault key add --recovery' printed it (dashes, spaces and case do not matter); nothing was changed"
            )
        }
    }
}
