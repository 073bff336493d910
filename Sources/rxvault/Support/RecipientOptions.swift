import ArgumentParser
import Foundation
import RxCrypto

#if canImport(Glibc)
    import Glibc
#endif

/// `--recipient` and `--recipients-file`, as age's `-r` and `-R` take them: `age1...` keys and
/// `ssh-ed25519` public keys, and files of them (one per line, `#` comments and blank lines
/// skipped). Encrypting to a recipient needs no secret, which is what lets a scheduled backup
/// run with no passphrase on the machine.
struct RecipientOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "Encrypt to this age recipient: age1... or an ssh-ed25519 public key line (repeatable).",
            valueName: "recipient")) var recipient: [String] = []
    @Option(
        help: ArgumentHelp(
            "Encrypt to every recipient in this file, one per line, # comments allowed (as age -R; repeatable).",
            valueName: "file"), completion: .file()) var recipientsFile: [String] = []

    var isEmpty: Bool { recipient.isEmpty && recipientsFile.isEmpty }

    /// Largest recipients file read: far more keys than anyone lists.
    static let maxFileBytes = 1 << 20

    /// Every recipient given, in order; a malformed one is a usage error that names where it is
    /// (a line of a file is named by number, never quoted: it could be a secret pasted there).
    func parse() throws -> [AgeFile.Recipient] {
        var all: [AgeFile.Recipient] = []
        for text in recipient {
            do { all.append(try AgeRecipientText.parse(text)) } catch {
                let shown = text.count > 80 ? String(text.prefix(60)) + "..." : text
                throw CLIError(
                    .invalidInput, "--recipient '\(shown)' is \(error.description)",
                    hint:
                        "age recipients look like age1... (age-keygen -y KEY); SSH keys like ssh-ed25519 AAAA... (the .pub file)"
                )
            }
        }
        for path in recipientsFile {
            let text = try Self.read(path)
            do {
                let found = try AgeRecipientText.parseFile(text)
                guard !found.isEmpty else {
                    throw CLIError(.usage, "\(path) lists no recipients (only comments or blank lines)")
                }
                all += found
            } catch let refusal as AgeRecipientText.LineRefusal {
                throw CLIError(.invalidInput, "\(path), line \(refusal.line): \(refusal.refusal.description)")
            }
        }
        return all
    }

    static func read(_ path: String) throws -> String {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            // A missing file is "not found" (67), as for every other file a command reads.
            let error = errno
            throw CLIError(
                error == ENOENT || error == ENOTDIR ? .notFound : .usage,
                "cannot read the recipients file \(path): \(String(cString: strerror(error)))")
        }
        defer { try? handle.close() }
        let data = (try? handle.read(upToCount: maxFileBytes + 1)) ?? nil
        guard let data else { throw CLIError(.usage, "cannot read the recipients file \(path)") }
        guard data.count <= maxFileBytes else {
            throw CLIError(.usage, "\(path) is not a recipients file (over \(maxFileBytes >> 20) MiB)")
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw CLIError(.usage, "\(path) is not a recipients file (not UTF-8 text)")
        }
        return text
    }
}
