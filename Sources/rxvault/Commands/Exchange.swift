import ArgumentParser
import Foundation
import RxCrypto
import RxPrint
import RxVault

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
                // Before any passphrase or work: a path that can never be written costs nothing.
                if out != "-" { _ = try WriteTarget.file(for: out, replace: force) }
                let recipients = try recipientOptions.parse()
                let passphrase = try agePassphraseFile.map { try PassphraseSource.read(file: $0, what: "age passphrase") }
                let encrypted = client != nil || !recipients.isEmpty || passphrase != nil
                if out == "-" && encrypted && !armor && isatty(STDOUT_FILENO) == 1 {
                    throw CLIError(.usage, "refusing to write an encrypted binary file to the terminal", hint: "redirect the output, or add --armor")
                }
                let filter = try filters.filter()
                var owner: Vault?
                var grantee: ClientSummary?
                let items: [ExportItem]
                if options.identity != nil {
                    // A client exports what it is granted (its reads are logged as one export).
                    guard client == nil, !versions else {
                        throw CLIError(.usage, "--for and --versions are for the owner", hint: "a client exports what it is granted")
                    }
                    guard let view = try options.openReader() as? ClientVault else { throw CLIError(.failure, "not a client view") }
                    let ids = prescriptions.isEmpty ? nil : try prescriptions.map { try view.resolve($0) }
                    items = try view.exportItems(ids: ids, filter: filter, attachments: !noAttachments && format != .csv, format: format.rawValue)
                    warnIfNotLogged(view)
                } else {
                    let vault = try options.openVault(command: "export")
                    owner = vault
                    grantee = try client.map { try vault.resolveClient($0) }
                    let ids = prescriptions.isEmpty ? nil : try prescriptions.map { try vault.resolve($0) }
                    items = try vault.exportItems(ids: ids, filter: filter, for: grantee, attachments: !noAttachments && format != .csv,
                                                  versions: versions)
                }
                if items.isEmpty {
                    // Still written (a script may expect the file), but never silently empty.
                    Terminal.warning(grantee.map { "\($0.name) is granted no prescriptions now: the export holds none (see 'rxvault grants')" }
                                     ?? (options.identity != nil ? "no prescription you are granted matches: the export holds none"
                                                                 : "no prescription matches: the export holds none"))
                }
                let now = ISO8601DateFormatter().string(from: Date())
                var bytes: [UInt8]
                switch format {
                case .json:
                    // The owner's exports are bound to the vault (so it can update from them); a client's are not.
                    bytes = try owner.map { try $0.encodeBoundExport(items, exported: now) } ?? RxvaultExport.encode(items, exported: now)
                case .fhir: bytes = try FHIR.bundle(items, exported: now)
                case .csv:
                    let today = try Environment.clock().today()
                    let views = items.map { PrescriptionView(record: $0.record, today: today, cylinderForm: nil) }
                    bytes = Array((([PrescriptionCSV.headers] + views.flatMap(PrescriptionCSV.rows)).map(CSV.line).joined(separator: "\n") + "\n").utf8)
                case .pdf:
                    // One page per prescription; the attachments are named on it, not included.
                    let today = try Environment.clock().today()
                    let short = PrescriptionID.shortForms(items.map(\.record.id))
                    let pages = items.map { PrescriptionPrint.page($0, shortID: short[$0.record.id] ?? $0.record.id.short, today: today) }
                    do { bytes = try PDFPrinter.pdf(pages, title: "Prescriptions", created: now) } catch {
                        throw CLIError(.failure, "cannot write the PDF: \(error)")
                    }
                }
                var ageRecipients: [AgeFile.Recipient] = recipients
                if let grantee { ageRecipients.append(.x25519(grantee.recipient)) }
                if let passphrase { ageRecipients = [.scrypt(passphrase: passphrase, logN: AgeFile.defaultScryptLogN)] }
                if !ageRecipients.isEmpty {
                    bytes = try AgeFile.encrypt(bytes, to: ageRecipients)
                    if armor { bytes = Array(AgeFile.armor(bytes).utf8) }
                }
                // Record the export before the data appears: if the log cannot be written, neither is the file.
                let to = [grantee.map { "for \($0.name)" }, recipients.isEmpty ? nil : "to \(recipients.count) recipient(s)",
                          passphrase == nil ? nil : "with a passphrase"].compactMap { $0 }.joined(separator: " ")
                let audit = { () throws in try owner?.recordExport(items, format: format.rawValue, client: grantee, recipients: to.isEmpty ? nil : to) }
                if out == "-" {
                    try audit()
                    FileHandle.standardOutput.write(Data(bytes))
                } else {
                    let writer = try SafeFileWriter(target: out, replace: force)
                    do {
                        try writer.write(bytes)
                        try audit()
                    } catch {
                        writer.discard()
                        throw error
                    }
                    try writer.commit(replace: force)
                }
                Terminal.err("rxvault: exported \(items.count) prescription(s)\(items.contains { !$0.attachments.isEmpty } ? " with attachments" : "")"
                             + (out == "-" ? "" : " to \(out)") + (encrypted ? " (age-encrypted)" : ""))
            }
        }
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
                do {
                    report = try vault.importItems(file, policy: policy, parser: try ParserFactory.make(limits: vault.attachmentLimits), dryRun: dryRun)
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
            return (ImportFile(items: result.items), result)
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
