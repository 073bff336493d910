import RxStore

/// Key slots merged as records (issue 48; docs/format.md, "Merge rules"; SECURITY.md, "Key slots
/// on several computers").
///
/// Every slot wraps the same root key, so a slot is a way in, not data: bringing one in adds a
/// passphrase (or recovery code) that opens this copy, and keeping one the other copy removed
/// keeps a passphrase that may have leaked. So removal wins, by the slot's hash: a slot either
/// copy ever removed or re-wrapped (`KeyRingHistory.removedSlots`) is removed here, whether or
/// not it carries a stamp. A slot the other copy added is brought in only when its stamp says
/// this copy has never seen it (a slot made before stamps is never brought in: it may be one
/// this copy removed before removals were kept). A slot cannot move to another id (its id is in
/// the associated data of its wrapped key, and re-wrapping needs its passphrase), so two slots
/// added at one id in the two copies keep this copy's, and the other is named in a note.
///
/// Two removals are refused, each with a note, and the rest of the merge goes on: the slot that
/// opened the vault in this command, and the last passphrase slot.
extension CopyMerge {
    /// Merges the slots; returns the ring history with the removed slots of both copies and the
    /// stamps of the slots brought in (the settings' are decided by `mergeSettings`).
    mutating func mergeKeySlots(_ ourSide: CopySnapshot, _ theirSide: CopySnapshot) throws -> KeyRingHistory {
        var history = ourSide.ringHistory
        history.removedSlots.formUnion(theirSide.ringHistory.removedSlots)
        let removed = history.removedSlots
        let mine = ourSide.slotHashes
        let their = theirSide.slotHashes
        var removals: [Int] = []
        var arrivals: [Int] = []
        for id in Set(mine.keys).union(their.keys).sorted() where mine[id] != their[id] {
            let mineRemoved = mine[id].map { removed.contains($0) } ?? false
            if mineRemoved {
                if id == vault.openedSlot {
                    report.notes.append(
                        "key slot \(id), which opened the vault in this command, was removed or changed in the other copy: it is kept here; remove it with 'rxvault key remove \(id)' (or change it with 'rxvault passwd') once you can open the vault another way"
                    )
                    continue
                }
                removals.append(id)
            }
            guard let theirHash = their[id], !removed.contains(theirHash) else { continue }
            guard let stamp = theirSide.ringHistory.slots[id] else {
                report.notes.append(
                    "key slot \(id) of the other copy was made before slots carried stamps: it is not brought in; add it here with 'rxvault key add' if you still want it"
                )
                continue
            }
            guard !seen(stamp, by: ours) else { continue }
            guard mine[id] == nil || mineRemoved else {
                report.notes.append(
                    "key slot \(id) of the other copy was added while this copy added its own slot \(id): it is not brought in (a slot cannot change its number); add it here with 'rxvault key add'"
                )
                continue
            }
            arrivals.append(id)
            history.slots[id] = stamp
        }
        removals = keepingAPassphrase(removals, arrivals: arrivals, ourSide, theirSide)
        for id in removals { try removeSlot(id, ourSide) }
        for id in arrivals { try bringSlot(id, theirSide) }
        for id in arrivals { mine[id] == nil ? report.keySlotsAdded.append(id) : report.keySlotsChanged.append(id) }
        report.keySlotsRemoved = removals.filter { !arrivals.contains($0) }
        return history
    }

    /// The removals, less those that would leave no passphrase slot (a vault is never left
    /// with only a recovery code, nor with no way in: `Vault.removeKeySlot` refuses the same).
    private mutating func keepingAPassphrase(
        _ removals: [Int], arrivals: [Int], _ ourSide: CopySnapshot, _ theirSide: CopySnapshot
    ) -> [Int] {
        let remaining = Set(ourSide.slotHashes.keys).subtracting(removals).filter { ourSide.isPassphrase($0) }
        guard remaining.isEmpty, !arrivals.contains(where: { theirSide.isPassphrase($0) }) else { return removals }
        guard let kept = removals.first(where: { ourSide.isPassphrase($0) && !arrivals.contains($0) }) else {
            return removals
        }
        report.notes.append(
            "key slot \(kept) was removed in the other copy, and this copy removed every other passphrase: it is kept, so that a passphrase still opens the vault; add another with 'rxvault key add', then remove it"
        )
        return removals.filter { $0 != kept }
    }

    private func removeSlot(_ id: Int, _ ourSide: CopySnapshot) throws {
        if id == 1 {
            let r = ourSide.header
            try vault.store.replaceHeaderKey(
                opsLimit: r.kdfOpsLimit, memLimit: r.kdfMemLimit, salt: r.kdfSalt, wrapped: [])
        } else {
            try vault.store.deleteKeySlot(id)
        }
    }

    /// Copies the other copy's slot as it is: its wrapped key is bound to this vault, this
    /// format and its id, all the same here, and sealed under the root key both copies share.
    private func bringSlot(_ id: Int, _ theirSide: CopySnapshot) throws {
        if id == 1 {
            let r = theirSide.header
            try vault.store.replaceHeaderKey(
                opsLimit: r.kdfOpsLimit, memLimit: r.kdfMemLimit, salt: r.kdfSalt, wrapped: r.wrappedRootKey)
        } else if let row = theirSide.keySlots.first(where: { $0.id == id }) {
            try vault.store.upsert(row)
        }
    }
}
