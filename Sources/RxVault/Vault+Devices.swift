import RxStore

/// One vault on several devices (issue 48; DESIGN.md, "Several devices"): what this computer
/// knows of the vault's lines of history, compared at open, advanced by every write.
extension Vault {
    /// The replica this process writes as: the computer's for this vault (`DeviceKnowledge`),
    /// made on first need; without a state folder, one for this process alone.
    func writingReplica() -> ReplicaID {
        if let replica { return replica }
        let chosen =
            anchor?.updateKnowledge(header.vaultIDHex) { $0 ?? DeviceKnowledge(replica: .random()) }.replica
            ?? .random()
        replica = chosen
        return chosen
    }

    /// Every owner write of a format-8 vault counts as one write of this computer's replica
    /// (after a merge's, on top of both copies' knowledge).
    func advanceKnowledge(_ state: inout VaultState, joining joined: KnowledgeVector? = nil, counting: Bool = true) {
        guard header.formatVersion >= 8 else { return }
        var knowledge = state.knowledge ?? .empty
        if let joined { knowledge = knowledge.merged(with: joined) }
        if counting { knowledge.advance(writingReplica()) }
        state.knowledge = knowledge
    }

    /// The stamp of what `write` makes (format 8; nil before): this replica's next clock, the
    /// one `advanceKnowledge` counts when the write ends.
    func stamp(_ write: OwnerWrite) throws -> WriteStamp? {
        guard header.formatVersion >= 8 else { return nil }
        if let stamp = write.stamp { return stamp }
        var knowledge = try write.root().knowledge ?? .empty
        if let joined = write.joinedKnowledge { knowledge = knowledge.merged(with: joined) }
        let replica = writingReplica()
        let stamp = WriteStamp(replica: replica, clock: knowledge[replica] + 1)
        write.stamp = stamp
        return stamp
    }

    /// After a commit: the computer has seen the state it wrote, and remembers which
    /// prescriptions the write touched (`touched`, short ids, the first few).
    func recordWritten(_ knowledge: KnowledgeVector?, touched: [String]) {
        guard let knowledge, let anchor else { return }
        let replica = writingReplica()
        anchor.updateKnowledge(header.vaultIDHex) { stored in
            var updated = stored ?? DeviceKnowledge(replica: replica)
            updated.seen = knowledge.includes(updated.seen) ? knowledge : updated.seen.merged(with: knowledge)
            updated.remember(
                DeviceKnowledge.Written(
                    replica: replica, clock: knowledge[replica], prescriptions: touched))
            return updated
        }
    }

    /// At open, before the counters: the file's knowledge (read without its MAC, as the counter
    /// is, so `check` still opens a damaged file) against what this computer has seen of the
    /// vault. Nil when there is no finding or nothing known here yet (the counters decide then).
    func historyFinding() -> RollbackAnchor.Finding? {
        guard let anchor, let known = anchor.knowledge(header.vaultIDHex) else { return nil }
        let row = (try? store.vaultState()) ?? nil
        let found = row.flatMap { VaultState.decode($0.state, counter: $0.writeCounter) }?.knowledge ?? .empty
        var history = HistoryFinding(found: found, seen: known.seen, own: known.own)
        history.prescriptions = known.prescriptions(in: history.missing)
        guard history.relation == .earlier || history.relation == .forked else { return nil }
        let counter = row?.writeCounter ?? 0
        return RollbackAnchor.Finding(
            seen: anchorKey.flatMap { anchor.seen($0) } ?? counter, found: counter, history: history)
    }

    /// After the root verified at open: a later state of what was seen becomes what was seen.
    func recordOpened(_ state: VaultState) {
        guard let anchor, let found = state.knowledge else { return }
        anchor.updateKnowledge(header.vaultIDHex) { stored in
            guard var known = stored else { return DeviceKnowledge(replica: .random(), seen: found) }
            if found.includes(known.seen) { known.seen = found }
            return known
        }
    }

    /// The owner keeps this state of the vault (`check --accept-rollback`/`--accept-fork`,
    /// `restore`): it becomes what this computer has seen, and when it lacks writes of the
    /// replica this computer writes as, the computer takes a new one, so those writes keep their
    /// numbers in the copies that hold them.
    func acceptKnowledge(_ state: VaultState?) {
        guard let anchor else { return }
        let found = state?.knowledge ?? .empty
        let kept = anchor.updateKnowledge(header.vaultIDHex) { stored in
            guard var known = stored else { return DeviceKnowledge(replica: .random(), seen: found) }
            if found.lacking(from: known.seen)[known.replica] != nil { known.retire() }
            known.seen = found
            return known
        }
        replica = kept.replica
    }

    /// The knowledge vector of the vault as it is now (verified; empty before format 8).
    public func knowledge() throws(VaultError) -> KnowledgeVector {
        try read { try verifyStateNow()?.knowledge ?? .empty }
    }

    /// Upgrades a format-7 vault inside the current write transaction: the root carries a
    /// knowledge vector (state schema 6), empty until this write counts itself in it. An rxvault
    /// that reads up to format 7 would write roots without it and make every device's copy look
    /// like an older one, so it must refuse the vault as made by a newer one. No row changes.
    func upgradeToFormat8(_ write: OwnerWrite) throws {
        var state = try write.root()
        state.knowledge = .empty
        try store.advanceFormat(to: 8, adding: [])
        try adoptFormat(8, state: state, in: write)
    }
}
