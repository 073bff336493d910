import ArgumentParser
import Foundation
import RxModel
import RxVault

extension RxVaultCommand {
    struct Patients: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "patients",
            abstract: "List the patients with their prescriptions.",
            discussion: flowing(
                """
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
                    let validity = try vault.assumedValidity()
                    Terminal.out(
                        JSONValue.object([
                            ("patients", .array(patients.map { PatientOutput.json($0.0, $0.1, assuming: validity) })),
                            ("schema", .string("rxvault/patients/v1"))
                        ]).write(pretty: true))
                default:
                    guard !patients.isEmpty else {
                        Terminal.err("rxvault: the vault holds no patients yet; 'rxvault add' creates them")
                        return
                    }
                    let short = PatientID.shortForms(patients.map(\.0.id))
                    Terminal.out(
                        Table.render(
                            headers: ["ID", "NAME", "BORN", "PRESCRIPTIONS"],
                            rows: patients.map { patient, records in
                                [
                                    short[patient.id]!, patient.name, patient.birthDate?.description ?? "-",
                                    records.isEmpty
                                        ? "-"
                                        : records.map { "\($0.id.short) \($0.prescription.kind.rawValue)" }.joined(
                                            separator: ", ")
                                ]
                            }))
                }
            }
        }
    }
}
