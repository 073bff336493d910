import ArgumentParser
import Foundation
import RxModel
import RxVault

extension RxVaultCommand {
    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "list",
            abstract: "List the prescriptions, newest issue date first.",
            discussion: flowing(
                """
                STATUS is valid, expiring (within 60 days) or expired, as of today; no expiry written
                (issued DATE) for one with no expiry date issued more than two years ago, or no expiry
                written (assumed to DATE) when the vault assumes a validity for its kind ('rxvault
                config set assumed-validity glasses=2y') or its import assumed one; superseded
                when a newer prescription of the same kind for the same patient replaces it; or the
                FHIR status of a withdrawn one (cancelled, draft, entered-in-error).
                --format json prints {"schema": "rxvault/prescriptions/v1", "prescriptions": [...]};
                --format csv prints one row per prescription and eye (docs/format.md).
                """))

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
                let vault = try options.openReader()
                let records = try vault.list()
                try PrescriptionOutput.print(
                    records, format: format, cyl: cyl, wide: wide,
                    emptyMessage: options.identity == nil
                        ? "rxvault: the vault holds no prescriptions yet; add one with 'rxvault add glasses|contacts'"
                        : "rxvault: no prescriptions are shared with this identity",
                    superseded: try vault.supersession(of: records), assumedValidity: try vault.assumedValidity())
                warnIfNotLogged(vault)
            }
        }
    }
}
