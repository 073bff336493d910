import ArgumentParser
import Foundation
import RxModel
import RxVault

extension RxVaultCommand {
    struct Conflicts: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "conflicts",
            abstract: "List the prescriptions both copies of the vault changed, their edits side by side.",
            discussion: flowing(
                """
                A merge ('rxvault merge') that finds a prescription edited in both copies keeps
                both edits in its history and reads it as the newer one until resolved. Each is
                listed with the edits it chose between: both eyes, dates, and which computer
                (replica) wrote each, when. 'rxvault resolve ID --keep VERSION' ends it.

                Examples:
                  rxvault conflicts
                  rxvault conflicts --format json
                """))

        @Option(help: "Output format.") var format: DocumentFormat = .table
        @OptionGroup var options: VaultOptions

        func run() throws {
            try CommandRunner.run(json: format == .json) {
                let vault = try options.openVault(command: "conflicts")
                let found = try vault.conflicts()
                let today = try Environment.clock().today()
                let validity = try vault.assumedValidity()
                func view(_ record: PrescriptionRecord) -> PrescriptionView {
                    PrescriptionView(record: record, today: today, cylinderForm: nil, assumedValidity: validity)
                }
                if format == .json {
                    let items: [[String: Any]] = found.map { conflict in
                        [
                            "id": conflict.id.hex, "currentVersion": conflict.current.version,
                            "versions": conflict.competing.map { record -> [String: Any] in
                                let v = view(record)
                                return [
                                    "version": record.version, "recorded": record.recorded,
                                    "writtenBy": record.by?.replica.hex ?? NSNull(),
                                    "issued": v.prescription.issued.description,
                                    "expires": v.prescription.expires?.description ?? NSNull(),
                                    "od": v.notation(.right), "os": v.notation(.left)
                                ]
                            }
                        ]
                    }
                    Terminal.out(try jsonText(["schema": "rxvault/conflicts/v1", "conflicts": items]))
                    return
                }
                guard !found.isEmpty else {
                    Terminal.out("no prescription is in conflict")
                    return
                }
                var rows: [[String]] = []
                for conflict in found {
                    for record in conflict.competing + [conflict.current] {
                        let v = view(record)
                        let role = record.version == conflict.current.version ? "reads as" : "edit"
                        rows.append([
                            conflict.id.short, String(record.version), role, record.by?.replica.short ?? "-",
                            record.recorded, v.prescription.issued.description,
                            v.prescription.expires?.description ?? "-", v.notation(.right), v.notation(.left)
                        ])
                    }
                }
                Terminal.out(
                    Table.render(
                        headers: ["ID", "VERSION", "", "WRITTEN BY", "RECORDED", "ISSUED", "EXPIRES", "OD", "OS"],
                        rows: rows, overflow: [.init(columns: [7, 8], stacked: true), .init(columns: [4])],
                        style: .forStandardOutput(wide: false)))
                Terminal.err("rxvault: resolve each with 'rxvault resolve ID --keep VERSION' (or mine, theirs, newest)")
            }
        }
    }

    struct Resolve: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "resolve",
            abstract: "End a prescription's conflict by keeping one of the competing edits.",
            discussion: flowing(
                """
                Writes a new version holding the kept edit, on top of the merge's version, so
                every copy that merges this one sees the conflict ended. --keep takes a version
                number from 'rxvault conflicts', or: mine (the edit made on this computer),
                theirs (the other copy's), newest (what the merge already shows).

                Examples:
                  rxvault resolve 3f9a --keep 4
                  rxvault resolve 3f9a --keep mine
                """))

        @Argument(help: "The prescription's id (any unique prefix).", completion: .custom(Completion.prescriptionIDs))
        var id: String
        @Option(help: ArgumentHelp("A version number, or mine, theirs or newest.", valueName: "version"))
        var keep: String
        @OptionGroup var options: VaultOptions

        func run() throws {
            try CommandRunner.run(json: false) {
                let choice: ConflictChoice
                switch keep.lowercased() {
                case "mine": choice = .mine
                case "theirs": choice = .theirs
                case "newest": choice = .newest
                default:
                    guard let number = Int(keep), number > 0 else {
                        throw ValidationError("--keep: a version number, or mine, theirs or newest")
                    }
                    choice = .version(number)
                }
                let vault = try options.openVault(command: "resolve")
                let record = try vault.resolve(try vault.resolve(id), keeping: choice)
                Terminal.out("\(record.id.short) version \(record.version): \(record.change ?? "resolved")")
            }
        }
    }
}
