import RxModel

/// Keeping the key ring's stamps (format 8, `KeyRingHistory`) at the end of every owner write,
/// so that `key add`, `key remove`, `passwd` and `config set` need not say what they changed:
/// the ring the write began with and the slots and settings it leaves tell.
extension Vault {
    /// The ring's history after `write`: a merge's as it decided it (`OwnerWrite.ringHistory`),
    /// else the ring's with every slot or setting this write changed stamped by it. Either way a
    /// slot the write removed or re-wrapped joins the removed slots. Nil before format 8.
    func nextRingHistory(_ write: OwnerWrite, assumedValidity: AssumedValidity?) throws -> KeyRingHistory? {
        guard header.formatVersion >= 8, let assumedValidity else { return nil }
        let previous = try store.keyRing().flatMap { KeyRing.decode($0.content) }
        let now = KeyRing.content(header: try store.header(), slots: try store.keySlots())
        let before = previous?.slots ?? [:]
        var history = write.ringHistory ?? previous?.history ?? KeyRingHistory()
        for (id, hash) in before where now.slots[id] != hash { history.removedSlots.insert(hash) }
        // Without a ring before (a vault from before format 4 upgraded in this write) nothing
        // was changed by the write: what it holds is as old as the vault, unstamped.
        if write.ringHistory == nil, let previous {
            for (id, hash) in now.slots where before[id] != hash { history.slots[id] = try stamp(write) }
            if previous.maxAttachmentBytes != now.maxAttachmentBytes {
                history.settings[.maxAttachmentSize] = try stamp(write)
            }
            if (previous.assumedValidity ?? .none) != assumedValidity {
                history.settings[.assumedValidity] = try stamp(write)
            }
        }
        history.slots = history.slots.filter { now.slots[$0.key] != nil }
        return history
    }

    /// The stored ring's history, unverified (a write verified the ring when it began; a copy
    /// being merged was checked whole): empty for a ring of schema 1 or 2.
    func storedRingHistory() throws -> KeyRingHistory {
        guard let ring = try store.keyRing(), let content = KeyRing.decode(ring.content) else {
            return KeyRingHistory()
        }
        return content.history ?? KeyRingHistory()
    }
}
