import ArgumentParser
import Foundation
import RxModel
import RxVault

extension RxVaultCommand {
    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List the prescriptions, newest issue date first.",
            discussion: flowing("""
            STATUS is valid, expiring (within 60 days) or expired, as of today.
            --format json prints {"schema": "rxvault/prescriptions/v1", "prescriptions": [...]};
            --format csv prints one row per prescription and eye (docs/format.md).
            """))

        @Option(help: "Output format (ndjson: one JSON object per line).") var format: OutputFormat = .table
        @Option(help: "Print cylinders in minus- or plus-cyl form (default: as written).") var cyl: CylinderForm?
        @Flag(help: "Show every cell whole, however wide the terminal (names are otherwise cut with … to fit).") var wide = false
        @OptionGroup var options: VaultOptions

        func run() throws {
            try CommandRunner.run(json: format == .json || format == .ndjson) {
                let vault = try options.openReader()
                try PrescriptionOutput.print(try vault.list(), format: format, cyl: cyl, wide: wide, emptyMessage: options.identity == nil
                    ? "rxvault: the vault holds no prescriptions yet; add one with 'rxvault add glasses|contacts'"
                    : "rxvault: no prescriptions are shared with this identity")
                warnIfNotLogged(vault)
            }
        }
    }

    struct Query: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Find prescriptions by patient, kind, dates, brand, prescriber or lens values.",
            discussion: flowing("""
            Filters combine (all must match). With --identity, only the identity's grants are searched.

            Examples:
              rxvault query --expiring-within 60d
              rxvault query --patient sam --kind contacts --latest
              rxvault query --valid-on 2026-12-01 --format json
              rxvault query --sphere-max -6 --add --sort expires
            """))

        @OptionGroup var filters: FilterOptions
        @Option(help: "Output format (ndjson: one JSON object per line).") var format: OutputFormat = .table
        @Option(help: "Print cylinders in minus- or plus-cyl form (default: as written).") var cyl: CylinderForm?
        @Flag(help: "Show every cell whole, however wide the terminal (names are otherwise cut with … to fit).") var wide = false
        @OptionGroup var options: VaultOptions

        func run() throws {
            try CommandRunner.run(json: format == .json || format == .ndjson) {
                let filter = try filters.filter()
                let vault = try options.openReader()
                try PrescriptionOutput.print(try vault.query(filter), format: format, cyl: cyl, wide: wide,
                                             emptyMessage: "rxvault: no prescriptions match", keepOrder: true)
                warnIfNotLogged(vault)
            }
        }
    }
}

/// Printing a set of prescriptions in any of the list formats.
enum PrescriptionOutput {
    static func print(_ records: [PrescriptionRecord], format: OutputFormat, cyl: CylinderForm?, wide: Bool = false,
                      emptyMessage: String, keepOrder: Bool = false) throws {
        let today = try Environment.clock().today()
        let views = records.map { PrescriptionView(record: $0, today: today, cylinderForm: cyl) }
        switch format {
        case .table:
            guard !views.isEmpty else { Terminal.err(emptyMessage); return }
            let short = PrescriptionID.shortForms(records.map(\.id))
            Terminal.out(Table.render(headers: PrescriptionText.listHeaders,
                                      rows: views.map { PrescriptionText.listRow($0, shortID: short[$0.record.id]!) },
                                      tones: views.map { PrescriptionText.tone($0.status) }, tinted: PrescriptionText.listTinted,
                                      shrinkable: PrescriptionText.listShrinkable, style: .forStandardOutput(wide: wide)))
        case .json:
            let list = PrescriptionListJSON(prescriptions: views.map(PrescriptionJSON.init))
            Terminal.out(list.text())
        case .ndjson:
            if !views.isEmpty { Terminal.out(views.map { PrescriptionJSON(view: $0).text(pretty: false) }.joined(separator: "\n")) }
        case .csv:
            Terminal.out(([PrescriptionCSV.headers] + views.flatMap(PrescriptionCSV.rows)).map(CSV.line).joined(separator: "\n"))
        }
    }
}

extension RxVaultCommand {
    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show one prescription with a row per eye.",
            discussion: flowing("""
            SE is the spherical equivalent (sphere + cylinder / 2).

            --at-cornea (glasses) adds the power at the cornea per principal meridian, for eyes
            stronger than 4 D, at the written vertex distance (12 mm assumed when none is written),
            as a calculation, not a contact-lens prescription or fitting.
            """))

        @Argument(help: "The prescription's id (any unique prefix).", completion: .custom(Completion.prescriptionIDs)) var id: String
        @Option(help: "Show this version instead of the newest ('rxvault history' lists them).") var version: Int?
        @Option(help: "Output format.") var format: DocumentFormat = .table
        @Option(help: "Print cylinders in minus- or plus-cyl form (default: as written).") var cyl: CylinderForm?
        @Flag(name: .customLong("at-cornea"),
              help: "Also print the power at the cornea of a glasses prescription (a calculation, not a contact-lens fitting).")
        var atCornea = false
        @OptionGroup var options: VaultOptions


        func run() throws {
            try CommandRunner.run(json: format == .json) {
                let vault = try options.openReader()
                let record = try vault.prescription(try vault.resolve(id), version: version)
                warnIfNotLogged(vault)
                let view = PrescriptionView(record: record, today: try Environment.clock().today(), cylinderForm: cyl)
                if atCornea && record.prescription.kind != .glasses {
                    throw CLIError(.usage, "--at-cornea applies to glasses prescriptions",
                                   hint: "a contact-lens prescription already gives the power at the cornea")
                }
                let cornea = atCornea ? CorneaPower(view) : nil
                switch format {
                case .json:
                    var value = PrescriptionJSON(view: view).value
                    if let cornea, case .object(var pairs) = value {
                        pairs.append(("atCornea", cornea.json))
                        value = .object(pairs)
                    }
                    Terminal.out(value.write(pretty: true))
                default:
                    Terminal.out(PrescriptionText.detail(view, shortID: record.id.short) + (cornea.map { "\n\n" + $0.text } ?? ""))
                }
            }
        }
    }

    struct History: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List every version of a prescription, oldest first.",
            discussion: flowing("""
            CHANGE names what each version changed since the one before, with old and new
            values ("OS sphere -2.00 → -2.25; note"); --format json gives them as "changes".
            """))

        @Argument(help: "The prescription's id (any unique prefix).", completion: .custom(Completion.prescriptionIDs)) var id: String
        @Option(help: "Output format.") var format: DocumentFormat = .table
        @OptionGroup var options: VaultOptions


        func run() throws {
            try CommandRunner.run(json: format == .json) {
                let vault = try options.openVault(command: "history")
                let records = try vault.history(try vault.resolve(id))
                let today = try Environment.clock().today()
                let views = records.map { PrescriptionView(record: $0, today: today, cylinderForm: nil) }
                // What each version changed, by comparing it with the one before (RxModel).
                let changes = records.indices.map { i in
                    i == 0 ? [] : records[i].prescription.changes(since: records[i - 1].prescription)
                }
                switch format {
                case .json:
                    Terminal.out(PrescriptionListJSON(history: views, changes: changes).text())
                default:
                    Terminal.out(Table.render(
                        headers: ["VERSION", "RECORDED", "ISSUED", "EXPIRES", "OD", "OS", "CHANGE"],
                        rows: zip(views, changes).map { v, changes in
                            [String(v.record.version), v.record.recorded, v.prescription.issued.description,
                             v.prescription.expires?.description ?? "-", v.notation(.right), v.notation(.left),
                             Self.changeText(v.record, changes)]
                        }))
                }
            }
        }

        /// `added`, the fields changed (`OS sphere -2.00 → -2.25; note`), or why a version with
        /// no change of content exists (`re-keyed: access revoked`).
        static func changeText(_ record: PrescriptionRecord, _ changes: [FieldChange]) -> String {
            if record.version == 1 { return "added" }
            let fields = changes.map(\.description).joined(separator: "; ")
            switch (fields.isEmpty, record.change) {
            case (false, let reason?): return "\(reason); \(fields)"
            case (false, nil): return fields
            case (true, let reason?): return reason
            case (true, nil): return "no change"
            }
        }
    }

    struct Remove: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Delete a prescription and all its versions.",
            discussion: flowing("""
            The content is overwritten in the file and its write-ahead log, not just unlinked.
            Asks for confirmation on a terminal; scripts pass --yes.
            """))

        @Argument(help: "The prescription's id (any unique prefix).", completion: .custom(Completion.prescriptionIDs)) var id: String
        @Flag(name: [.customShort("y"), .long], help: "Do not ask for confirmation.") var yes = false
        @OptionGroup var options: VaultOptions

        func run() throws {
            try CommandRunner.run {
                let confirmation = Confirmation(yes: yes, noInput: options.noInput, command: "remove", verb: "remove")
                let vault = try options.openVault(command: "remove")
                let prescriptionID = try vault.resolve(id)
                try confirmation.require({
                    let record = try vault.prescription(prescriptionID)
                    let rx = record.prescription
                    return "Remove the \(rx.kind.rawValue) prescription \(prescriptionID.short) of \(rx.patient.name), issued \(rx.issued), with all \(record.version) version(s)?"
                }())
                try vault.remove(prescriptionID)
                warnIfNotPurged(vault)
                Terminal.out("removed \(prescriptionID.short)")
            }
        }
    }
}

/// Tells the owner when deleted content could not yet be purged from the write-ahead log.
func warnIfNotPurged(_ vault: Vault) {
    if vault.purgeFailed {
        Terminal.warning("another rxvault process was reading: the deleted content stays in the write-ahead log until the next write (run 'rxvault check' when the others are done)")
    }
}

/// Tells a client whose read could not be recorded (a read-only copy of the vault, or an audit
/// log that does not read: then what is wrong with it).
func warnIfNotLogged(_ reader: any VaultReader) {
    guard let failure = reader.readLogFailure else { return }
    if case .integrity = failure {
        Terminal.warning("this read could not be recorded in the vault's audit log: \(failure.description)")
    } else {
        Terminal.warning("this read could not be recorded in the vault's audit log (is the vault file read-only?)")
    }
}
