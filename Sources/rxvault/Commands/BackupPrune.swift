import ArgumentParser
import Foundation
import RxCrypto
import RxVault

extension RxVaultCommand {
    struct BackupPrune: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "prune",
            abstract: "Remove this vault's older backups from a folder, keeping one per day, week, month, year.",
            discussion: flowing(
                """
                The policy is restic's 'forget': newest first, each --keep-* kind keeps the newest
                backup of each of its N most recent periods that have a backup (UTC days; ISO weeks,
                Monday first; months; years), and, while a kind has counts left, the oldest backup too.
                A backup is kept if any kind keeps it. Only files whose name says this vault (the
                first 8 hex digits of its id, as 'rxvault status' shows) and the backup pattern are
                considered, and, for backups to recipients, whose header label names this vault and
                the same time; any other file is left alone. A backup is removed only while a newer
                one verifies: with --verify (and the keys) backups are opened newest first until one
                checks, and neither it nor any newer backup is removed; without it, 'verifies' means
                its age header reads and its length is whole. When none does, nothing is removed (76).

                Examples:
                  rxvault backup prune ~/backups --keep-daily 7 --keep-weekly 4 --dry-run
                  rxvault backup prune ~/backups --keep-daily 7 --keep-monthly 12
                """))

        @Argument(help: "The folder.") var folder: String
        @Option(help: ArgumentHelp("Keep the newest backup of each of the last N days that have one.", valueName: "n"))
        var keepDaily: Int?
        @Option(help: ArgumentHelp("... of the last N ISO weeks.", valueName: "n")) var keepWeekly: Int?
        @Option(help: ArgumentHelp("... of the last N months.", valueName: "n")) var keepMonthly: Int?
        @Option(help: ArgumentHelp("... of the last N years.", valueName: "n")) var keepYearly: Int?
        @Flag(help: "Say what would be removed; remove nothing.") var dryRun = false
        @OptionGroup var keys: BackupKeyOptions
        @OptionGroup var options: VaultOptions

        func validate() throws {
            let given = [
                ("--keep-daily", keepDaily), ("--keep-weekly", keepWeekly), ("--keep-monthly", keepMonthly),
                ("--keep-yearly", keepYearly)
            ]
            guard given.contains(where: { $0.1 != nil }) else {
                throw ValidationError(
                    "give at least one of --keep-daily, --keep-weekly, --keep-monthly, --keep-yearly (prune never removes every backup)"
                )
            }
            for (flag, value) in given {
                if let value, value < 1 || value > 100_000 {
                    throw ValidationError(
                        "\(flag) must be between 1 and 100000 (leave it out to not keep by that period)")
                }
            }
        }

        func run() throws {
            try CommandRunner.run {
                try options.requireOwner("backup prune")
                let policy = BackupPolicy(
                    daily: keepDaily ?? 0, weekly: keepWeekly ?? 0, monthly: keepMonthly ?? 0, yearly: keepYearly ?? 0)
                // Which vault: its id is in the header, readable without the passphrase.
                let vaultID = try options.readHeader().vaultIDHex
                let entries = try BackupFolder.readable(folder) { try BackupFolder.scan(folder, readWhole: true) }
                // With --verify, a backup verifies when it opens and checks (the keys are read at
                // the first backup tried); else when it looks whole.
                var checker: (BackupCheck, Scratch)?
                defer { checker?.1.remove() }
                let plan = try BackupFolder.prunePlan(entries, ofVault: vaultID, policy: policy) { entry in
                    guard keys.verify else { return entry.problem }
                    let (check, scratch) =
                        try checker ?? (keys.checker(options: options, label: "the backups in \(folder)"), Scratch())
                    checker = (check, scratch)
                    let outcome = check.check(entry, in: scratch.path)
                    return outcome.isOK ? nil : outcome.text
                }
                try render(plan, vaultID: vaultID)
            }
        }

        /// The plan as it is carried out: a line per backup (kept with its reasons, removed),
        /// then what was left alone and the counts.
        private func render(_ plan: BackupPrunePlan, vaultID: String) throws {
            let leftAlone = {
                plan.leftAlone.forEach { Terminal.err("rxvault: left alone: \($0.entry.fileName): \($0.why)") }
            }
            guard !plan.items.isEmpty else {
                leftAlone()
                Terminal.err("rxvault: no backups of vault \(vaultID.prefix(8)) in \(folder); nothing to prune")
                return
            }
            let verifies = keys.verify ? "verifies" : "looks whole"
            guard plan.newestVerifying != nil else {
                for (name, why) in plan.findings.sorted(by: { $0.fileName > $1.fileName }) {
                    Terminal.err("rxvault: \(name): \(why)")
                }
                throw CLIError(
                    .integrity, "no backup of vault \(vaultID.prefix(8)) in \(folder) \(verifies); nothing was removed",
                    hint: keys.verify
                        ? "check the keys given; 'rxvault backup list \(folder) --verify' lists each backup" : nil)
            }
            var removed = 0
            var failed = 0
            // One column of verdicts, as wide as the longest this run can print.
            let width = dryRun ? "would remove".count : "removed".count
            func say(_ verdict: String, _ rest: String) {
                Terminal.out(verdict.padding(toLength: width, withPad: " ", startingAt: 0) + " " + rest)
            }
            plan.carryOut(dryRun: dryRun) { item, outcome in
                let name = item.entry.fileName
                let note = item.finding.map { " (\($0))" } ?? ""
                switch outcome {
                case .kept:
                    let reasons = item.reasons.map { reason in
                        switch reason {
                        case .period(let period): return period.rawValue
                        case .newestVerifying: return "the newest that \(verifies)"
                        case .newerThanNewestVerifying:
                            return "newer than the newest that \(verifies), so no newer backup stands in for it"
                        }
                    }
                    say("keep", "\(name)  \(reasons.joined(separator: ", "))\(note)")
                case .removed:
                    say(dryRun ? "would remove" : "removed", "\(name)\(note)")
                    removed += 1
                case .notRemoved(let why):
                    Terminal.err("rxvault: cannot remove \(item.entry.path): \(why)")
                    failed += 1
                }
            }
            leftAlone()
            let kept = plan.items.count - removed - failed
            Terminal.err(
                "rxvault: \(dryRun ? "would remove" : "removed") \(counted(removed, "backup")), kept \(kept)"
                    + (keys.verify ? "" : " (pass --verify with the keys to open the newest)"))
            if failed > 0 {
                throw CLIError(.cannotWrite, "\(counted(failed, "backup")) could not be removed (listed above)")
            }
        }
    }
}
