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
    struct Attachments: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "attachments",
            abstract: "List a prescription's attachments.",
            discussion:
                "--long adds each file's SHA-256 (of the stored file, what 'extract' writes, as sha256sum prints it); JSON always has it."
        )

        @Argument(help: "The prescription's id (any unique prefix).", completion: .custom(Completion.prescriptionIDs))
        var prescription: String
        @Option(help: "Output format.") var format: DocumentFormat = .table
        @Flag(help: "Add the SHA-256 of each file (64 characters) to the table.") var long = false
        @OptionGroup var options: VaultOptions

        func run() throws {
            try CommandRunner.run(json: format == .json) {
                let vault = try options.openReader()
                let prescriptionID = try vault.resolve(prescription)
                let attachments = try vault.attachments(of: prescriptionID)
                warnIfNotLogged(vault)
                switch format {
                case .json:
                    Terminal.out(
                        String(
                            decoding: try AttachmentJSON.encoder().encode(
                                AttachmentListJSON(
                                    prescription: prescriptionID.hex, attachments: attachments.map(AttachmentJSON.init))
                            ), as: UTF8.self))
                default:
                    guard !attachments.isEmpty else {
                        // A client may not be granted the attachments: it learns nothing of them,
                        // and is never told to run an owner command.
                        Terminal.err(
                            options.identity == nil
                                ? "rxvault: prescription \(prescriptionID.short) has no attachments; add one with 'rxvault attach'"
                                : "rxvault: no attachments of prescription \(prescriptionID.short) are shared with this identity"
                        )
                        return
                    }
                    let short = RecordID.shortForms(attachments.map(\.id))
                    Terminal.out(
                        Table.render(
                            headers: ["ID", "NAME", "TYPE", "SIZE", "DETAILS", "ADDED"] + (long ? ["SHA-256"] : []),
                            rows: attachments.map { a in
                                let m = a.metadata
                                return [
                                    short[a.id]!, m.name, m.type.rawValue, ByteCount(m.size).description, m.dimensions,
                                    m.added
                                ] + (long ? [m.sha256] : [])
                            }, overflow: [.init(columns: [5])], style: .forStandardOutput(wide: long)))
                }
            }
        }
    }
}
