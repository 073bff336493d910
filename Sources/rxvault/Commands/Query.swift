import ArgumentParser
import Foundation
import RxModel
import RxVault

extension RxVaultCommand {
    struct Query: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "query",
            abstract: "Find prescriptions by patient, kind, dates, brand, prescriber or lens values.",
            discussion: flowing(
                """
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
        @Flag(
            help:
                "One line per row, however narrow the terminal (otherwise columns that do not fit go on lines beneath each row)."
        )
        var wide = false
        @OptionGroup var options: VaultOptions

        func run() throws {
            try CommandRunner.run(json: format == .json || format == .ndjson) {
                let filter = try filters.filter()
                let vault = try options.openReader()
                let records = try vault.query(filter)
                try PrescriptionOutput.print(
                    records, format: format, cyl: cyl, wide: wide,
                    emptyMessage: "rxvault: no prescriptions match", keepOrder: true,
                    superseded: try vault.supersession(of: records), assumedValidity: try vault.assumedValidity())
                warnIfNotLogged(vault)
            }
        }
    }
}
