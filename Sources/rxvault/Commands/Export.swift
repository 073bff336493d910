import ArgumentParser
import Foundation
import RxCrypto
import RxModel
import RxPrint
import RxVault

#if canImport(Glibc)
    import Glibc
#endif

extension RxVaultCommand {
    struct Export: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "export",
            abstract:
                "Export prescriptions as FHIR R4, rxvault JSON, CSV or a printable PDF, optionally age-encrypted.",
            discussion: flowing(
                """
                Exports the given prescriptions, or those the query filters select (all without either).
                Plaintext is written only where you ask (--out FILE, mode 0600, or --out -).
                --for CLIENT exports only what the client is granted, encrypted to its age key, so it
                opens the file with 'age -d -i its-identity'; --recipient age1... and
                --recipients-file (age1... keys and ssh-ed25519 public keys, as age -r and -R take them) and
                --age-passphrase-file encrypt for other people. Every export is written to the audit log.

                Examples:
                  rxvault export --format fhir --out rx-bundle.json
                  rxvault export 3f9a --format json --for lens-shop --out for-shop.age
                  rxvault export --patient sam --format csv --out -
                  rxvault export 3f9a --format pdf --out rx.pdf
                """))

        @Argument(
            help: "Prescription ids (any unique prefix); none means all (or the filters).",
            completion: .custom(Completion.prescriptionIDs)) var prescriptions: [String] = []
        @OptionGroup var filters: FilterOptions
        @Option(
            help:
                "fhir (HL7 FHIR R4 Bundle), json (rxvault's own, complete), csv (one row per eye) or pdf (a printable page per prescription)."
        ) var format: ExportFormat
        @Option(help: ArgumentHelp("Where to write: a file (mode 0600) or - for standard output.", valueName: "file|-"))
        var out: String
        @Option(
            name: .customLong("for"),
            help: ArgumentHelp("Export what this client is granted, encrypted to it.", valueName: "client")) var client:
            String?
        @OptionGroup var recipientOptions: RecipientOptions
        @Option(help: ArgumentHelp("Encrypt with the passphrase in this file (age scrypt).", valueName: "file"))
        var agePassphraseFile: String?
        @Flag(help: "Write the age file in ASCII armor.") var armor = false
        @Flag(help: "Leave out the attachments (fhir, json).") var noAttachments = false
        @Flag(help: "Include every earlier version (json).") var versions = false
        @Flag(help: "Replace the output file if it exists.") var force = false
        @OptionGroup var options: VaultOptions

        enum ExportFormat: String, ExpressibleByArgument, CaseIterable { case fhir, json, csv, pdf }

        func validate() throws {
            if agePassphraseFile != nil && (client != nil || !recipientOptions.isEmpty) {
                throw ValidationError(
                    "a passphrase (--age-passphrase-file) cannot be combined with recipients (--for, --recipient)")
            }
            if armor && client == nil && recipientOptions.isEmpty && agePassphraseFile == nil {
                throw ValidationError(
                    "--armor is for age-encrypted exports (--for, --recipient or --age-passphrase-file)")
            }
            if !prescriptions.isEmpty && !filters.isEmpty {
                throw ValidationError("give prescription ids or filters, not both")
            }
        }

        func run() throws {
            try CommandRunner.run {
                let destination = try ExportDestination(
                    out: out, replace: force, recipients: recipientOptions,
                    passphraseFile: agePassphraseFile, armor: armor, forClient: client != nil)
                let filter = try filters.filter()
                let withAttachments = !noAttachments && format != .csv
                let source: ExportSource
                if options.identity != nil {
                    guard client == nil, !versions else {
                        throw CLIError(
                            .usage, "--for and --versions are for the owner",
                            hint: "a client exports what it is granted")
                    }
                    source = try .client(
                        options, ids: prescriptions, filter: filter, attachments: withAttachments,
                        format: format.rawValue)
                } else {
                    source = try .owner(
                        options, ids: prescriptions, filter: filter, client: client, attachments: withAttachments,
                        versions: versions)
                }
                let clock = try Environment.clock()
                let (exported, attachmentIDs, patients) = try export(
                    from: source, to: destination, created: clock.timestamp(), today: clock.today())
                Terminal.err(
                    "rxvault: exported \(exported.count) prescription(s)\(attachmentIDs.isEmpty ? "" : " with attachments")"
                        + (patients.isEmpty ? "" : " and \(patients.carriedText)")
                        + (out == "-" ? "" : " to \(out)")
                        + (destination.encrypted || client != nil ? " (age-encrypted)" : ""))
            }
        }

        /// Streams every item of `source` in this format to `destination`; returns the ids written.
        private func export(
            from source: ExportSource, to destination: ExportDestination, created now: String,
            today: CalendarDate
        ) throws -> (prescriptions: [String], attachments: [String], patients: [ExportPatient]) {
            var exported: [String] = []
            var attachmentIDs: [String] = []
            // The owner's patient records travel in the JSON export only (rxvault's own, complete).
            let patients = format == .json ? try source.patients() : []
            let progress = Progress("exporting")
            try destination.deliver(
                grantee: source.grantee,
                write: { output in
                    let writer: any ExportStream
                    switch format {
                    // The owner's exports are bound to the vault (so it can update from them); a client's are not.
                    case .json:
                        writer = try RxvaultExport.Stream(
                            output: output, exported: now, patients: patients,
                            bind: source.owner.map { vault in { try vault.exportBinding($0) } },
                            bindPatients: source.owner.map { vault in { try vault.exportPatientsBinding($0) } })
                    case .fhir: writer = try FHIR.Stream(output: output, exported: now)
                    case .csv:
                        writer = try CSVExportStream(
                            output: output, today: today, supersession: source.supersession,
                            assumedValidity: try source.owner?.assumedValidity())
                    case .pdf:
                        writer = PDFExportStream(
                            output: output, today: today, created: now, supersession: source.supersession,
                            assumedValidity: try source.owner?.assumedValidity())
                    }
                    var total = 0
                    try source.produce({ total = $0 }) { items in
                        try writer.add(items)
                        exported += items.map(\.record.id.hex)
                        // A printed copy names its attachments; it does not carry them.
                        if format != .pdf { attachmentIDs += items.flatMap { $0.attachments.map(\.info.id.hex) } }
                        if total >= Progress.minimumItems { progress.update(exported.count, total) }
                    }
                    try writer.finish()
                    progress.finish()
                    if exported.isEmpty && patients.isEmpty { Terminal.warning(source.emptyWarning) }
                },
                record: {
                    try source.record(
                        prescriptions: exported, attachments: attachmentIDs, patients: patients,
                        format: format.rawValue,
                        recipients: destination.recipientsText(grantee: source.grantee))
                })
            return (exported, attachmentIDs, patients)
        }
    }
}
