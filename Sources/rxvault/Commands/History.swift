import ArgumentParser
import Foundation
import RxModel
import RxVault

extension RxVaultCommand {
    struct History: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "history",
            abstract: "List every version of a prescription, oldest first.",
            discussion: flowing(
                """
                CHANGE names what each version changed since the one before, with old and new
                values ("OS sphere -2.00 → -2.25; note"); --format json gives them as "changes".
                """))

        @Argument(help: "The prescription's id (any unique prefix).", completion: .custom(Completion.prescriptionIDs))
        var id: String
        @Option(help: "Output format.") var format: DocumentFormat = .table
        @Flag(
            help:
                "One line per row, however narrow the terminal (otherwise columns that do not fit go on lines beneath each row)."
        )
        var wide = false
        @OptionGroup var options: VaultOptions

        func run() throws {
            try CommandRunner.run(json: format == .json) {
                let vault = try options.openVault(command: "history")
                let records = try vault.history(try vault.resolve(id))
                let today = try Environment.clock().today()
                let validity = try vault.assumedValidity()
                // In conflict is the prescription's state: only its newest version is marked.
                let views = records.enumerated().map { i, record in
                    PrescriptionView(
                        record: record, today: today, cylinderForm: nil, assumedValidity: validity,
                        inConflict: i == records.count - 1 && record.isInConflict)
                }
                // What each version changed, by comparing it with the one before (RxModel).
                let changes = records.indices.map { i in
                    i == 0 ? [] : records[i].prescription.changes(since: records[i - 1].prescription)
                }
                switch format {
                case .json:
                    Terminal.out(PrescriptionListJSON(history: views, changes: changes).text())
                default:
                    Terminal.out(
                        Table.render(
                            headers: ["VERSION", "RECORDED", "ISSUED", "EXPIRES", "OD", "OS", "CHANGE"],
                            rows: zip(views, changes).map { v, changes in
                                [
                                    String(v.record.version), v.record.recorded, v.prescription.issued.description,
                                    v.prescription.expires?.description ?? "-", v.notation(.right), v.notation(.left),
                                    Self.changeText(v.record, changes) + (v.isInConflict ? " (in conflict)" : "")
                                ]
                            },
                            overflow: [.init(columns: [4, 5], stacked: true), .init(columns: [6]), .init(columns: [1])],
                            style: .forStandardOutput(wide: wide)))
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
}
