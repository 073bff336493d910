import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// What `backup prune` does to a folder, decided before anything is removed: the policy's
/// keep/remove decision (`BackupPolicy`, restic's `forget`), bounded by one rule the policy
/// cannot see: a backup is removed only while a newer one verifies. The newest backup that
/// verifies is kept whatever the policy says, and so is every newer one (they did not verify,
/// so nothing newer stands in for them). When none verifies, nothing is removed. Only this
/// vault's backups are considered; another vault's are not mentioned, and files named for this
/// vault that are not recognisably its backups are left alone, with the reason.
public struct BackupPrunePlan: Sendable {
    /// Why a backup is kept.
    public enum Reason: Sendable, Equatable {
        /// The policy keeps it for this period kind.
        case period(BackupPolicy.Period)
        /// The newest backup that verifies (kept whatever the policy says).
        case newestVerifying
        /// Newer than the newest that verifies: no newer backup stands in for it.
        case newerThanNewestVerifying
    }

    public struct Item: Sendable {
        public let entry: BackupFolder.Entry
        /// Why it is kept; empty: it is removed.
        public let reasons: [Reason]
        /// Why it does not verify, for the backups tried before one did.
        public let finding: String?
        public var keep: Bool { !reasons.isEmpty }
    }

    /// A file named for this vault that is not recognisably one of its backups: never removed.
    public struct LeftAlone: Sendable {
        public let entry: BackupFolder.Entry
        public let why: String
    }

    /// This vault's backups, newest first; empty when the folder holds none.
    public let items: [Item]
    public let leftAlone: [LeftAlone]
    /// The newest backup that verifies; nil when none does (and then nothing is removed).
    public let newestVerifying: BackupFolder.Entry?

    /// The backups to remove, newest first; none when no backup verifies.
    public var removals: [Item] { newestVerifying == nil ? [] : items.filter { !$0.keep } }

    /// Each backup tried and found not to verify, by file name (what a refusal lists).
    public var findings: [(fileName: String, finding: String)] {
        items.compactMap { item in item.finding.map { (item.entry.fileName, $0) } }
    }

    /// The plan for `entries` (`BackupFolder.scan` with `readWhole`) of the vault `vaultID`
    /// (hex) under `policy`. `verifies` tells whether one backup verifies: nil when it does,
    /// else why not; it is asked newest first until one does (never when the folder holds
    /// none of this vault's backups, so no key is asked for in vain).
    public init(
        _ entries: [BackupFolder.Entry], ofVault vaultID: String, policy: BackupPolicy,
        verifies: (BackupFolder.Entry) throws -> String?
    ) rethrows {
        var leftAlone: [LeftAlone] = []
        var candidates: [BackupFolder.Entry] = []
        for entry in entries {
            if !entry.name.names(vaultID: vaultID) { continue } // another vault's: not even mentioned
            if !entry.isBackup(ofVault: vaultID) {
                let named = entry.label?.vaultID.prefix(8) ?? "?"
                leftAlone.append(LeftAlone(entry: entry, why: "its header label names vault \(named), not this one"))
            } else if !entry.recognisable {
                // A header that cannot be read or a label that contradicts the name: not
                // recognisably this vault's backup, so never removed.
                leftAlone.append(LeftAlone(entry: entry, why: entry.problem ?? "not recognisable"))
            } else {
                candidates.append(entry)
            }
        }
        let decisions = policy.apply(candidates, time: \.name.time, tieBreak: \.name.sequence)
        var newest: Int?
        var findings: [Int: String] = [:]
        for (index, decision) in decisions.enumerated() {
            guard let finding = try verifies(decision.item) else {
                newest = index
                break
            }
            findings[index] = finding
        }
        items = decisions.enumerated().map { index, decision in
            var reasons = decision.periods.map(Reason.period)
            if let newest, reasons.isEmpty {
                if index == newest { reasons.append(.newestVerifying) }
                if index < newest { reasons.append(.newerThanNewestVerifying) }
            }
            return Item(entry: decision.item, reasons: reasons, finding: findings[index])
        }
        self.leftAlone = leftAlone
        newestVerifying = newest.map { decisions[$0].item }
    }

    /// What carrying out the plan did to one backup.
    public enum Outcome: Sendable, Equatable {
        case kept
        /// Removed (or, in a dry run, would be).
        case removed
        /// The file system refused: why.
        case notRemoved(String)
    }

    /// Removes the backups the plan removes (none in a dry run, or when none verifies), newest
    /// first, telling `each` what became of every backup in turn.
    public func carryOut(dryRun: Bool, _ each: (Item, Outcome) -> Void) {
        for item in items {
            if item.keep || newestVerifying == nil {
                each(item, .kept)
            } else if dryRun || unlink(item.entry.path) == 0 {
                each(item, .removed)
            } else {
                each(item, .notRemoved(String(cString: strerror(errno))))
            }
        }
    }
}
