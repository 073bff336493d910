import ArgumentParser
import Foundation
import RxCrypto
import RxVault

#if canImport(Glibc)
    import Glibc
#endif

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
                let vaultID = try VaultHeader.read(at: options.vaultPath).vaultIDHex
                let entries = try BackupFolder.readable(folder) { try BackupFolder.scan(folder, readWhole: true) }
                var skipped: [(BackupFolder.Entry, String)] = []
                var candidates: [BackupFolder.Entry] = []
                for entry in entries {
                    if !entry.name.names(vaultID: vaultID) { continue } // another vault's: not even mentioned
                    if !entry.isBackup(ofVault: vaultID) {
                        skipped.append(
                            (
                                entry,
                                "its header label names vault \(entry.label?.vaultID.prefix(8) ?? "?"), not this one"
                            ))
                    } else if !entry.recognisable {
                        // A header that cannot be read or a label that contradicts the name: not
                        // recognisably this vault's backup, so never removed.
                        skipped.append((entry, entry.problem ?? "not recognisable"))
                    } else {
                        candidates.append(entry)
                    }
                }
                guard !candidates.isEmpty else {
                    for (entry, why) in skipped { Terminal.err("rxvault: left alone: \(entry.fileName): \(why)") }
                    Terminal.err("rxvault: no backups of vault \(vaultID.prefix(8)) in \(folder); nothing to prune")
                    return
                }
                let decisions = policy.apply(candidates, time: \.name.time, tieBreak: \.name.sequence)

                // The newest backup that verifies is kept whatever the policy says.
                var protected: String?
                var findings: [String: String] = [:]
                if keys.verify {
                    let checker = try BackupCheck(keys: keys, options: options, label: "the backups in \(folder)")
                    for decision in decisions {
                        let outcome = checker.check(decision.item)
                        if outcome.isOK {
                            protected = decision.item.fileName
                            break
                        }
                        findings[decision.item.fileName] = outcome.text
                    }
                } else {
                    for decision in decisions {
                        if decision.item.problem == nil {
                            protected = decision.item.fileName
                            break
                        }
                        findings[decision.item.fileName] = decision.item.problem
                    }
                }
                guard let protected else {
                    for (name, why) in findings.sorted(by: { $0.key > $1.key }) {
                        Terminal.err("rxvault: \(name): \(why)")
                    }
                    throw CLIError(
                        .integrity,
                        "no backup of vault \(vaultID.prefix(8)) in \(folder) \(keys.verify ? "verifies" : "looks whole"); nothing was removed",
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
                // Newest first: every backup before the protected one is newer and did not verify.
                // None of them is removed: a backup goes only while a newer one verifies.
                var newerThanProtected = true
                for decision in decisions {
                    let name = decision.item.fileName
                    var reasons = decision.periods.map(\.rawValue)
                    if name == protected {
                        newerThanProtected = false
                        if decision.periods.isEmpty {
                            reasons.append("the newest that \(keys.verify ? "verifies" : "looks whole")")
                        }
                    } else if newerThanProtected && reasons.isEmpty {
                        reasons.append(
                            "newer than the newest that \(keys.verify ? "verifies" : "looks whole"), so no newer backup stands in for it"
                        )
                    }
                    let note = findings[name].map { " (\($0))" } ?? ""
                    if !reasons.isEmpty {
                        say("keep", "\(name)  \(reasons.joined(separator: ", "))\(note)")
                        continue
                    }
                    if dryRun {
                        say("would remove", "\(name)\(note)")
                        removed += 1
                    } else if unlink(decision.item.path) == 0 {
                        say("removed", "\(name)\(note)")
                        removed += 1
                    } else {
                        Terminal.err(
                            "rxvault: cannot remove \(decision.item.path): \(String(cString: strerror(errno)))")
                        failed += 1
                    }
                }
                for (entry, why) in skipped { Terminal.err("rxvault: left alone: \(entry.fileName): \(why)") }
                let kept = decisions.count - removed - failed
                Terminal.err(
                    "rxvault: \(dryRun ? "would remove" : "removed") \(counted(removed, "backup")), kept \(kept)"
                        + (keys.verify ? "" : " (pass --verify with the keys to open the newest)"))
                if failed > 0 {
                    throw CLIError(.cannotWrite, "\(counted(failed, "backup")) could not be removed (listed above)")
                }
            }
        }
    }
}
