import ArgumentParser
import Foundation
import RxCrypto
import RxVault

#if canImport(Glibc)
import Glibc
#endif

extension RxVaultCommand {
    /// The keys `--verify` opens backups with, shared by `backup list` and `backup prune`.
    struct BackupKeyOptions: ParsableArguments {
        @Flag(help: "Open every backup and check every object in it (needs the keys: the vault's passphrase or recovery code, and --age-identity for backups to recipients).")
        var verify = false
        @Option(help: ArgumentHelp("With --verify: open backups made to recipients with this identity file.", valueName: "file")) var ageIdentity: String?
        @Option(help: ArgumentHelp("With --verify: open passphrase backups with the passphrase in this file (made with --age-passphrase-file).",
                                   valueName: "file")) var agePassphraseFile: String?
        @OptionGroup var recovery: RecoveryCodeOptions

        func validate() throws {
            if !verify && (ageIdentity != nil || agePassphraseFile != nil) {
                throw ValidationError("--age-identity and --age-passphrase-file are for --verify")
            }
            if !verify && recovery.isGiven { throw ValidationError("--recovery and --recovery-key-file are for --verify") }
        }
    }

    struct BackupList: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "list",
            abstract: "List the backups in a folder: time, vault, size, key; with --verify whether each opens and checks.",
            discussion: flowing("""
            Lists the files named as 'rxvault backup DIR' names them, oldest first. Without any
            key, the time and vault come from the file name (a claim: anyone can rename a file);
            a backup to recipients also carries them in a label in its age header, and a name
            that disagrees with it is reported. With --verify each backup is opened and checked
            as 'backup verify' does, and its name is checked against what is inside. Exits 76 if
            any backup fails, 77 if one does not open with the keys given (or none was given for it).

            Examples:
              rxvault backup list ~/backups/rxvault
              rxvault backup list ~/backups/rxvault --verify --age-identity ~/backup.key
              rxvault backup list ~/backups --verify --age-identity id.key --recovery
              rxvault backup list ~/backups/rxvault --format json
            """))

        @Argument(help: "The folder.") var folder: String
        @OptionGroup var keys: BackupKeyOptions
        @Option(help: "Output format.") var format: DocumentFormat = .table
        @OptionGroup var options: VaultOptions

        func run() throws {
            try CommandRunner.run(json: format == .json) {
                let entries = try BackupFolder.scan(folder, readWhole: keys.verify)
                var outcomes: [BackupCheck.Outcome?] = Array(repeating: nil, count: entries.count)
                if keys.verify && !entries.isEmpty {
                    let checker = try BackupCheck(keys: keys, options: options, label: "the backups in \(folder)")
                    for (i, entry) in entries.enumerated() { outcomes[i] = checker.check(entry) }
                }
                if format == .json {
                    let items: [[String: Any]] = zip(entries, outcomes).map { entry, outcome in
                        var item: [String: Any] = ["file": entry.fileName, "time": entry.name.time.iso, "vault": entry.name.vault,
                                                   "size": entry.size, "armored": entry.armored, "labelled": entry.label != nil]
                        switch entry.kind {
                        case .passphrase?: item["key"] = "passphrase"
                        case .recipients(let n)?: item["key"] = "recipients"; item["recipients"] = n
                        case nil: break
                        }
                        if let id = entry.label?.vaultID { item["vaultID"] = id }
                        if let problem = entry.problem { item["problem"] = problem }
                        if let outcome {
                            item["verified"] = outcome.isOK
                            item["verification"] = outcome.text
                            if case .ok(let v) = outcome { item["vaultID"] = v.vaultID }
                        }
                        return item
                    }
                    Terminal.out(try jsonText(["schema": "rxvault/backups/v1", "folder": folder, "backups": items]))
                } else if entries.isEmpty {
                    Terminal.err("rxvault: no backups in \(folder) (files named rxvault-<vault>-<time>.age, as 'rxvault backup \(folder)' writes them)")
                } else {
                    let headers = ["TIME", "VAULT", "SIZE", "KEY", "FILE"] + (keys.verify ? ["VERIFIED"] : entries.contains { $0.problem != nil } ? ["NOTE"] : [])
                    Terminal.out(Table.render(headers: headers, rows: zip(entries, outcomes).map { entry, outcome in
                        var row = [entry.name.time.iso, entry.name.vault, ByteCountText(entry.size), Self.describe(entry.kind, armored: entry.armored), entry.fileName]
                        if let outcome { row.append(outcome.text) } else if headers.count == 6 { row.append(entry.problem ?? "") }
                        return row
                    }))
                }
                if outcomes.contains(where: { if case .failed? = $0 { return true } else { return false } }) {
                    throw CLIError(.integrity, "some backups do not verify (listed above)")
                }
                if outcomes.contains(where: { if case .wrongKey? = $0 { return true } else if case .notChecked? = $0 { return true } else { return false } }) {
                    throw CLIError(.wrongPassphrase, "some backups were not opened with the keys given (listed above)",
                                   hint: "a backup made with the vault's passphrase needs the passphrase of the day it was made"
                                       + (keys.recovery.isGiven ? " (a recovery code never opens its age layer)" : "")
                                       + "; backups to recipients need --age-identity")
                }
            }
        }

        static func describe(_ kind: BackupFolder.Kind?, armored: Bool) -> String {
            let text: String
            switch kind {
            case .passphrase?: text = "passphrase"
            case .recipients(let n)?: text = n == 1 ? "1 recipient" : "\(n) recipients"
            case nil: text = "?"
            }
            return armored ? text + ", armored" : text
        }
    }

    struct BackupPrune: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "prune",
            abstract: "Remove this vault's older backups from a folder, keeping one per day, week, month, year.",
            discussion: flowing("""
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
        @Option(help: ArgumentHelp("Keep the newest backup of each of the last N days that have one.", valueName: "n")) var keepDaily: Int?
        @Option(help: ArgumentHelp("... of the last N ISO weeks.", valueName: "n")) var keepWeekly: Int?
        @Option(help: ArgumentHelp("... of the last N months.", valueName: "n")) var keepMonthly: Int?
        @Option(help: ArgumentHelp("... of the last N years.", valueName: "n")) var keepYearly: Int?
        @Flag(help: "Say what would be removed; remove nothing.") var dryRun = false
        @OptionGroup var keys: BackupKeyOptions
        @OptionGroup var options: VaultOptions

        func validate() throws {
            let given = [("--keep-daily", keepDaily), ("--keep-weekly", keepWeekly), ("--keep-monthly", keepMonthly), ("--keep-yearly", keepYearly)]
            guard given.contains(where: { $0.1 != nil }) else {
                throw ValidationError("give at least one of --keep-daily, --keep-weekly, --keep-monthly, --keep-yearly (prune never removes every backup)")
            }
            for (flag, value) in given {
                if let value, value < 1 || value > 100_000 { throw ValidationError("\(flag) must be between 1 and 100000 (leave it out to not keep by that period)") }
            }
        }

        func run() throws {
            try CommandRunner.run {
                try options.requireOwner("backup prune")
                let policy = BackupPolicy(daily: keepDaily ?? 0, weekly: keepWeekly ?? 0, monthly: keepMonthly ?? 0, yearly: keepYearly ?? 0)
                // Which vault: its id is in the header, readable without the passphrase.
                let vaultID = try VaultHeader.read(at: options.vaultPath).vaultIDHex
                let entries = try BackupFolder.scan(folder, readWhole: true)
                var skipped: [(BackupFolder.Entry, String)] = []
                var candidates: [BackupFolder.Entry] = []
                for entry in entries {
                    if !entry.name.names(vaultID: vaultID) { continue }   // another vault's: not even mentioned
                    if !entry.isBackup(ofVault: vaultID) {
                        skipped.append((entry, "its header label names vault \(entry.label?.vaultID.prefix(8) ?? "?"), not this one"))
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
                        if outcome.isOK { protected = decision.item.fileName; break }
                        findings[decision.item.fileName] = outcome.text
                    }
                } else {
                    for decision in decisions {
                        if decision.item.problem == nil { protected = decision.item.fileName; break }
                        findings[decision.item.fileName] = decision.item.problem
                    }
                }
                guard let protected else {
                    for (name, why) in findings.sorted(by: { $0.key > $1.key }) { Terminal.err("rxvault: \(name): \(why)") }
                    throw CLIError(.integrity, "no backup of vault \(vaultID.prefix(8)) in \(folder) \(keys.verify ? "verifies" : "looks whole"); nothing was removed",
                                   hint: keys.verify ? "check the keys given; 'rxvault backup list \(folder) --verify' lists each backup" : nil)
                }

                var removed = 0, failed = 0
                // Newest first: every backup before the protected one is newer and did not verify.
                // None of them is removed: a backup goes only while a newer one verifies.
                var newerThanProtected = true
                for decision in decisions {
                    let name = decision.item.fileName
                    var reasons = decision.periods.map(\.rawValue)
                    if name == protected {
                        newerThanProtected = false
                        if decision.periods.isEmpty { reasons.append("the newest that \(keys.verify ? "verifies" : "looks whole")") }
                    } else if newerThanProtected && reasons.isEmpty {
                        reasons.append("newer than the newest that \(keys.verify ? "verifies" : "looks whole"), so no newer backup stands in for it")
                    }
                    let note = findings[name].map { " (\($0))" } ?? ""
                    if !reasons.isEmpty {
                        Terminal.out("keep    \(name)  \(reasons.joined(separator: ", "))\(note)")
                        continue
                    }
                    if dryRun {
                        Terminal.out("would remove  \(name)\(note)")
                        removed += 1
                    } else if unlink(decision.item.path) == 0 {
                        Terminal.out("removed \(name)\(note)")
                        removed += 1
                    } else {
                        Terminal.err("rxvault: cannot remove \(decision.item.path): \(String(cString: strerror(errno)))")
                        failed += 1
                    }
                }
                for (entry, why) in skipped { Terminal.err("rxvault: left alone: \(entry.fileName): \(why)") }
                let kept = decisions.count - removed - failed
                Terminal.err("rxvault: \(dryRun ? "would remove" : "removed") \(Counted(removed, "backup")), kept \(kept)"
                             + (keys.verify ? "" : " (pass --verify with the keys to open the newest)"))
                if failed > 0 { throw CLIError(.cannotWrite, "\(Counted(failed, "backup")) could not be removed (listed above)") }
            }
        }
    }
}

/// Opening one backup of a folder with the keys given, and checking it as `backup verify` does,
/// plus that its name (and label) agree with what is inside.
struct BackupCheck {
    enum Outcome {
        case ok(BackupFile.Verification)
        case failed(String)
        case wrongKey(String)
        case notChecked(String)

        var isOK: Bool { if case .ok = self { return true } else { return false } }
        var text: String {
            switch self {
            case .ok: return "ok"
            case .failed(let why): return "FAILED: \(why)"
            case .wrongKey(let why): return "not opened: \(why)"
            case .notChecked(let why): return "not checked: \(why)"
            }
        }
    }

    let vaultKey: VaultKey
    let agePassphrase: SecretBytes?
    let identities: [AgeIdentity]?

    init(keys: RxVaultCommand.BackupKeyOptions, options: VaultOptions, label: String) throws {
        identities = try keys.ageIdentity.map { try KeyFile.identities($0, what: "age identity") }
        agePassphrase = try keys.agePassphraseFile.map { try PassphraseSource.read(file: $0, what: "age passphrase") }
        vaultKey = try keys.recovery.backupVaultKey(options: options, label: label)
    }

    func check(_ entry: BackupFolder.Entry) -> Outcome {
        if let problem = entry.problem { return .failed(problem) }
        let key: AgeFile.Key
        switch entry.kind {
        case .passphrase?:
            guard let passphrase = agePassphrase ?? vaultKey.passphrase else {
                return .wrongKey("made with a passphrase: a recovery code does not open its age layer")
            }
            key = .passphrase(passphrase, maxLogN: AgeFile.maxReadLogN)
        case .recipients?:
            guard let identities else { return .notChecked("made to recipients: give --age-identity") }
            key = .identities(identities)
        case nil: return .failed("unreadable")
        }
        guard let scratch = try? Scratch() else { return .failed("cannot create a temporary directory") }
        defer { scratch.remove() }
        let inner = scratch.path + "/vault.rxv"
        guard let handle = FileHandle(forReadingAtPath: entry.path) else { return .failed("cannot be read") }
        defer { try? handle.close() }
        let raw: (inout [UInt8]) throws -> Int = { buffer in
            guard let chunk = try handle.read(upToCount: buffer.count), !chunk.isEmpty else { return 0 }
            chunk.copyBytes(to: &buffer, count: chunk.count)
            return chunk.count
        }
        let armor = entry.armored ? AgeArmorStream(source: raw) : nil
        do {
            try BackupFile.decrypt(read: { buffer in try armor?.read(&buffer) ?? raw(&buffer) }, key: key, to: inner)
        } catch AgeError.noMatch {
            if case .passphrase = entry.kind, agePassphrase == nil {
                return .wrongKey("the passphrase does not open it: it may be older than the last passphrase change")
            }
            return .wrongKey("the \(agePassphrase != nil ? "passphrase" : "identity") given does not open it")
        } catch {
            return .failed("\(error)")
        }
        let verification: BackupFile.Verification
        do { verification = try BackupFile.verify(path: inner, with: vaultKey) } catch .wrongPassphrase {
            return .wrongKey("the passphrase does not open the vault inside: it may be older than the last passphrase change")
        } catch .wrongRecoveryCode {
            return .wrongKey("the recovery code does not open the vault inside: it may be older than the recovery code")
        } catch {
            return .failed(error.description)
        }
        guard verification.report.isClean else { return .failed(verification.report.stages.flatMap(\.errors).first ?? "integrity errors") }
        guard entry.name.names(vaultID: verification.vaultID) else {
            return .failed("holds vault \(verification.vaultID.prefix(8)), not \(entry.name.vault) as its name says")
        }
        if let label = entry.label {
            // Opened: the label is now authenticated by the header MAC.
            guard label.vaultID == verification.vaultID else { return .failed("its label names another vault than the one inside") }
        } else if let made = verification.backedUp.flatMap(BackupTime.init(iso:)), made != entry.name.time {
            return .failed("its name says \(entry.name.time), the backup inside was made at \(made)")
        }
        return .ok(verification)
    }
}
