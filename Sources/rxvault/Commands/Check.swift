import ArgumentParser
import Foundation
import RxVault

extension RxVaultCommand {
    struct Check: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "check",
            abstract: "Check the vault's integrity: structure, every record, attachments, grants, the audit log.",
            discussion:
                "Exits 0 when everything verifies, 76 when anything does not. --read-data also decrypts every attachment chunk."
        )

        @Flag(help: "Also read and verify every attachment's content.") var readData = false
        @Flag(
            help:
                "First rewrite search-index entries that differ from their records at the same version, or that an earlier rxvault wrote without the status."
        ) var repairIndex = false
        @Option(help: "Output format.") var format: DocumentFormat = .table
        @Flag(
            help:
                "Accept this vault as the newest state (after putting an older copy back on purpose): this computer forgets the newer write it saw, and changes are allowed again."
        ) var acceptRollback = false
        @Flag(
            help:
                "Accept this vault as it is when it is another line of history than the one this computer saw (a fork): it goes on from this state, and the writes it lacks stay only in the copies that hold them."
        ) var acceptFork = false
        @OptionGroup var options: VaultOptions

        func run() throws {
            try CommandRunner.run(json: format == .json) {
                ConflictCopyNotice.namedInOutput()
                let copies = ConflictCopyNotice.copies(besideVaultAt: options.vaultPath)
                let vault: Vault
                do {
                    vault = try options.openVault(command: "check")
                } catch VaultError.integrity(let why) {
                    // A header or key slot that does not read keeps the vault shut: that is check's
                    // finding, reported as the others are, with the same exit code.
                    let stage = Vault.CheckReport.Stage(
                        name: "vault header and key slots", checked: 1,
                        errors: [VaultError.integrity(why).description], notes: [])
                    try show(Vault.CheckReport(stages: [stage]), copies: copies)
                    throw CLIError(
                        .integrity, "the vault has integrity errors (listed above)",
                        hint: "restore it from a backup; do not keep writing to a damaged vault")
                }
                if acceptRollback, !acceptFork, vault.rollback?.isFork == true {
                    throw CLIError(
                        .usage, "this vault is not an older copy but another line of history (a fork)",
                        hint:
                            "'rxvault check --accept-fork' goes on from it; the writes it lacks stay only in the copies that hold them"
                    )
                }
                if acceptRollback || acceptFork {
                    try vault.acceptCurrentState()
                    Terminal.err(
                        "rxvault: recorded write \(try vault.writeCounter()) of this vault as the newest this computer has seen"
                    )
                }
                if repairIndex {
                    let repaired = try vault.repairIndex()
                    Terminal.err(
                        "rxvault: repaired the search-index entries of \(repaired.count) prescription(s)\(repaired.isEmpty ? "" : ": " + repaired.map(\.short).joined(separator: ", "))"
                    )
                }
                let report = try vault.check(readData: readData)
                try show(report, copies: copies)
                if !report.isClean {
                    // Entries that differ from their authenticated records are derived data that
                    // --repair-index rewrites; anything else is damage a backup restores.
                    let errors = report.stages.flatMap(\.errors)
                    let indexOnly = errors.allSatisfy { $0.contains("search index:") && $0.contains("--repair-index") }
                    throw CLIError(
                        .integrity, "the vault has integrity errors (listed above)",
                        hint: indexOnly
                            ? "only search-index entries differ from their records: 'rxvault check --repair-index' rewrites them"
                            : "restore it from a backup; do not keep writing to a damaged vault")
                }
            }
        }

        /// Prints the report, with a last stage naming the conflict copies beside the vault when
        /// there are any: a finding, never an error (the exit status does not change for them).
        func show(_ report: Vault.CheckReport, copies: [ConflictCopy]) throws {
            var report = report
            if !copies.isEmpty {
                let notes = copies.map(ConflictCopyNotice.describe) + [ConflictCopyNotice.advice(count: copies.count)]
                report.stages.append(
                    .init(name: "conflict copies beside the vault", checked: copies.count, errors: [], notes: notes))
            }
            if format == .json {
                let stages: [[String: Any]] = report.stages.map {
                    ["stage": $0.name, "checked": $0.checked, "errors": $0.errors, "notes": $0.notes]
                }
                let named: [[String: Any]] = copies.map { copy in
                    var entry: [String: Any] = [
                        "path": copy.path, "name": copy.name, "form": copy.form.rawValue,
                        "modified": ConflictCopyNotice.isoTime(copy.modified)
                    ]
                    if let counter = copy.writeCounter { entry["writeCounter"] = counter }
                    return entry
                }
                Terminal.out(
                    try jsonText([
                        "schema": "rxvault/check/v1", "ok": report.isClean, "stages": stages, "conflictCopies": named
                    ]))
            } else {
                for stage in report.stages {
                    Terminal.out("\(stage.errors.isEmpty ? "ok  " : "FAIL") \(stage.name): \(stage.checked) checked")
                    for error in stage.errors { Terminal.out("     error: \(error)") }
                    for note in stage.notes { Terminal.out("     note: \(note)") }
                }
            }
        }
    }
}
