import RxCrypto
import RxStore

/// What is wrong at one place of the audit log, in the words `check`, `log`, `grants` and
/// `requests` say it: every reader of the log takes its messages from here.
enum AuditFinding: Equatable {
    /// No entry stands where `sequence` belongs (`found` does, if anything).
    case missing(Int, found: Int?)
    /// Its hash is not the hash of the one before it, its place and its sealed bytes.
    case altered(Int)
    /// It has a MAC, and the MAC does not verify.
    case forgedMAC(Int)
    /// Read back from the head: its hash is not the one the entry after it chains on.
    case replaced(Int)
    /// The entry at the head's place is not the one the head names.
    case differsFromHead(Int)
    case headForged
    case headDeleted
    /// The head is past the last entry.
    case deleted(from: Int, through: Int)
    case doesNotDecrypt(Int)

    var message: String {
        switch self {
        case .missing(let sequence, let found?): "audit entry \(sequence) is missing (found \(found) in its place)"
        case .missing(let sequence, nil): "audit entry \(sequence) is missing"
        case .altered(let sequence): "audit entry \(sequence) was altered or an entry before it was removed"
        case .forgedMAC(let sequence): "audit entry \(sequence) has a MAC that does not verify"
        case .replaced(let sequence): "audit entry \(sequence) was replaced (the entry after it does not chain on it)"
        case .differsFromHead(let sequence): "audit entry \(sequence) differs from the one the owner last saw"
        case .headForged: "the audit log's head record does not verify"
        case .headDeleted: "the audit log's head record was deleted"
        case .deleted(let from, let through): "audit entries \(from)...\(through) were deleted"
        case .doesNotDecrypt(let sequence): "audit entry \(sequence) does not decrypt"
        }
    }

    var error: VaultError { .integrity(message) }
}

/// The one walker of the audit log's hash chain, either way: oldest first over entries in hand
/// (`forward`: the whole check, a review, the countersigning, the reads pending after the head),
/// or newest first from the head, reading entries one by one until the caller has what it needs
/// (`backward`: `grants`, `requests`). Each entry's link is judged here, and only here.
enum AuditChain {
    /// A place in the chain: an entry's sequence number and hash.
    typealias Link = (sequence: Int, hash: [UInt8])
    /// Before the first entry.
    static let origin: Link = (0, AuditLog.zeroHash)

    /// Oldest first: calls `visit` with each of `entries` (those after `start`), the hash it
    /// chains on and what is wrong with its link: its sequence number must come next, its hash
    /// chain on the one before, and a MAC it has verify under `macKey` (not judged without one).
    /// An entry out of place is `.missing` the one that belongs there, and from there on no link
    /// is judged (the rest cannot be placed), though every entry is still handed over. `visit`
    /// returns false to stop.
    static func forward(
        _ entries: some Sequence<AuditEntryRecord>, after start: Link = origin, macKey: SecretBytes? = nil,
        _ visit: (_ entry: AuditEntryRecord, _ previousHash: [UInt8], _ findings: [AuditFinding]) throws -> Bool
    ) rethrows {
        var expected = start.sequence + 1
        var previous = start.hash
        var placed = true
        for entry in entries {
            var findings: [AuditFinding] = []
            if placed, entry.sequence != expected {
                findings.append(.missing(expected, found: entry.sequence))
                placed = false
            } else if placed {
                if AuditLog.hash(previous: previous, sequence: entry.sequence, sealed: entry.entry) != entry.hash {
                    findings.append(.altered(entry.sequence))
                }
                if let macKey, entry.mac != nil, !AuditLog.hasOwnerMAC(entry, key: macKey) {
                    findings.append(.forgedMAC(entry.sequence))
                }
            }
            guard try visit(entry, previous, findings) else { return }
            previous = entry.hash
            expected += 1
        }
    }

    /// Newest first: calls `visit` with each entry from `head` down to the first, read from
    /// `store` one at a time, until it returns false. Each must chain to the one after it (the
    /// head's hash for the newest: the head, pinned by the state root, vouches for them all) and
    /// a MAC it has must verify; any break is an integrity error with its finding's words.
    static func backward(
        from head: Link, store: any RecordStore, macKey: SecretBytes,
        _ visit: (AuditEntryRecord) throws -> Bool
    ) throws {
        var expected = head.hash
        for sequence in stride(from: head.sequence, through: 1, by: -1) {
            guard let row = try store.auditEntry(sequence) else {
                throw AuditFinding.missing(sequence, found: nil).error
            }
            guard let previous = sequence == 1 ? AuditLog.zeroHash : try store.auditEntryHash(sequence - 1) else {
                throw AuditFinding.missing(sequence - 1, found: nil).error
            }
            guard row.hash == expected else {
                throw (sequence == head.sequence ? AuditFinding.differsFromHead(sequence) : .replaced(sequence)).error
            }
            guard AuditLog.hash(previous: previous, sequence: sequence, sealed: row.entry) == row.hash else {
                throw AuditFinding.altered(sequence).error
            }
            if row.mac != nil, !AuditLog.hasOwnerMAC(row, key: macKey) { throw AuditFinding.forgedMAC(sequence).error }
            guard try visit(row) else { return }
            expected = previous
        }
    }

    /// What is wrong with the head record, given every entry: it must verify, and name the last
    /// entry the owner saw (nil: nothing is wrong).
    static func headFinding(
        _ head: (sequence: Int, hash: [UInt8], mac: [UInt8])?, entries: [AuditEntryRecord],
        macKey: SecretBytes
    ) -> AuditFinding? {
        // Every vault gets a head at init: without one the log was deleted.
        guard let head else { return .headDeleted }
        guard MAC.verify(head.mac, AuditLog.headMACMessage(sequence: head.sequence, hash: head.hash), key: macKey)
        else { return .headForged }
        if head.sequence > entries.count { return .deleted(from: entries.count + 1, through: head.sequence) }
        if head.sequence > 0, entries[head.sequence - 1].hash != head.hash { return .differsFromHead(head.sequence) }
        return nil
    }
}
