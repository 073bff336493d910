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
    struct Import: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "import",
            abstract: "Import prescriptions from rxvault JSON or FHIR R4 (optionally age-encrypted).",
            discussion: flowing(
                """
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

                A patient name close to an existing patient's (a typo, another order, accents)
                refuses the import, listing each such name and the patient it may mean (exit 65);
                --new-patient makes new patients of them. Nothing is asked row by row.

                FHIR: only active prescriptions are imported (--status for others; skipped ones are
                counted on stderr); elements rxvault has no field for are kept with the prescription
                and written back on export; a Practitioner prescriber is resolved. FHIR has no element
                for the expiry date (rxvault writes an extension): --assume-expiry
                glasses=2y,contacts=1y gives each prescription without one an expiry that long after
                its issue date, kept as assumed ('no expiry written (assumed to DATE)' in show, list
                and due; "assumedExpiry" in JSON; never written as the prescriber's expiry, nor
                exported as FHIR). Contacts without an expiry need it (or the vault's setting does
                not apply: 'config set assumed-validity' only judges, it does not let them in). The
                older single form --assume-expiry 1y still writes that date into contact-lens
                prescriptions' expiry, as before. An amended prescription (same
                identifier, or same resource id) is the same record (--update-unverified). A
                VisionPrescription without its Patient in the file (HL7's examples, a bare
                resource) needs --patient NAME: an existing patient, found as 'query --patient'
                finds one, or a new one of that name.

                Examples:
                  rxvault import rx-bundle.json --dry-run
                  rxvault import from-clinic.age --age-identity my.key
                  rxvault import my-export.json --update --dry-run
                  rxvault import fhir.json --assume-expiry glasses=2y,contacts=1y --status all
                  rxvault import visionprescription-example.json --patient "Sam Rivera"
                """))

        @Argument(help: "The file to import, or - for standard input.") var file: String
        @Option(help: ArgumentHelp("Decrypt an age file with this identity file.", valueName: "file")) var ageIdentity:
            String?
        @Option(help: ArgumentHelp("Decrypt an age file with the passphrase in this file.", valueName: "file"))
        var agePassphraseFile: String?
        @Flag(help: "Check everything and list what each prescription would do, without importing.") var dryRun = false
        @Flag(
            help:
                "Replace prescriptions already in the vault with the file's content (as new versions); the file must be an export of this vault."
        )
        var update = false
        @Flag(
            help:
                "Like --update, but also from a file not bound to this vault (another vault's, a client's, FHIR, edited)."
        )
        var updateUnverified = false
        @Flag(help: "Make new patients for names close to an existing patient's (otherwise refused).")
        var newPatient = false
        @Flag(help: "List every warning (otherwise the first \(ImportWarnings.shown) and how many more).")
        var allWarnings = false
        @Option(
            help: ArgumentHelp(
                "FHIR: import prescriptions with these statuses: all (active, cancelled, draft) or codes, comma-separated (default active; entered-in-error only when named).",
                valueName: "codes|all"))
        var status: String?
        @Option(
            help: ArgumentHelp(
                "FHIR: per kind, assume prescriptions without an expiry expire this long after their issue date, kept as assumed (glasses=2y,contacts=1y; durations 1y, 18m, 26w, 90d). A lone duration (1y) writes it as contact lenses' expiry, as before.",
                valueName: "kind=duration,..."))
        var assumeExpiry: String?
        @Option(
            help: ArgumentHelp(
                "FHIR: the patient of prescriptions the file has no Patient for (that whole name or id prefix, else made).",
                valueName: "name"))
        var patient: String?
        @OptionGroup var options: VaultOptions

        func validate() throws {
            if let assumeExpiry, FHIR.ExpiryAssumption(assumeExpiry) == nil,
                AssumedValidity(parsing: assumeExpiry).map({ $0.isEmpty }) ?? true
            {
                throw ValidationError(
                    "--assume-expiry '\(assumeExpiry)': give durations per kind such as glasses=2y,contacts=1y (or the older single form, a duration such as 1y, 18m, 26w or 90d)"
                )
            }
            if let status { _ = try Self.statuses(status) }
        }

        static func statuses(_ text: String) throws -> Set<String> {
            do { return try FHIR.ImportOptions.statuses(text) } catch {
                throw ValidationError(error.problems.joined(separator: "; "))
            }
        }

        /// Largest import file read (an export with attachments of the largest allowed size).
        static let maxBytes = 512 << 20

        func run() throws {
            try CommandRunner.run {
                try options.requireOwner("import")
                var bytes = try Self.readInput(file)
                if ImportFormat(of: bytes) == .age {
                    let key: AgeFile.Key
                    if let path = agePassphraseFile {
                        key = .passphrase(
                            try PassphraseSource.read(file: path, what: "age passphrase"), maxLogN: AgeFile.maxReadLogN)
                    } else if let path = ageIdentity {
                        key = .identities(try KeyFile.identities(path, what: "age identity"))
                    } else {
                        throw CLIError(
                            .usage, "\(file) is age-encrypted",
                            hint: "give --age-identity FILE or --age-passphrase-file FILE")
                    }
                    bytes = try AgeFile.decrypt(bytes, with: key)
                }
                try Self.requireImportable(ImportFormat(of: bytes))
                // A lone duration is the older form (contacts, written as the expiry); kind=duration pairs
                // are kept as assumed.
                let single = assumeExpiry.flatMap(FHIR.ExpiryAssumption.init)
                var fhirOptions = FHIR.ImportOptions(
                    statuses: try status.map(Self.statuses) ?? ["active"],
                    assumeExpiry: single,
                    patient: patient.map { Patient(name: $0) },
                    assumedValidity: single == nil ? assumeExpiry.flatMap(AssumedValidity.init(parsing:)) : nil)
                // Read whole before the passphrase is asked for: a bad file costs none.
                var (file, fhir) = try ImportFile.read(bytes, fhir: fhirOptions)
                if fhir == nil && (status != nil || assumeExpiry != nil || patient != nil) {
                    throw CLIError(
                        .usage, "--status, --assume-expiry and --patient are for FHIR files",
                        hint: "this file is an rxvault export")
                }
                if let fhir { Self.tell(fhir, options: fhirOptions, dryRun: dryRun) }
                let vault = try options.openVault(command: "import")
                if let patient, fhir != nil {
                    // The patient --patient names, found as `query --patient` finds one; the file is
                    // read again with it (only its prescriptions without a Patient take it).
                    fhirOptions.patient = try Self.patient(patient, in: vault)
                    (file, fhir) = try ImportFile.read(bytes, fhir: fhirOptions)
                }
                let policy = Vault.ImportPolicy(update: update, unverified: updateUnverified, newPatients: newPatient)
                let report: Vault.ImportReport
                let progress = Progress(dryRun ? "checking" : "importing")
                let total = file.count
                do {
                    defer { progress.finish() }
                    report = try vault.importItems(
                        file, policy: policy, parser: try ParserFactory.make(limits: vault.attachmentLimits),
                        dryRun: dryRun,
                        progress: total >= Progress.minimumItems ? { progress.update($0, total) } : nil)
                } catch let error as ImportError {
                    guard let refused = error.report else { throw error }
                    if dryRun {
                        Self.list(refused.items)
                        Self.list(refused.measurements)
                    }
                    throw Self.refusal(error, refused)
                }
                ImportWarnings.lines(report.warnings, all: allWarnings).forEach(Terminal.warning)
                if !dryRun { PatientChoice.sayNotes(vault, listingAtMost: 5) }
                // A dry run lists every item; an import names what it updated.
                Self.list(report.items.filter { dryRun || $0.action == .update })
                Self.list(report.measurements.filter { dryRun || $0.action == .update })
                let verb = dryRun ? "would import" : "imported"
                Terminal.out(
                    "\(verb): \(report.added.count) new, \(report.updated.count) updated (new version), "
                        + "\(report.unchanged.count) unchanged, \(report.attachmentsAdded) attachment(s)"
                        + (report.measurementCounts.map { "; measurements: \($0)" } ?? ""))
            }
        }

        /// `--patient NAME`: the record of that whole name (as `add` matches it) or id prefix
        /// (`Vault.resolvePatient`; two or more is an error listing them), else a new patient of
        /// that name (which, close to an existing name, the import's near-miss rule refuses
        /// without --new-patient). Never a part of a name, as `trend` finds one: an import writes,
        /// and "Ann" must not quietly become "Joanne Smith".
        static func patient(_ text: String, in vault: Vault) throws -> Patient {
            let name = text.split(whereSeparator: \.isWhitespace).joined(separator: " ")
            guard vault.header.formatVersion >= 4 else { return Patient(name: name) }
            let found: PatientSummary
            do { found = try vault.resolvePatient(text) } catch {
                guard case .patientNotFound = error else { throw error }
                return Patient(name: name)
            }
            return found.patient
        }

        /// `update     3f9a2c1e  prescriptions[2]: OD sphere -2.00 → -2.25; note`, one line per item.
        static func list(_ items: [Vault.ImportOutcome]) {
            for item in items {
                let summary = item.changeSummary
                let line =
                    "\(item.action.rawValue.padding(toLength: 10, withPad: " ", startingAt: 0)) \(item.id.short)  \(item.position)"
                    + (summary.isEmpty || item.action == .new ? "" : ": \(summary)")
                Terminal.out(Table.displayable(line))
            }
        }

        /// `update     9c1d0e2a  patients[0].measurements[1] (Mia Chen, 2025-03-01): axial length OD ...`.
        static func list(_ measurements: [Vault.MeasurementOutcome]) {
            for m in measurements {
                let line =
                    "\(m.action.rawValue.padding(toLength: 10, withPad: " ", startingAt: 0)) \(m.id.prefix(8))  \(m.position) (\(m.patient), \(m.date))"
                    + (m.changes.isEmpty ? "" : ": " + m.changes.joined(separator: "; "))
                Terminal.out(Table.displayable(line))
            }
        }

        /// The refusal of updates the user did not allow, with what would allow them.
        static func refusal(_ error: ImportError, _ report: Vault.ImportReport) -> CLIError {
            let (status, message, _) = CommandRunner.describe(error)
            let unbound = (report.refused.map(\.refusal) + report.refusedMeasurements.map(\.refusal)).compactMap {
                refusal -> Vault.ImportOrigin? in
                if case .notBound(let origin)? = refusal { return origin }
                return nil
            }
            let hint =
                unbound.isEmpty && report.origin != .thisVault
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
            return try input.readAll(
                limit: maxBytes,
                tooLarge: CLIError(.invalidInput, "\(path) is over the \(maxBytes >> 20) MiB import limit"))
        }

        /// What a FHIR file's reading decided before the vault sees it: skipped by status, expiry assumed.
        static func tell(_ result: FHIR.ImportResult, options: FHIR.ImportOptions, dryRun: Bool) {
            if !result.skipped.isEmpty {
                if dryRun {
                    for skipped in result.skipped {
                        Terminal.out(
                            Table.displayable("skipped    -         \(skipped.position): status \(skipped.status)"))
                    }
                }
                // entered-in-error means "this should never have existed": suggested only apart.
                let statuses = Set(result.skipped.map(\.status)).union(options.statuses)
                let asked = FHIR.statuses.filter { statuses.contains($0) && $0 != "entered-in-error" }.joined(
                    separator: ",")
                let named = statuses.contains("entered-in-error") && !options.statuses.contains("entered-in-error")
                Terminal.err(
                    Table.displayable(
                        "rxvault: skipped \(result.skipped.count) prescription(s) by status (\(result.skippedCounts)): "
                            + "only \(FHIR.statuses.filter(options.statuses.contains).joined(separator: ", ")) ones are imported"
                    ))
                let others = result.skipped.contains { $0.status != "entered-in-error" }
                let current = FHIR.statuses.filter(options.statuses.contains).joined(separator: ",")
                Terminal.err(
                    Table.displayable(
                        others
                            ? "rxvault: hint: to import them too, pass --status \(asked)"
                                + (named
                                    ? " (entered-in-error ones only if you name that status too: they were recorded by mistake)"
                                    : "")
                            : "rxvault: hint: entered-in-error ones were recorded by mistake; to import them anyway, pass --status \(current),entered-in-error"
                    ))
            }
            if let assumed = options.assumedValidity, !result.assumedExpiry.isEmpty {
                Terminal.err(
                    Table.displayable(
                        "rxvault: \(dryRun ? "would keep" : "kept") an assumed expiry (\(assumed) after the issue date; not written as the prescriber's) for \(result.assumedExpiry.count) prescription(s) without one (--assume-expiry): "
                            + result.assumedExpiry.joined(separator: ", ")))
            }
            if let assumed = options.assumeExpiry, !result.assumedExpiry.isEmpty {
                Terminal.err(
                    Table.displayable(
                        "rxvault: \(dryRun ? "would give" : "gave") \(result.assumedExpiry.count) contact-lens prescription(s) without an expiry one \(assumed) after the issue date (--assume-expiry): "
                            + result.assumedExpiry.joined(separator: ", ")))
            }
        }

        /// Refuses a file (decrypted, if it was age) that is neither an rxvault export nor FHIR.
        static func requireImportable(_ format: ImportFormat) throws {
            switch format {
            case .rxvaultExport, .fhir: return
            case .age, .notJSON:
                throw CLIError(
                    .invalidInput, "the file is neither JSON nor an age file",
                    hint: "rxvault imports its own JSON exports and FHIR R4 JSON")
            case .otherJSON:
                throw CLIError(.invalidInput, "the JSON is neither an rxvault export nor a FHIR resource")
            }
        }
    }
}
