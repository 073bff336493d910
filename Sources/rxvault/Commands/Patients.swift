import ArgumentParser
import Foundation
import RxModel
import RxVault

/// Which patient record `add --patient` means (README, "Patients").
enum PatientChoice {
    /// Before `add`: the patient the name stands for. One match (ignoring case and white space, no
    /// differing birth date): the vault links it. None: an id prefix, if the text is one, else the
    /// vault creates a record. Two or more: asks on a terminal which one, else refuses listing them.
    static func choose(for rx: inout Prescription, in vault: Vault, noInput: Bool) throws {
        guard vault.header.formatVersion >= 4 else { return }
        let matches = try vault.matchingPatients(rx.patient)
        if matches.isEmpty {
            if let byID = try? vault.resolvePatient(rx.patient.name), PatientName.key(byID.name) != PatientName.key(rx.patient.name) {
                rx.patient = byID.patient
            }
            return
        }
        guard matches.count > 1 else { return }
        let listing = matches.map(\.line)
        guard !noInput, Terminal.canAsk else {
            throw VaultError.ambiguousPatient("patient '\(rx.patient.name)'", candidates: listing)
        }
        Terminal.err("rxvault: '\(rx.patient.name)' matches \(matches.count) patients:\n  " + listing.joined(separator: "\n  "))
        guard let answer = Terminal.ask("Which one? Its id (empty to cancel): "), !answer.isEmpty else {
            throw CLIError(.cancelled, "no patient chosen: nothing was written")
        }
        let picked = matches.filter { $0.id.hex.hasPrefix(answer.lowercased()) }
        guard picked.count == 1 else { throw CLIError(.usage, "'\(answer)' is not one of the ids listed", hint: "nothing was written") }
        rx.patient = picked[0].patient
    }

    /// What the write did to patient records on its own ("new patient ..."), on stderr.
    static func sayNotes(_ vault: Vault) {
        for note in vault.patientNotes { Terminal.err("rxvault: \(note)") }
    }
}

extension RxVaultCommand {
    struct Patients: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List the patients with their prescriptions.",
            discussion: flowing("""
            Each patient is a record of the vault: prescriptions name it, so renaming it renames
            it everywhere. --format json prints {"schema": "rxvault/patients/v1", "patients": [...]}.

            Examples:
              rxvault patients
              rxvault patient show "Sam Rivera"
            """))

        @Option(help: "Output format.") var format: DocumentFormat = .table
        @OptionGroup var options: VaultOptions

        func run() throws {
            try CommandRunner.run(json: format == .json) {
                try options.requireOwner("patients")
                let vault = try options.openVault(command: "patients")
                let patients = try vault.patients()
                switch format {
                case .json:
                    Terminal.out(JSONValue.object([
                        ("patients", .array(patients.map { PatientOutput.json($0.0, $0.1) })),
                        ("schema", .string("rxvault/patients/v1")),
                    ]).write(pretty: true))
                default:
                    guard !patients.isEmpty else {
                        Terminal.err("rxvault: the vault holds no patients yet; 'rxvault add' creates them")
                        return
                    }
                    let short = PatientID.shortForms(patients.map(\.0.id))
                    Terminal.out(Table.render(headers: ["ID", "NAME", "BORN", "PRESCRIPTIONS"], rows: patients.map { patient, records in
                        [short[patient.id]!, patient.name, patient.birthDate?.description ?? "-",
                         records.isEmpty ? "-" : records.map { "\($0.id.short) \($0.prescription.kind.rawValue)" }.joined(separator: ", ")]
                    }))
                }
            }
        }
    }

    struct PatientCommand: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "patient",
            abstract: "Show, rename or merge a patient.",
            discussion: flowing("""
            PATIENT is the patient's name (case and spacing do not matter) or id prefix, as
            'rxvault patients' shows them.

            Examples:
              rxvault patient show "Sam Rivera"
              rxvault patient rename "sam rivera" "Samuel Rivera" --dob 1984-05-12
              rxvault patient merge 3f9a2c1e 7c41d0aa
            """),
            subcommands: [Show.self, Rename.self, Merge.self])

        struct Show: ParsableCommand {
            static let configuration = CommandConfiguration(abstract: "Show a patient and their prescriptions.")

            @Argument(help: "The patient's name or id prefix.") var patient: String
            @Option(help: "Output format.") var format: DocumentFormat = .table
            @OptionGroup var options: VaultOptions

            func run() throws {
                try CommandRunner.run(json: format == .json) {
                    try options.requireOwner("patient show")
                    let vault = try options.openVault(command: "patient show")
                    let summary = try vault.resolvePatient(patient)
                    let records = try vault.patients().first { $0.0.id == summary.id }?.1 ?? []
                    switch format {
                    case .json: Terminal.out(PatientOutput.json(summary, records).write(pretty: true))
                    default:
                        var pairs = [("patient", summary.id.hex), ("name", summary.name), ("born", summary.birthDate?.description ?? "-")]
                        if !summary.merged.isEmpty { pairs.append(("merged", summary.merged.map { String($0.prefix(8)) }.joined(separator: ", "))) }
                        Terminal.out(Table.keyValue(pairs))
                        guard !records.isEmpty else { Terminal.out("\nno prescriptions"); return }
                        let today = try Environment.clock().today()
                        let views = records.map { PrescriptionView(record: $0, today: today, cylinderForm: nil) }
                        let short = PrescriptionID.shortForms(records.map(\.id))
                        Terminal.out("\n" + Table.render(headers: PrescriptionText.listHeaders,
                                                         rows: views.map { PrescriptionText.listRow($0, shortID: short[$0.record.id]!) }))
                    }
                }
            }
        }

        struct Rename: ParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Rename a patient, or set or remove their date of birth.",
                discussion: flowing("""
                Every prescription of the patient shows the new values at once (clients with a
                grant see them too); the prescriptions themselves are not changed.
                """))

            @Argument(help: "The patient's name or id prefix.") var patient: String
            @Argument(help: "The new name (leave out to change only the date of birth).") var newName: String?
            @Option(help: "Set the date of birth (YYYY-MM-DD).") var dob: String?
            @Flag(name: .customLong("no-dob"), help: "Remove the date of birth.") var noDOB = false
            @OptionGroup var options: VaultOptions

            func run() throws {
                try CommandRunner.run {
                    try options.requireOwner("patient rename")
                    guard newName != nil || dob != nil || noDOB else {
                        throw CLIError(.usage, "nothing to change", hint: "give a new name, --dob DATE or --no-dob")
                    }
                    guard dob == nil || !noDOB else { throw CLIError(.usage, "--dob and --no-dob contradict each other") }
                    var birthDate: CalendarDate??
                    if let dob {
                        guard let day = CalendarDate(iso: dob) else {
                            throw CLIError(.invalidInput, "date of birth '\(dob)': \(CalendarDate.problem(iso: dob) ?? "not a date (YYYY-MM-DD)")")
                        }
                        birthDate = .some(day)
                    } else if noDOB {
                        birthDate = .some(nil)
                    }
                    let vault = try options.openVault(command: "patient rename")
                    let summary = try vault.resolvePatient(patient)
                    let updated = try vault.updatePatient(summary.id, name: newName, birthDate: birthDate)
                    Terminal.out(updated.line)
                }
            }
        }

        struct Merge: ParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Merge patient B into patient A: B's prescriptions become A's.",
                discussion: flowing("""
                For one person recorded twice (a typo, a missing date of birth). A keeps its name
                and takes B's date of birth if it had none; B's record goes (its id still finds A
                in older versions of the prescriptions). Asks for confirmation on a terminal;
                scripts pass --yes.
                """))

            @Argument(help: "The patient to keep (name or id prefix).") var into: String
            @Argument(help: "The patient to merge into it (name or id prefix).") var from: String
            @Flag(name: [.customShort("y"), .long], help: "Do not ask for confirmation.") var yes = false
            @OptionGroup var options: VaultOptions

            func run() throws {
                try CommandRunner.run {
                    try options.requireOwner("patient merge")
                    let confirmation = Confirmation(yes: yes, noInput: options.noInput, command: "patient merge", verb: "merge")
                    let vault = try options.openVault(command: "patient merge")
                    let target = try vault.resolvePatient(into)
                    let source = try vault.resolvePatient(from)
                    guard target.id != source.id else { throw CLIError(.usage, "'\(into)' and '\(from)' are the same patient (\(target.line))") }
                    try confirmation.require({
                        let count = try vault.patients().first { $0.0.id == source.id }?.1.count ?? 0
                        return "Merge \(source.line) (\(count) prescription(s)) into \(target.line)?"
                    }())
                    let (merged, moved) = try vault.mergePatients(source.id, into: target.id)
                    Terminal.out("merged \(source.id.short) into \(merged.line): \(moved) prescription(s) moved")
                }
            }
        }
    }
}

enum PatientOutput {
    static func json(_ patient: PatientSummary, _ records: [PrescriptionRecord]) -> JSONValue {
        var pairs: [(String, JSONValue)] = [("id", .string(patient.id.hex)), ("name", .string(patient.name))]
        if let dob = patient.birthDate { pairs.append(("birthDate", .string(dob.description))) }
        if !patient.merged.isEmpty { pairs.append(("merged", .array(patient.merged.map { .string($0) }))) }
        pairs.append(("prescriptions", .array(records.map { record in
            .object([("id", .string(record.id.hex)), ("kind", .string(record.prescription.kind.rawValue)),
                     ("issued", .string(record.prescription.issued.description))] +
                    (record.prescription.expires.map { [("expires", JSONValue.string($0.description))] } ?? []))
        })))
        return .object(pairs)
    }
}
