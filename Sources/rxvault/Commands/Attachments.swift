import ArgumentParser
import Foundation
import RxModel
import RxValidate
import RxVault

extension RxVaultCommand {
    struct Attach: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Attach a photo or scan (PNG or PDF; a JPEG or HEIC photo is converted to PNG).",
            discussion: flowing("""
            Only PNG images and PDF documents are stored, judged by a full parse of the content
            (in a separate, resource-limited process), never by the file name. A phone photo
            (JPEG or HEIC) is converted to a PNG in that process first: turned upright as the
            camera recorded, scaled to at most 2048 pixels on its longest side (--full-size keeps
            every pixel), and with nothing of the original but its pixels (no EXIF, no GPS
            position, no camera or time); the PNG is then checked like any other. Refused:
            anything else, damaged files, password-protected PDFs, PDFs with JavaScript or launch
            actions, images over 16384 pixels a side or 50 megapixels, files over the vault's
            size limit. The name (extract's default file name) may not contain '/', '\\', control
            or invisible characters, nor start with '.' or '-'; a converted photo's default name
            ends in .png. Prints the new attachment's id. The same content twice on one
            prescription is refused (exit 73, naming the attachment that has it) unless
            --allow-duplicate.

            Examples:
              rxvault attach 3f9a scan.pdf
              rxvault attach 3f9a IMG_2041.HEIC          # stored as IMG_2041.png
              rxvault attach 3f9a - --name box-label.png < photo.png
            """))

        @Argument(help: "The prescription's id (any unique prefix).", completion: .custom(Completion.prescriptionIDs))
        var prescription: String
        @Argument(help: "The file to attach, or - for standard input.", completion: .file(extensions: ["png", "pdf", "jpg", "jpeg", "heic", "heif"]))
        var file: String
        @Option(help: "The attachment's name (default: the file's name; .png for a converted photo).") var name: String?
        @Flag(help: "Store the file even if the prescription already has the same content.") var allowDuplicate = false
        @Flag(help: "Keep every pixel of a converted JPEG or HEIC photo (default: at most 2048 pixels on the longest side).")
        var fullSize = false
        @OptionGroup var options: VaultOptions

        func run() throws {
            try CommandRunner.run {
                try options.requireOwner("attach")
                let limit = try VaultHeader.read(at: options.vaultPath).maxAttachmentBytes
                let input = try InputFile(path: file)
                defer { input.close() }
                // Checked before the file is read, and before a passphrase is asked for.
                if let size = input.size, size > limit {
                    throw CLIError(.invalidInput, "refused: file is \(ByteCount(size)): over the \(ByteCount(limit)) limit of this vault",
                                   hint: "the owner can raise it: rxvault config set max-attachment-size SIZE")
                }
                if input.isStandardInput && Terminal.stdinIsTTY {
                    throw CLIError(.usage, "standard input is a terminal", hint: "pipe the file in, or give its path")
                }
                var source = try AttachSource(input: input, limit: limit)
                // A photo is converted before the passphrase is asked for: a refused one costs nothing.
                if let format = source.photoFormat {
                    let parser = try ParserFactory.make(limits: ValidationLimits(maxBytes: limit))
                    let conversion: PhotoConversion
                    do { conversion = try source.convert(parser: parser, fullSize: fullSize) } catch let refusal as AttachmentRefusal {
                        throw VaultError.attachmentRefused(AttachmentRefusal(refusal.reason, "\(format.rawValue) photo: \(refusal.message)"))
                    }
                    Terminal.err("rxvault: " + PhotoText.converted(conversion))
                }
                // The vault checks the name too; checking it here costs the person no passphrase.
                let storedName = name ?? (input.isStandardInput ? nil : source.defaultName(for: PathText.name(of: file)))
                if let storedName, let problem = TextField.attachmentNameProblem(storedName) {
                    throw CLIError(.invalidInput, "attachment name: \(problem)", hint: "choose the name to store with --name NAME")
                }
                let vault = try options.openVault(command: "attach")
                let prescriptionID = try vault.resolve(prescription)
                let parser = try ParserFactory.make(limits: vault.attachmentLimits)
                let info = try vault.attach(to: prescriptionID, name: storedName, allowDuplicate: allowDuplicate,
                                            parser: parser) { try source.read(into: &$0) }
                Terminal.out(info.id.short)
            }
        }
    }

    struct Attachments: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List a prescription's attachments.",
            discussion: "SHA-256 is of the original file, as sha256sum prints it.")

        @Argument(help: "The prescription's id (any unique prefix).", completion: .custom(Completion.prescriptionIDs)) var prescription: String
        @Option(help: "Output format.") var format: DocumentFormat = .table
        @OptionGroup var options: VaultOptions


        func run() throws {
            try CommandRunner.run(json: format == .json) {
                let vault = try options.openReader()
                let prescriptionID = try vault.resolve(prescription)
                let attachments = try vault.attachments(of: prescriptionID)
                warnIfNotLogged(vault)
                switch format {
                case .json:
                    Terminal.out(String(decoding: try AttachmentJSON.encoder().encode(
                        AttachmentListJSON(prescription: prescriptionID.hex, attachments: attachments.map(AttachmentJSON.init))), as: UTF8.self))
                default:
                    guard !attachments.isEmpty else {
                        // A client may not be granted the attachments: it learns nothing of them,
                        // and is never told to run an owner command.
                        Terminal.err(options.identity == nil
                            ? "rxvault: prescription \(prescriptionID.short) has no attachments; add one with 'rxvault attach'"
                            : "rxvault: no attachments of prescription \(prescriptionID.short) are shared with this identity")
                        return
                    }
                    let short = RecordID.shortForms(attachments.map(\.id))
                    Terminal.out(Table.render(
                        headers: ["ID", "NAME", "TYPE", "SIZE", "DETAILS", "SHA-256", "ADDED"],
                        rows: attachments.map { a in
                            let m = a.metadata
                            return [short[a.id]!, m.name, m.type.rawValue, ByteCount(m.size).description, m.dimensions, m.sha256, m.added]
                        }))
                }
            }
        }
    }

    struct Extract: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Write an attachment back out, byte for byte.",
            discussion: flowing("""
            The content is verified (every chunk, the final tag, size and SHA-256) before the file
            appears: it is written to a temporary file beside the target and renamed into place only
            then. Never overwrites a file without --force.

            Examples:
              rxvault extract 3f9a scan.pdf                 # writes ./scan.pdf
              rxvault extract 3f9a 7c01 --out ~/rx.png
              rxvault extract 3f9a scan.pdf --out - | sha256sum
            """))

        @Argument(help: "The prescription's id (any unique prefix).", completion: .custom(Completion.prescriptionIDs)) var prescription: String
        @Argument(help: "The attachment's name or id (any unique prefix).") var attachment: String
        @Option(help: ArgumentHelp("Where to write it, or - for standard output (default: its name, in the current directory).", valueName: "path"))
        var out: String?
        @Flag(help: "Replace the output file if it exists.") var force = false
        @OptionGroup var options: VaultOptions

        func run() throws {
            try CommandRunner.run {
                if out == "-" && isatty(STDOUT_FILENO) == 1 {
                    throw CLIError(.usage, "refusing to write a binary file to the terminal", hint: "redirect the output, or give --out FILE")
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
                    _ = try vault.readAttachment(attachmentID, of: prescriptionID) { FileHandle.standardOutput.write(Data($0)) }
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
                throw CLIError(.usage, "the attachment's stored name cannot be used as a file name (\(problem))",
                               hint: "give the file to write with --out FILE")
            }
            return name
        }
    }

    struct Detach: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Delete an attachment from a prescription.",
            discussion: "Asks for confirmation on a terminal; scripts pass --yes. The content is overwritten in the file and its WAL.")

        @Argument(help: "The prescription's id (any unique prefix).", completion: .custom(Completion.prescriptionIDs)) var prescription: String
        @Argument(help: "The attachment's name or id (any unique prefix).") var attachment: String
        @Flag(name: [.customShort("y"), .long], help: "Do not ask for confirmation.") var yes = false
        @OptionGroup var options: VaultOptions

        func run() throws {
            try CommandRunner.run {
                let confirmation = Confirmation(yes: yes, noInput: options.noInput, command: "detach", verb: "delete")
                let vault = try options.openVault(command: "detach")
                let prescriptionID = try vault.resolve(prescription)
                let attachmentID = try vault.resolveAttachment(attachment, of: prescriptionID)
                try confirmation.require({
                    let name = try vault.attachments(of: prescriptionID).first { $0.id == attachmentID }?.metadata.name ?? attachmentID.short
                    return "Delete the attachment \(name) of prescription \(prescriptionID.short)?"
                }())
                try vault.detach(attachmentID, of: prescriptionID)
                warnIfNotPurged(vault)
                Terminal.out("detached \(attachmentID.short)")
            }
        }
    }

    struct Preview: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Write a downscaled PNG of an attachment (a PDF's first page), to look at.",
            discussion: "Example:\n  rxvault preview 3f9a scan.pdf --out scan-preview.png --width 600")

        @Argument(help: "The prescription's id (any unique prefix).", completion: .custom(Completion.prescriptionIDs)) var prescription: String
        @Argument(help: "The attachment's name or id (any unique prefix).") var attachment: String
        @Option(help: ArgumentHelp("The PNG file to write.", valueName: "file.png")) var out: String
        @Option(help: "Width of the preview in pixels (16 to 4096; images are never enlarged).") var width: UInt32 = PreviewRenderer.defaultWidth
        @Flag(help: "Replace the output file if it exists.") var force = false
        @OptionGroup var options: VaultOptions

        func validate() throws {
            guard PreviewRenderer.widthRange.contains(width) else { throw ValidationError("--width must be between 16 and 4096") }
        }

        func run() throws {
            try CommandRunner.run {
                _ = try WriteTarget.file(for: out, replace: force)
                let vault = try options.openReader()
                let prescriptionID = try vault.resolve(prescription)
                let attachmentID = try vault.resolveAttachment(attachment, of: prescriptionID)
                let png = try vault.previewAttachment(attachmentID, of: prescriptionID, width: width,
                                                      parser: try ParserFactory.make(limits: vault.attachmentLimits))
                try SafeFileWriter.write(to: out, replace: force) { try $0.write(png) }
                Terminal.out("wrote \(out)")
            }
        }
    }

    /// The isolated child that parses untrusted files (see RxValidate.ParserChild). Not for people.
    struct ParseUntrusted: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "_parse-untrusted", shouldDisplay: false)

        @Option var mode: String
        @Option var limits: String
        @Option var previewWidth: UInt32
        @Option var cpuSeconds: Int
        @Option var memoryBytes: Int

        func run() throws {
            try CommandRunner.run {
                guard let mode = ParserChild.Mode(rawValue: mode) else { throw CLIError(.usage, "_parse-untrusted: --mode '\(mode)' is not one of \(ParserChild.Mode.allCases.map(\.rawValue).joined(separator: ", "))") }
                guard let limits = try? JSONDecoder().decode(ValidationLimits.self, from: Data(limits.utf8)) else {
                    throw CLIError(.usage, "_parse-untrusted: --limits is not the limits' JSON")
                }
                // Never a trap: a negative or absurd limit is refused before it is applied.
                if let problem = ParserChild.argumentProblem(limits: limits, previewWidth: previewWidth, cpuSeconds: cpuSeconds,
                                                             memoryBytes: memoryBytes) {
                    throw CLIError(.usage, "_parse-untrusted: \(problem)", hint: "this command is run by rxvault itself, not by people")
                }
                ParserChild.run(mode: mode, limits: limits, previewWidth: previewWidth, cpuSeconds: cpuSeconds,
                                memoryBytes: memoryBytes, faultForTests: Environment.values["RXVAULT_PARSER_FAULT"])
            }
        }
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
