import ArgumentParser
import RxVault

extension RxVaultCommand {
    struct Merge: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "merge",
            abstract: "Bring in every change another copy of this vault holds and this one lacks.",
            discussion: flowing(
                """
                SOURCE is another copy of the same vault: a file (a sync tool's conflict copy,
                a copy from another computer), a backup ('.age', opened with this vault's key),
                or a postgres:// vault. It is verified whole first, as 'check' would. Every
                version either copy wrote is kept; a prescription both copies changed keeps
                both versions in its history, reads as the newest edit (an edit that withdrew
                it wins over the other), and is marked in conflict. A grant revoked or expired, a
                client removed, an attachment detached, a key slot removed or changed in either
                copy stays so: a merge never gives back what was taken away (it keeps the slot
                this command was opened with, and the last passphrase, and says so). Patients,
                clients, grants and key slots the other copy added come in, and settings it
                changed. Merging the same copy twice
                changes nothing the second time. The merge is one owner write (it is how a
                vault whose line of history forked is mended) and one audit entry.

                Refused, writing nothing: another vault's copy (65, both ids named), a damaged
                copy (76), a copy made by a newer rxvault (66).

                Examples:
                  rxvault merge "vault.sync-conflict-20261207-101500-ABCDEFG.rxv"
                  rxvault merge lap.rxv --vault postgres://rx@db.example/rx
                  rxvault merge backups/vault-2026-12-01.age --dry-run
                """))

        @Argument(help: ArgumentHelp("The other copy: a file, a backup or a postgres:// URL.", valueName: "source"))
        var source: String

        @Flag(help: "Say what would be brought in, and write nothing.") var dryRun = false
        @Option(help: "Output format.") var format: DocumentFormat = .table
        @OptionGroup var options: VaultOptions

        func run() throws {
            try CommandRunner.run(json: format == .json) {
                let vault = try options.openVault(command: "merge")
                let name = VaultLocation.isDatabase(source) ? "the database copy" : source
                let report = try vault.withCopy(at: source, named: name) { copy in
                    try vault.merge(from: copy, named: name, dryRun: dryRun)
                }
                if format == .json {
                    Terminal.out(try jsonText(Self.json(report, dryRun: dryRun)))
                    return
                }
                for line in Self.lines(report, source: name, dryRun: dryRun) { Terminal.out(line) }
                for note in report.notes { Terminal.err("rxvault: \(note)") }
            }
        }

        static func lines(_ report: MergeReport, source: String, dryRun: Bool) -> [String] {
            // A conflict is said even when this copy's side of it is kept and nothing else changed.
            let conflicts =
                report.patientConflicts.map {
                    "conflict: patient \($0.prefix(8)) was changed in both copies; the later change is kept"
                } + report.settingConflicts.map { "conflict: \($0)" }
            if report.upToDate || !report.changedAnything {
                return ["nothing to bring in: this vault already holds every change in \(source)"] + conflicts
            }
            if !report.changedRecords {
                return [
                    "\(dryRun ? "would bring in" : "brought in") from \(source) only its audit log: "
                        + (report.auditEntriesJoined == 1 ? "1 entry" : "\(report.auditEntriesJoined) entries")
                ] + conflicts
            }
            let verb = dryRun ? "would bring in" : "brought in"
            var lines = [
                "\(verb) from \(source): "
                    + [
                        counted(report.prescriptionsAdded.count, "new prescription"),
                        counted(report.prescriptionsUpdated.count, "updated prescription"),
                        counted(report.versionsAdded, "version"),
                        counted(report.attachmentsAdded, "attachment"), counted(report.clientsAdded.count, "client"),
                        counted(report.grantsAdded, "grant"), counted(report.patientsAdded, "patient"),
                        report.auditEntriesJoined == 1 ? "1 log entry" : "\(report.auditEntriesJoined) log entries"
                    ].joined(separator: ", ")
            ]
            let removals = [
                (report.prescriptionsRemoved.count, "prescription"), (report.attachmentsRemoved, "attachment"),
                (report.clientsRemoved.count, "client"), (report.grantsRemoved, "grant")
            ].filter { $0.0 > 0 }
            if !removals.isEmpty {
                lines.append(
                    "\(dryRun ? "would remove" : "removed"), as the other copy did: "
                        + removals.map { counted($0.0, $0.1) }.joined(separator: ", "))
            }
            if report.grantsNarrowed > 0 {
                lines.append("\(counted(report.grantsNarrowed, "grant")) narrowed to the terms both copies allow")
            }
            lines += keyAndSettingLines(report, dryRun: dryRun)
            for id in report.conflicts {
                lines.append(
                    "conflict: prescription \(id.short) was changed in both copies; it reads as the newer edit (a withdrawal wins over an edit), both are in 'rxvault history \(id.short)'"
                )
            }
            return lines + conflicts
        }

        /// Key slots and settings the merge took from the other copy, and settings both changed.
        static func keyAndSettingLines(_ report: MergeReport, dryRun: Bool) -> [String] {
            var lines: [String] = []
            func slots(_ ids: [Int]) -> String { (ids.count == 1 ? "slot " : "slots ") + MergeReport.slots(ids) }
            if !report.keySlotsAdded.isEmpty {
                lines.append("\(dryRun ? "would add" : "added") key \(slots(report.keySlotsAdded)) of the other copy")
            }
            if !report.keySlotsRemoved.isEmpty {
                lines.append(
                    "\(dryRun ? "would remove" : "removed") key \(slots(report.keySlotsRemoved)), as the other copy did"
                )
            }
            if !report.keySlotsChanged.isEmpty {
                lines.append(
                    "\(dryRun ? "would take" : "took") key \(slots(report.keySlotsChanged)) as the other copy changed it (its old passphrase no longer opens the vault)"
                )
            }
            for setting in report.settingsChanged { lines.append("setting \(setting), from the other copy") }
            return lines
        }

        static func json(_ report: MergeReport, dryRun: Bool) -> [String: Any] {
            [
                "schema": "rxvault/merge/v1", "dryRun": dryRun, "upToDate": report.upToDate || !report.changedAnything,
                "prescriptionsAdded": report.prescriptionsAdded.map(\.hex),
                "prescriptionsUpdated": report.prescriptionsUpdated.map(\.hex),
                "prescriptionsRemoved": report.prescriptionsRemoved.map(\.hex),
                "conflicts": report.conflicts.map(\.hex), "versionsAdded": report.versionsAdded,
                "attachmentsAdded": report.attachmentsAdded, "attachmentsRemoved": report.attachmentsRemoved,
                "clientsAdded": report.clientsAdded, "clientsRemoved": report.clientsRemoved,
                "grantsAdded": report.grantsAdded, "grantsRemoved": report.grantsRemoved,
                "grantsNarrowed": report.grantsNarrowed, "patientsAdded": report.patientsAdded,
                "auditEntriesJoined": report.auditEntriesJoined,
                "patientsUpdated": report.patientsUpdated, "patientConflicts": report.patientConflicts,
                "keySlotsAdded": report.keySlotsAdded, "keySlotsRemoved": report.keySlotsRemoved,
                "keySlotsChanged": report.keySlotsChanged, "settingsChanged": report.settingsChanged,
                "settingConflicts": report.settingConflicts, "notes": report.notes
            ]
        }
    }
}
