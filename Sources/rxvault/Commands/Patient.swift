import ArgumentParser
import Foundation
import RxModel
import RxVault

extension RxVaultCommand {
    struct PatientCommand: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "patient",
            abstract: "Show, rename, merge or remove a patient.",
            discussion: flowing(
                """
                PATIENT is the patient's name (case and spacing do not matter), part of it, or id
                prefix, as 'rxvault patients' shows them, matched as 'query --patient', 'trend' and
                'measurement add' match it: a whole name first, then a part of one. Two or more
                matches is an error listing them; a change made to a patient found by part of its
                name says on stderr which patient it was.

                Examples:
                  rxvault patient show "Sam Rivera"
                  rxvault patient rename "sam rivera" "Samuel Rivera" --dob 1984-05-12
                  rxvault patient merge 3f9a2c1e 7c41d0aa
                  rxvault patient remove 7c41d0aa
                """),
            subcommands: [Show.self, Rename.self, Merge.self, Remove.self])

        struct Show: ParsableCommand {
            static let configuration = CommandConfiguration(
                commandName: "show", abstract: "Show a patient and their prescriptions.",
                discussion: flowing(
                    """
                    PATIENT is matched as 'query --patient' matches: a name containing it (any
                    case; an equal name first), else an id prefix. Two or more patients matching is
                    an error listing them.
                    """))

            @Argument(help: "The patient's name, part of it, or id prefix.") var patient: String
            @Option(help: "Output format.") var format: DocumentFormat = .table
            @OptionGroup var options: VaultOptions

            func run() throws {
                try CommandRunner.run(json: format == .json) {
                    try options.requireOwner("patient show")
                    let vault = try options.openVault(command: "patient show")
                    let summary = try PatientArgument.find(patient, in: vault, writing: false)
                    let records = try vault.patients().first { $0.0.id == summary.id }?.1 ?? []
                    switch format {
                    case .json:
                        Terminal.out(
                            PatientOutput.json(summary, records, assuming: try vault.assumedValidity()).write(
                                pretty: true))
                    default:
                        var pairs = [
                            ("patient", summary.id.short), ("name", summary.name),
                            ("born", summary.birthDate?.description ?? "-")
                        ]
                        if !summary.merged.isEmpty {
                            pairs.append(
                                ("merged", summary.merged.map { String($0.prefix(8)) }.joined(separator: ", ")))
                        }
                        if !summary.measurements.isEmpty {
                            let last = summary.measurements.last!.date
                            pairs.append(
                                (
                                    "measurements",
                                    "\(summary.measurements.count), the last on \(last) ('rxvault measurement list')"
                                ))
                        }
                        Terminal.out(Table.keyValue(pairs))
                        guard !records.isEmpty else {
                            Terminal.out("\nno prescriptions")
                            return
                        }
                        let today = try Environment.clock().today()
                        let superseded = try vault.supersession(of: records)
                        let validity = try vault.assumedValidity()
                        let views = records.map {
                            PrescriptionView(
                                record: $0, today: today, cylinderForm: nil, supersededBy: superseded[$0.id],
                                assumedValidity: validity)
                        }
                        Terminal.out("\n" + PrescriptionText.listTable(views, style: .forStandardOutput(wide: false)))
                    }
                }
            }
        }

        struct Rename: ParsableCommand {
            static let configuration = CommandConfiguration(
                commandName: "rename",
                abstract: "Rename a patient, or set or remove their date of birth.",
                discussion: flowing(
                    """
                    Every prescription of the patient shows the new values at once (clients with a
                    grant see them too); the prescriptions themselves are not changed.
                    """))

            @Argument(help: "The patient's name, part of it, or id prefix.") var patient: String
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
                    guard dob == nil || !noDOB else {
                        throw CLIError(.usage, "--dob and --no-dob contradict each other")
                    }
                    var birthDate: CalendarDate??
                    if let dob {
                        guard let day = CalendarDate(iso: dob) else {
                            throw CLIError(
                                .invalidInput,
                                "date of birth '\(dob)': \(CalendarDate.problem(iso: dob) ?? "not a date (YYYY-MM-DD)")"
                            )
                        }
                        birthDate = .some(day)
                    } else if noDOB {
                        birthDate = .some(nil)
                    }
                    let vault = try options.openVault(command: "patient rename")
                    let summary = try PatientArgument.find(patient, in: vault, writing: true)
                    let updated = try vault.updatePatient(summary.id, name: newName, birthDate: birthDate)
                    Terminal.out(updated.line)
                }
            }
        }

        struct Merge: ParsableCommand {
            static let configuration = CommandConfiguration(
                commandName: "merge",
                abstract: "Merge patient B into patient A: B's prescriptions become A's.",
                discussion: flowing(
                    """
                    For one person recorded twice (a typo, a missing date of birth). A keeps its name
                    and takes B's date of birth if it had none; B's record goes (its id still finds A
                    in older versions of the prescriptions). Asks for confirmation on a terminal;
                    scripts pass --yes.
                    """))

            @Argument(help: "The patient to keep (name, part of it, or id prefix).") var into: String
            @Argument(help: "The patient to merge into it (name, part of it, or id prefix).") var from: String
            @Flag(name: [.customShort("y"), .long], help: "Do not ask for confirmation.") var yes = false
            @OptionGroup var options: VaultOptions

            func run() throws {
                try CommandRunner.run {
                    try options.requireOwner("patient merge")
                    let confirmation = Confirmation(
                        yes: yes, noInput: options.noInput, command: "patient merge", verb: "merge")
                    let vault = try options.openVault(command: "patient merge")
                    let target = try PatientArgument.find(into, in: vault, writing: true)
                    let source = try PatientArgument.find(from, in: vault, writing: true)
                    guard target.id != source.id else {
                        throw CLIError(.usage, "'\(into)' and '\(from)' are the same patient (\(target.line))")
                    }
                    try confirmation.require(
                        {
                            let count = try vault.patients().first { $0.0.id == source.id }?.1.count ?? 0
                            return "Merge \(source.line) (\(count) prescription(s)) into \(target.line)?"
                        }())
                    let (merged, moved) = try vault.mergePatients(source.id, into: target.id)
                    Terminal.out("merged \(source.id.short) into \(merged.line): \(moved) prescription(s) moved")
                }
            }
        }
        struct Remove: ParsableCommand {
            static let configuration = CommandConfiguration(
                commandName: "remove",
                abstract: "Remove a patient that has no prescriptions left.",
                discussion: flowing(
                    """
                    For a record left empty (a typo's patient whose prescriptions were merged or
                    moved away). A patient with prescriptions is refused (exit 65), saying how many
                    remain: remove them, or move them with 'patient merge' or 'edit --patient', first.
                    Asks for confirmation on a terminal; scripts pass --yes.
                    """))

            @Argument(help: "The patient's name, part of it, or id prefix.") var patient: String
            @Flag(name: [.customShort("y"), .long], help: "Do not ask for confirmation.") var yes = false
            @OptionGroup var options: VaultOptions

            func run() throws {
                try CommandRunner.run {
                    try options.requireOwner("patient remove")
                    let confirmation = Confirmation(
                        yes: yes, noInput: options.noInput, command: "patient remove", verb: "remove")
                    let vault = try options.openVault(command: "patient remove")
                    let summary = try PatientArgument.find(patient, in: vault, writing: true)
                    // Refused before asking when prescriptions remain: nothing to confirm then.
                    let count = try vault.patients().first { $0.0.id == summary.id }?.1.count ?? 0
                    if count > 0 {
                        throw CLIError(
                            .invalidInput,
                            "\(summary.line) still has \(count) prescription\(count == 1 ? "" : "s")",
                            hint:
                                "remove \(count == 1 ? "it" : "them") ('rxvault remove ID') or move \(count == 1 ? "it" : "them") to another patient ('rxvault patient merge', 'rxvault edit ID --patient NAME') first"
                        )
                    }
                    try confirmation.require("Remove the patient \(summary.line)?")
                    let removed = try vault.removePatient(summary.id)
                    Terminal.out("removed patient \(removed.line)")
                }
            }
        }
    }
}
