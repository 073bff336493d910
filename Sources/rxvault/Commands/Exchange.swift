import ArgumentParser
import Foundation
import RxCrypto
import RxPrint
import RxVault
import RxModel

#if canImport(Glibc)
import Glibc
#endif

extension RxVaultCommand {
    struct Export: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Export prescriptions as FHIR R4, rxvault JSON or CSV, optionally age-encrypted.",
            discussion: flowing("""
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

        @Argument(help: "Prescription ids (any unique prefix); none means all (or the filters).", completion: .custom(Completion.prescriptionIDs)) var prescriptions: [String] = []
        @OptionGroup var filters: FilterOptions
        @Option(help: "fhir (HL7 FHIR R4 Bundle), json (rxvault's own, complete), csv (one row per eye) or pdf (a printable page per prescription).") var format: ExportFormat
        @Option(help: ArgumentHelp("Where to write: a file (mode 0600) or - for standard output.", valueName: "file|-")) var out: String
        @Option(name: .customLong("for"), help: ArgumentHelp("Export what this client is granted, encrypted to it.", valueName: "client")) var client: String?
        @OptionGroup var recipientOptions: RecipientOptions
        @Option(help: ArgumentHelp("Encrypt with the passphrase in this file (age scrypt).", valueName: "file")) var agePassphraseFile: String?
        @Flag(help: "Write the age file in ASCII armor.") var armor = false
        @Flag(help: "Leave out the attachments (fhir, json).") var noAttachments = false
        @Flag(help: "Include every earlier version (json).") var versions = false
        @Flag(help: "Replace the output file if it exists.") var force = false
        @OptionGroup var options: VaultOptions

        enum ExportFormat: String, ExpressibleByArgument, CaseIterable { case fhir, json, csv, pdf }

        func validate() throws {
            if agePassphraseFile != nil && (client != nil || !recipientOptions.isEmpty) {
                throw ValidationError("a passphrase (--age-passphrase-file) cannot be combined with recipients (--for, --recipient)")
            }
            if armor && client == nil && recipientOptions.isEmpty && agePassphraseFile == nil {
                throw ValidationError("--armor is for age-encrypted exports (--for, --recipient or --age-passphrase-file)")
            }
            if !prescriptions.isEmpty && !filters.isEmpty { throw ValidationError("give prescription ids or filters, not both") }
        }

        func run() throws {
            try CommandRunner.run {
                let destination = try ExportDestination(out: out, replace: force, recipients: recipientOptions,
                                                        passphraseFile: agePassphraseFile, armor: armor, forClient: client != nil)
                let filter = try filters.filter()
                let withAttachments = !noAttachments && format != .csv
                let source: ExportSource
                if options.identity != nil {
                    guard client == nil, !versions else {
                        throw CLIError(.usage, "--for and --versions are for the owner", hint: "a client exports what it is granted")
                    }
                    source = try .client(options, ids: prescriptions, filter: filter, attachments: withAttachments, format: format.rawValue)
                } else {
                    source = try .owner(options, ids: prescriptions, filter: filter, client: client, attachments: withAttachments,
                                        versions: versions)
                }
                let clock = try Environment.clock()
                let (exported, attachmentIDs) = try export(from: source, to: destination, created: clock.timestamp(), today: clock.today())
                Terminal.err("rxvault: exported \(exported.count) prescription(s)\(attachmentIDs.isEmpty ? "" : " with attachments")"
                             + (out == "-" ? "" : " to \(out)") + (destination.encrypted || client != nil ? " (age-encrypted)" : ""))
            }
        }

        /// Streams every item of `source` in this format to `destination`; returns the ids written.
        private func export(from source: ExportSource, to destination: ExportDestination, created now: String,
                            today: CalendarDate) throws -> (prescriptions: [String], attachments: [String]) {
            var exported: [String] = []
            var attachmentIDs: [String] = []
            let progress = Progress("exporting")
            try destination.deliver(grantee: source.grantee, write: { output in
                let writer: any ExportStream
                switch format {
                // The owner's exports are bound to the vault (so it can update from them); a client's are not.
                case .json: writer = try RxvaultExport.Stream(output: output, exported: now,
                                                              bind: source.owner.map { vault in { try vault.exportBinding($0) } })
                case .fhir: writer = try FHIR.Stream(output: output, exported: now)
                case .csv: writer = try CSVExportStream(output: output, today: today)
                case .pdf: writer = PDFExportStream(output: output, today: today, created: now)
                }
                var total = 0
                try source.produce({ total = $0 }) { item in
                    try writer.add(item)
                    exported.append(item.record.id.hex)
                    // A printed copy names its attachments; it does not carry them.
                    if format != .pdf { attachmentIDs += item.attachments.map(\.info.id.hex) }
                    if total >= Progress.minimumItems { progress.update(exported.count, total) }
                }
                try writer.finish()
                progress.finish()
                if exported.isEmpty { Terminal.warning(source.emptyWarning) }
            }, record: {
                try source.record(prescriptions: exported, attachments: attachmentIDs, format: format.rawValue,
                                  recipients: destination.recipientsText(grantee: source.grantee))
            })
            return (exported, attachmentIDs)
        }
    }

    /// CSV written as it goes: one row per eye.
    /// The printable copy: one page per prescription, drawn when the last item has come (a page
    /// names the others by their shortest unique ids, so the set must be known first).
    final class PDFExportStream: ExportStream {
        let output: ExportOutput
        let today: CalendarDate
        let created: String
        private var items: [ExportItem] = []

        init(output: ExportOutput, today: CalendarDate, created: String) {
            self.output = output
            self.today = today
            self.created = created
        }

        func add(_ item: ExportItem) throws { items.append(item) }

        func finish() throws {
            let short = PrescriptionID.shortForms(items.map(\.record.id))
            let pages = items.map { PrescriptionPrint.page($0, shortID: short[$0.record.id] ?? $0.record.id.short, today: today) }
            do { try output.write(try PDFPrinter.pdf(pages, title: "Prescriptions", created: created)) } catch {
                throw CLIError(.failure, "cannot write the PDF: \(error)")
            }
            try output.flush()
        }
    }

    final class CSVExportStream: ExportStream {
        let output: ExportOutput
        let today: CalendarDate
        /// One prescription's rows, reused.
        private var line: [UInt8] = []

        init(output: ExportOutput, today: CalendarDate) throws {
            self.output = output
            self.today = today
            try output.write(CSV.line(PrescriptionCSV.headers) + "\n")
        }

        func add(_ item: ExportItem) throws {
            let view = PrescriptionView(record: item.record, today: today, cylinderForm: nil)
            line.removeAll(keepingCapacity: true)
            for row in PrescriptionCSV.rows(view) {
                CSV.append(row, to: &line)
                line.append(0x0A)
            }
            try output.write(line)
        }

        func finish() throws { try output.flush() }
    }

    struct Import: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Import prescriptions from rxvault JSON or FHIR R4 (optionally age-encrypted).",
            discussion: flowing("""
            Accepts an rxvault export (json), a FHIR R4 VisionPrescription or a Bundle of them with
            their Patients and DocumentReferences, or an age file of either. Every prescription is
            checked by the same rules as 'add' and every attachment by the attachment validator; if
            anything is refused, nothing is imported and every problem is listed. Importing the
            same file again changes nothing.

            Import adds prescriptions. One whose id is already in the vault with other content
            (or without some of the file's attachments) refuses the import, unless --update is
            given: then the file's content becomes a new version, and only if the file is an
            export of this vault that nobody changed since (rxvault JSON exports carry the vault's
            id and the owner's MAC). --update-unverified updates from any file (another vault's,
            a client's export, FHIR, an edited export). --dry-run lists every item as new,
            unchanged, update (with the fields that change) or refused.

            FHIR: only active prescriptions are imported (--status for others; skipped ones are
            counted on stderr); elements rxvault has no field for are kept with the prescription
            and written back on export; a Practitioner prescriber is resolved; contacts without
            rxvault's expiry extension need --assume-expiry. An amended prescription (same
            identifier, or same resource id) is the same record (--update-unverified).

            Examples:
              rxvault import rx-bundle.json --dry-run
              rxvault import from-clinic.age --age-identity my.key
              rxvault import my-export.json --update --dry-run
              rxvault import clinic-bundle.json --assume-expiry 1y --status all
            """))

        @Argument(help: "The file to import, or - for standard input.") var file: String
        @Option(help: ArgumentHelp("Decrypt an age file with this identity file.", valueName: "file")) var ageIdentity: String?
        @Option(help: ArgumentHelp("Decrypt an age file with the passphrase in this file.", valueName: "file")) var agePassphraseFile: String?
        @Flag(help: "Check everything and list what each prescription would do, without importing.") var dryRun = false
        @Flag(help: "Replace prescriptions already in the vault with the file's content (as new versions); the file must be an export of this vault.")
        var update = false
        @Flag(help: "Like --update, but also from a file not bound to this vault (another vault's, a client's, FHIR, edited).")
        var updateUnverified = false
        @Option(help: ArgumentHelp("FHIR: import prescriptions with these statuses: all (active, cancelled, draft) or codes, comma-separated (default active; entered-in-error only when named).", valueName: "codes|all"))
        var status: String?
        @Option(help: ArgumentHelp("FHIR: give contact-lens prescriptions without an expiry one this long after their issue date (1y, 18m, 26w, 90d).", valueName: "duration"))
        var assumeExpiry: String?
        @OptionGroup var options: VaultOptions

        func validate() throws {
            if let assumeExpiry, FHIR.ExpiryAssumption(assumeExpiry) == nil {
                throw ValidationError("--assume-expiry '\(assumeExpiry)': give a duration such as 1y, 18m, 26w or 90d")
            }
            if let status { _ = try Self.statuses(status) }
        }

        static func statuses(_ text: String) throws -> Set<String> {
            do { return try FHIR.ImportOptions.statuses(text) } catch { throw ValidationError(error.problems.joined(separator: "; ")) }
        }

        /// Largest import file read (an export with attachments of the largest allowed size).
        static let maxBytes = 512 << 20

        func run() throws {
            try CommandRunner.run {
                try options.requireOwner("import")
                var bytes = try Self.readInput(file)
                if AgeFile.looksLikeAge(bytes) {
                    let key: AgeFile.Key
                    if let path = agePassphraseFile {
                        key = .passphrase(try PassphraseSource.read(file: path, what: "age passphrase"), maxLogN: AgeFile.maxReadLogN)
                    } else if let path = ageIdentity {
                        key = .identities(try KeyFile.identities(path, what: "age identity"))
                    } else {
                        throw CLIError(.usage, "\(file) is age-encrypted", hint: "give --age-identity FILE or --age-passphrase-file FILE")
                    }
                    bytes = try AgeFile.decrypt(bytes, with: key)
                }
                let fhirOptions = FHIR.ImportOptions(statuses: try status.map(Self.statuses) ?? ["active"],
                                                     assumeExpiry: assumeExpiry.flatMap(FHIR.ExpiryAssumption.init))
                let (file, fhir) = try Self.parse(bytes, fhir: fhirOptions)
                if fhir == nil && (status != nil || assumeExpiry != nil) {
                    throw CLIError(.usage, "--status and --assume-expiry are for FHIR files", hint: "this file is an rxvault export")
                }
                if let fhir { Self.tell(fhir, options: fhirOptions, dryRun: dryRun) }
                let vault = try options.openVault(command: "import")
                let policy = Vault.ImportPolicy(update: update, unverified: updateUnverified)
                let report: Vault.ImportReport
                let progress = Progress(dryRun ? "checking" : "importing")
                let total = file.count
                do {
                    defer { progress.finish() }
                    report = try vault.importItems(file, policy: policy, parser: try ParserFactory.make(limits: vault.attachmentLimits), dryRun: dryRun,
                                                   progress: total >= Progress.minimumItems ? { progress.update($0, total) } : nil)
                } catch let error as ImportError {
                    guard let refused = error.report else { throw error }
                    if dryRun { Self.list(refused.items) }
                    throw Self.refusal(error, refused)
                }
                report.warnings.forEach(Terminal.warning)
                if !dryRun { PatientChoice.sayNotes(vault) }
                // A dry run lists every item; an import names what it updated.
                Self.list(report.items.filter { dryRun || $0.action == .update })
                let verb = dryRun ? "would import" : "imported"
                Terminal.out("\(verb): \(report.added.count) new, \(report.updated.count) updated (new version), "
                             + "\(report.unchanged.count) unchanged, \(report.attachmentsAdded) attachment(s)")
            }
        }

        /// `update     3f9a2c1e  prescriptions[2]: OD sphere -2.00 → -2.25; note`, one line per item.
        static func list(_ items: [Vault.ImportOutcome]) {
            for item in items {
                let summary = item.changeSummary
                let line = "\(item.action.rawValue.padding(toLength: 10, withPad: " ", startingAt: 0)) \(item.id.short)  \(item.position)"
                    + (summary.isEmpty || item.action == .new ? "" : ": \(summary)")
                Terminal.out(Table.displayable(line))
            }
        }

        /// The refusal of updates the user did not allow, with what would allow them.
        static func refusal(_ error: ImportError, _ report: Vault.ImportReport) -> CLIError {
            let (status, message, _) = CommandRunner.describe(error)
            let unbound = report.refused.compactMap { outcome -> Vault.ImportOrigin? in
                if case .notBound(let origin)? = outcome.refusal { return origin }
                return nil
            }
            let hint = unbound.isEmpty && report.origin != .thisVault
                ? "nothing was imported; this file is not an export of this vault (FHIR, another vault's or a client's), so only "
                    + "--update-unverified makes its content a new version: check with --dry-run --update-unverified first"
                : unbound.isEmpty
                ? "nothing was imported; to replace them with the file's content, check with --dry-run --update, then pass --update"
                : "nothing was imported; --update only takes exports of this vault that were not changed since; "
                    + "--update-unverified updates from this file anyway"
            return CLIError(status, message, hint: hint)
        }

        static func readInput(_ path: String) throws -> [UInt8] {
            let input = try InputFile(path: path)
            defer { input.close() }
            return try input.readAll(limit: maxBytes, tooLarge: CLIError(.invalidInput, "\(path) is over the \(maxBytes >> 20) MiB import limit"))
        }

        /// What a FHIR file's reading decided before the vault sees it: skipped by status, expiry assumed.
        static func tell(_ result: FHIR.ImportResult, options: FHIR.ImportOptions, dryRun: Bool) {
            if !result.skipped.isEmpty {
                if dryRun {
                    for skipped in result.skipped { Terminal.out(Table.displayable("skipped    -         \(skipped.position): status \(skipped.status)")) }
                }
                // entered-in-error means "this should never have existed": suggested only apart.
                let statuses = Set(result.skipped.map(\.status)).union(options.statuses)
                let asked = FHIR.statuses.filter { statuses.contains($0) && $0 != "entered-in-error" }.joined(separator: ",")
                let named = statuses.contains("entered-in-error") && !options.statuses.contains("entered-in-error")
                Terminal.err(Table.displayable("rxvault: skipped \(result.skipped.count) prescription(s) by status (\(result.skippedCounts)): "
                                               + "only \(FHIR.statuses.filter(options.statuses.contains).joined(separator: ", ")) ones are imported"))
                let others = result.skipped.contains { $0.status != "entered-in-error" }
                let current = FHIR.statuses.filter(options.statuses.contains).joined(separator: ",")
                Terminal.err(Table.displayable(others
                    ? "rxvault: hint: to import them too, pass --status \(asked)"
                        + (named ? " (entered-in-error ones only if you name that status too: they were recorded by mistake)" : "")
                    : "rxvault: hint: entered-in-error ones were recorded by mistake; to import them anyway, pass --status \(current),entered-in-error"))
            }
            if let assumed = options.assumeExpiry, !result.assumedExpiry.isEmpty {
                Terminal.err(Table.displayable("rxvault: \(dryRun ? "would give" : "gave") \(result.assumedExpiry.count) contact-lens prescription(s) without an expiry one \(assumed) after the issue date (--assume-expiry): "
                                               + result.assumedExpiry.joined(separator: ", ")))
            }
        }

        /// rxvault JSON or FHIR, by content; for FHIR also what was skipped and assumed.
        static func parse(_ bytes: [UInt8], fhir options: FHIR.ImportOptions) throws -> (ImportFile, FHIR.ImportResult?) {
            guard let keys = ImportFormat.topLevelKeys(bytes), keys.contains("resourceType") else { return (try parse(bytes), nil) }
            let result = try FHIR.decodeFile(bytes, options: options)
            return (result.file, result)
        }

        /// rxvault JSON or FHIR, by content.
        static func parse(_ bytes: [UInt8]) throws -> ImportFile {
            // Only the top-level keys are looked at here: the decoders read the rest one entry at a time.
            guard let keys = ImportFormat.topLevelKeys(bytes) else {
                throw CLIError(.invalidInput, "the file is neither JSON nor an age file", hint: "rxvault imports its own JSON exports and FHIR R4 JSON")
            }
            if keys.contains("schema") { return try RxvaultExport.decodeFile(bytes) }
            if keys.contains("resourceType") { return ImportFile(items: try FHIR.decode(bytes)) }
            throw CLIError(.invalidInput, "the JSON is neither an rxvault export nor a FHIR resource")
        }
    }
}
