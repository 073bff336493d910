import RxCrypto
import RxStore

/// Joining two copies' audit logs (issue 48): the other copy's entries this log lacks are
/// appended to it, oldest first, each as the owner's entry with its event as it was (time,
/// actor, action, what it named) and the hash of the original (`AuditEvent.joined`). The chain
/// stays one chain that `check` verifies; the other copy's chain is kept in it entry by entry,
/// and an entry is known by its original hash wherever it went, so merging the same copy (or a
/// copy that already holds entries joined from here) never brings one twice.
extension Vault {
    /// The events of this vault's log the owner vouches for, each with the hash that names it
    /// (its own, or the original's when it was joined), oldest first.
    func namedAuditEvents(in access: any StateAccess) throws -> [(name: String, event: AuditEvent)] {
        guard let head = try store.auditHead() else { return [] }
        var out: [(String, AuditEvent)] = []
        let all = Set(AuditEvent.Action.allCases)
        try AuditChain.backward(from: (head.sequence, head.hash), store: store, macKey: auditMACKey) { row in
            guard row.mac != nil, let event = try auditEvent(row, ifActionIn: all) else { return true }
            out.append((event.joined ?? Hex.encode(row.hash), event))
            return true
        }
        return out.reversed()
    }

    /// Appends the events of `theirs` this log does not hold; returns how many.
    func joinAuditLog(_ theirs: [(name: String, event: AuditEvent)], in write: OwnerWrite) throws -> Int {
        let known = Set(try namedAuditEvents(in: write).map(\.name))
        var joined = 0
        for (name, event) in theirs where !known.contains(name) {
            var copy = event
            copy.joined = name
            try audit(copy)
            joined += 1
        }
        return joined
    }
}
