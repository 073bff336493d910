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
    struct Attach: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "attach",
            abstract: "Attach a photo or scan (PNG or PDF; a JPEG or HEIC photo is converted to PNG).",
            discussion: flowing(
                """
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
                ends in .png. A PNG is stored without its metadata (text chunks, eXIf with a
                possible GPS position, times, private chunks; what was dropped is said on standard
                error); what changes how it looks stays (palette, transparency, colour profile,
                gamma, pixel size). --keep-metadata stores it exactly as given. Prints the new
                attachment's id. The same content twice on one
                prescription is refused (exit 73, naming the attachment that has it) unless
                --allow-duplicate.

                Examples:
                  rxvault attach 3f9a scan.pdf
                  rxvault attach 3f9a IMG_2041.HEIC          # stored as IMG_2041.png
                  rxvault attach 3f9a - --name box-label.png < photo.png
                """))

        @Argument(help: "The prescription's id (any unique prefix).", completion: .custom(Completion.prescriptionIDs))
        var prescription: String
        @Argument(
            help: "The file to attach, or - for standard input.",
            completion: .file(extensions: ["png", "pdf", "jpg", "jpeg", "heic", "heif"]))
        var file: String
        @Option(help: "The attachment's name (default: the file's name; .png for a converted photo).") var name: String?
        @Flag(help: "Store the file even if the prescription already has the same content.") var allowDuplicate = false
        @Flag(
            help:
                "Keep every pixel of a converted JPEG or HEIC photo (default: at most 2048 pixels on the longest side)."
        )
        var fullSize = false
        @Flag(help: "Store a PNG exactly as given, with its text, eXIf and other metadata chunks (default: drop them).")
        var keepMetadata = false
        @OptionGroup var options: VaultOptions

        func run() throws {
            try CommandRunner.run {
                try options.requireOwner("attach")
                let limit = try options.readHeader().maxAttachmentBytes
                let input = try InputFile(path: file)
                defer { input.close() }
                // Checked before the file is read, and before a passphrase is asked for.
                if let size = input.size, size > limit {
                    throw CLIError(
                        .invalidInput,
                        "refused: file is \(ByteCount(size)): over the \(ByteCount(limit)) limit of this vault",
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
                    do { conversion = try source.convert(parser: parser, fullSize: fullSize) } catch let refusal
                        as AttachmentRefusal
                    {
                        throw VaultError.attachmentRefused(
                            AttachmentRefusal(refusal.reason, "\(format.rawValue) photo: \(refusal.message)"))
                    }
                    Terminal.err("rxvault: " + PhotoText.converted(conversion))
                }
                // The vault checks the name too; checking it here costs the person no passphrase.
                let storedName =
                    name ?? (input.isStandardInput ? nil : source.defaultName(for: PathText.name(of: file)))
                if let storedName, let problem = TextField.attachmentNameProblem(storedName) {
                    throw CLIError(
                        .invalidInput, "attachment name: \(problem)", hint: "choose the name to store with --name NAME")
                }
                let vault = try options.openVault(command: "attach")
                let prescriptionID = try vault.resolve(prescription)
                let parser = try ParserFactory.make(limits: vault.attachmentLimits)
                let info = try vault.attach(
                    to: prescriptionID, name: storedName, allowDuplicate: allowDuplicate, keepMetadata: keepMetadata,
                    parser: parser
                ) { try source.read(into: &$0) }
                for note in info.notes { Terminal.err("rxvault: note: \(Table.displayable(note))") }
                if !info.droppedMetadata.isEmpty {
                    Terminal.err(
                        "rxvault: stored the PNG without its metadata: \(info.droppedMetadata.joined(separator: ", ")) (--keep-metadata keeps it)"
                    )
                }
                if info.imageDataSplits > 0 {
                    let places = info.imageDataSplits == 1 ? "1 place" : "\(info.imageDataSplits) places"
                    Terminal.err(
                        "rxvault: cut the PNG's image data into one more chunk at \(places): its compressed bytes spelled HTML a browser could act on (the pixels are the same)"
                    )
                }
                Terminal.out(info.id.short)
            }
        }
    }
}
