import ArgumentParser
import Foundation
import RxModel
import RxVault

extension RxVaultCommand {
    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "show",
            abstract: "Show one prescription with a row per eye.",
            discussion: flowing(
                """
                SE is the spherical equivalent (sphere + cylinder / 2).

                --at-cornea (glasses) adds the power at the cornea per principal meridian, for eyes
                stronger than 4 D, at the written vertex distance (12 mm assumed when none is written),
                as a calculation, not a contact-lens prescription or fitting.
                """))

        @Argument(help: "The prescription's id (any unique prefix).", completion: .custom(Completion.prescriptionIDs))
        var id: String
        @Option(help: "Show this version instead of the newest ('rxvault history' lists them).") var version: Int?
        @Option(help: "Output format.") var format: DocumentFormat = .table
        @Option(help: "Print cylinders in minus- or plus-cyl form (default: as written).") var cyl: CylinderForm?
        @Flag(
            name: .customLong("at-cornea"),
            help:
                "Also print the power at the cornea of a glasses prescription (a calculation, not a contact-lens fitting)."
        )
        var atCornea = false
        @OptionGroup var options: VaultOptions

        func run() throws {
            try CommandRunner.run(json: format == .json) {
                let vault = try options.openReader()
                let record = try vault.prescription(try vault.resolve(id), version: version)
                warnIfNotLogged(vault)
                let view = PrescriptionView(
                    record: record, today: try Environment.clock().today(), cylinderForm: cyl,
                    supersededBy: try vault.supersession(of: [record])[record.id],
                    assumedValidity: try vault.assumedValidity())
                if atCornea && record.prescription.kind != .glasses {
                    throw CLIError(
                        .usage, "--at-cornea applies to glasses prescriptions",
                        hint: "a contact-lens prescription already gives the power at the cornea")
                }
                let cornea = atCornea ? CorneaPower(view) : nil
                switch format {
                case .json:
                    var value = PrescriptionJSON(view: view).value
                    if case .object(var pairs) = value {
                        // The id a client app's requests name it by (VisionPrescription/<apiID>), as `grants` gives it.
                        let apiID = FHIR.prescriptionResourceID(record.id)
                        pairs.insert(("apiID", .string(apiID)), at: min(1, pairs.count))
                        if let cornea { pairs.append(("atCornea", cornea.json)) }
                        value = .object(pairs)
                    }
                    Terminal.out(value.write(pretty: true))
                default:
                    Terminal.out(
                        PrescriptionText.detail(view, shortID: record.id.short)
                            + (cornea.map { "\n\n" + $0.text } ?? ""))
                }
            }
        }
    }
}
