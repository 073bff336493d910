import ArgumentParser
import RxModel
import RxVault

extension RxVaultCommand {
    struct Add: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "add",
            abstract: "Add a glasses or contacts prescription.",
            discussion: flowing(
                """
                Give each eye in the notation on the paper (--od, --os) or field by field
                (--od-sphere, --od-cyl, --od-axis, --od-add, --od-prism, --od-vertex, --od-bc, --od-dia,
                --od-brand and the same with --os-). Either eye may be left out, not both.
                Prints the new prescription's id.

                Examples:
                  rxvault add glasses --patient "Sam Doe" --prescriber "Dr A. Lee" \\
                      --issued 2026-03-01 --expires 2028-03-01 --pd 63 \\
                      --od "-2.25 -0.75 x180 add +2.00" --os "-2.00 -0.50 x170 add +2.00"
                  rxvault add contacts --patient "Sam Doe" --prescriber "Dr A. Lee" \\
                      --issued 2026-03-01 --expires 2027-03-01 --brand "Acuvue Oasys" \\
                      --od "-3.00 bc 8.6 dia 14.2" --os "-2.75 bc 8.6 dia 14.2"
                  rxvault add contacts --patient "Sam Doe" --prescriber "Dr A. Lee" \\
                      --issued 2026-03-01 --expires 2027-03-01 --lens-type rgp \\
                      --brand "Boston XO" --od "-4.50 bc 7.45 dia 9.6" \\
                      --os "-4.25 bc 7.5 dia 9.6"

                Multifocal contacts: "add +1.50 D", "add HIGH N" (LOW/MED/HIGH, D/N as written).
                A balance lens for one eye of glasses: --os BAL.

                A --patient name close to an existing patient's (a typo, another order, accents)
                asks "did you mean ...?" on a terminal; without one it is refused (exit 64) unless
                --new-patient says a new patient is meant.
                """))

        @Argument(help: "glasses or contacts.") var kind: PrescriptionKind
        @OptionGroup var fields: PrescriptionOptions
        @Flag(help: "Make a new patient even when the name is close to an existing one's.") var newPatient = false
        @OptionGroup var options: VaultOptions

        func run() throws {
            try CommandRunner.run {
                try options.requireOwner("add")
                let missing = [
                    ("--patient", fields.patient), ("--prescriber", fields.prescriber), ("--issued", fields.issued)
                ]
                .filter { $0.1 == nil }.map(\.0)
                guard missing.isEmpty else {
                    throw CLIError(
                        .usage, "missing \(missing.joined(separator: ", "))", hint: "see 'rxvault add --help'")
                }
                // Build (and so read every value) before asking for the passphrase.
                var rx = Prescription(
                    kind: kind, patient: Patient(name: ""), prescriber: Prescriber(name: ""),
                    issued: CalendarDate(year: 2000, month: 1, day: 1)!)
                try PrescriptionBuilder(options: fields).apply(to: &rx)
                let vault = try options.openVault(command: "add")
                try PatientChoice.choose(for: &rx, in: vault, noInput: options.noInput, newPatient: newPatient)
                let (record, advisories) = try vault.add(rx)
                PatientChoice.sayNotes(vault)
                advisories.forEach(Terminal.warning)
                Terminal.out(record.id.short)
            }
        }
    }
}
