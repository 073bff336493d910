import ArgumentParser
import Foundation
import RxModel
import RxValidate
import RxVault

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension RxVaultCommand {
    struct Extract: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "extract",
            abstract: "Write an attachment back out, byte for byte as stored.",
            discussion: flowing(
                """
                The content is verified (every chunk, the final tag, size and SHA-256) before the file
                appears: it is written to a temporary file beside the target and renamed into place only
                then. Never overwrites a file without --force.

                Examples:
                  rxvault extract 3f9a scan.pdf                 # writes ./scan.pdf
                  rxvault extract 3f9a 7c01 --out ~/rx.png
                  rxvault extract 3f9a scan.pdf --out - | sha256sum
                """))

        @Argument(help: "The prescription's id (any unique prefix).", completion: .custom(Completion.prescriptionIDs))
        var prescription: String
        @Argument(help: "The attachment's name or id (any unique prefix).") var attachment: String
        @Option(
            help: ArgumentHelp(
                "Where to write it, or - for standard output (default: its name, in the current directory).",
                valueName: "path"))
        var out: String?
        @Flag(help: "Replace the output file if it exists.") var force = false
        @OptionGroup var options: VaultOptions

        func run() throws {
            try CommandRunner.run {
                if out == "-" && isatty(STDOUT_FILENO) == 1 {
                    throw CLIError(
                        .usage, "refusing to write a binary file to the terminal",
                        hint: "redirect the output, or give --out FILE")
                }
                // Before any passphrase or work: a path that can never be written costs nothing.
                if let out, out != "-" { _ = try WriteTarget.file(for: out, replace: force) }
                let vault = try options.openReader()
                let prescriptionID = try vault.resolve(prescription)
                let attachmentID = try vault.resolveAttachment(attachment, of: prescriptionID)
                defer { warnIfNotLogged(vault) }
                if out == "-" {
                    // Verify the whole stream first, then write it: stdout cannot be taken back.
                    _ = try vault.readAttachment(attachmentID, of: prescriptionID) { _ in }
                    _ = try vault.readAttachment(attachmentID, of: prescriptionID) {
                        Terminal.out(bytes: $0)
                    }
                    return
                }
                let name = try vault.attachments(of: prescriptionID).first { $0.id == attachmentID }!.metadata.name
                let target = try out ?? Self.fileName(for: name)
                try SafeFileWriter.write(to: target, replace: force) { writer in
                    _ = try vault.readAttachment(attachmentID, of: prescriptionID) { try writer.write($0) }
                }
                Terminal.out("wrote \(target)")
            }
        }

        /// The stored name, used as the file name in the current directory when it passes the
        /// attachment-name rule (`attach` refuses any other). A name stored before that rule
        /// (a path separator, a leading dot or dash, invisible or control characters) is
        /// refused rather than rewritten or printed: the person chooses the file with --out.
        static func fileName(for name: String) throws -> String {
            if let problem = TextField.attachmentNameProblem(name) {
                throw CLIError(
                    .usage, "the attachment's stored name cannot be used as a file name (\(problem))",
                    hint: "give the file to write with --out FILE")
            }
            return name
        }
    }
}
