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
    struct Preview: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "preview",
            abstract: "Write a downscaled PNG of an attachment (a PDF's first page), to look at.",
            discussion: "Example:\n  rxvault preview 3f9a scan.pdf --out scan-preview.png --width 600")

        @Argument(help: "The prescription's id (any unique prefix).", completion: .custom(Completion.prescriptionIDs))
        var prescription: String
        @Argument(help: "The attachment's name or id (any unique prefix).") var attachment: String
        @Option(help: ArgumentHelp("The PNG file to write.", valueName: "file.png")) var out: String
        @Option(help: "Width of the preview in pixels (16 to 4096; images are never enlarged).") var width: UInt32 =
            PreviewRenderer.defaultWidth
        @Flag(help: "Replace the output file if it exists.") var force = false
        @OptionGroup var options: VaultOptions

        func validate() throws {
            guard PreviewRenderer.widthRange.contains(width) else {
                throw ValidationError("--width must be between 16 and 4096")
            }
        }

        func run() throws {
            try CommandRunner.run {
                _ = try WriteTarget.file(for: out, replace: force)
                let vault = try options.openReader()
                let prescriptionID = try vault.resolve(prescription)
                let attachmentID = try vault.resolveAttachment(attachment, of: prescriptionID)
                let png = try vault.previewAttachment(
                    attachmentID, of: prescriptionID, width: width,
                    parser: try ParserFactory.make(limits: vault.attachmentLimits))
                try SafeFileWriter.write(to: out, replace: force) { try $0.write(png) }
                Terminal.out("wrote \(out)")
            }
        }
    }
}
