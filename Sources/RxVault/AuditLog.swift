import Foundation
import RxCrypto
import RxStore

/// What happened, who did it, to what (docs/format.md, "Audit entry").
public struct AuditEvent: Codable, Sendable, Equatable {
    public enum Action: String, Codable, Sendable, CaseIterable {
        case clientAdded = "client-added"
        case clientRemoved = "client-removed"
        case grant
        case revoke
        case grantExpired = "grant-expired"
        case read
        case export
        case backup
        /// Prescriptions added or updated by `import` (the detail names the updated ones).
        case `import`
    }

    public var time: String
    /// "owner", or the id of the client that acted.
    public var actor: String
    public var action: Action
    /// The client concerned (granted, revoked, reading).
    public var client: String?
    public var prescriptions: [String]
    public var attachments: [String]?
    /// What was done, in a few words ("list", "show", "extract scan.pdf", "until 2027-01-01").
    public var detail: String?

    public init(time: String, actor: String, action: Action, client: String? = nil, prescriptions: [String] = [],
                attachments: [String]? = nil, detail: String? = nil) {
        self.time = time
        self.actor = actor
        self.action = action
        self.client = client
        self.prescriptions = prescriptions
        self.attachments = attachments
        self.detail = detail
    }

    public static let ownerActor = "owner"
}

/// The append-only, encrypted, hash-chained audit log (DESIGN.md, "Audit log").
///
/// Every entry is sealed to the vault's audit X25519 key, so the owner and only the owner can
/// read it, whoever wrote it (clients log their reads without holding any owner key). Each entry's
/// hash covers the previous hash, its sequence number and its sealed bytes; the owner MACs every
/// entry (a client's at the owner's next write) and a head record (last sequence and hash), so
/// deleting, editing or reordering an entry the owner has seen is detected by `check`.
enum AuditLog {
    static let zeroHash = [UInt8](repeating: 0, count: 32)

    static func hash(previous: [UInt8], sequence: Int, sealed: [UInt8]) -> [UInt8] {
        SHA256.hash(Array("rxvault/v1 audit".utf8) + previous + bigEndian(sequence) + sealed)
    }

    static func entryMAC(sequence: Int, hash: [UInt8], key: SecretBytes) throws -> [UInt8] {
        try MAC.authenticate(Array("rxvault/v1 audit-entry".utf8) + bigEndian(sequence) + hash, key: key)
    }

    static func headMAC(sequence: Int, hash: [UInt8], key: SecretBytes) throws -> [UInt8] {
        try MAC.authenticate(Array("rxvault/v1 audit-head".utf8) + bigEndian(sequence) + hash, key: key)
    }

    static func bigEndian(_ value: Int) -> [UInt8] { (0..<8).reversed().map { UInt8(truncatingIfNeeded: value >> (8 * $0)) } }

    /// Appends `event` after the current last entry. With `macKey` (the owner) the entry is MAC'd
    /// and the head moved; without (a client) it waits for the owner's countersignature.
    static func append(_ event: AuditEvent, store: any RecordStore, auditPublicKey: [UInt8], macKey: SecretBytes?) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let sealed = try X25519.seal(Array(try encoder.encode(event)), to: auditPublicKey)
        let last = try store.lastAuditEntry()
        let sequence = (last?.sequence ?? 0) + 1
        let entryHash = hash(previous: last?.hash ?? zeroHash, sequence: sequence, sealed: sealed)
        var mac: [UInt8]?
        if let macKey { mac = try entryMAC(sequence: sequence, hash: entryHash, key: macKey) }
        try store.append(AuditEntryRecord(sequence: sequence, entry: sealed, hash: entryHash, mac: mac))
        if let macKey {
            try store.setAuditHead(sequence: sequence, hash: entryHash, mac: try headMAC(sequence: sequence, hash: entryHash, key: macKey))
        }
    }

    /// A problem found in the log.
    struct Finding: Error, CustomStringConvertible {
        let description: String
    }

    /// Checks the whole chain; returns the problems found (empty when intact) and how many
    /// entries still await the owner's countersignature.
    static func verify(store: any RecordStore, macKey: SecretBytes) throws -> (findings: [String], pending: Int) {
        let entries = try store.auditEntries()
        var findings: [String] = []
        var previous = zeroHash
        var pending = 0
        let head = try store.auditHead()
        for (index, entry) in entries.enumerated() {
            if entry.sequence != index + 1 {
                findings.append("audit entry \(index + 1) is missing (found \(entry.sequence) in its place)")
                break
            }
            if hash(previous: previous, sequence: entry.sequence, sealed: entry.entry) != entry.hash {
                findings.append("audit entry \(entry.sequence) was altered or an entry before it was removed")
            }
            if let mac = entry.mac {
                if !MAC.verify(mac, Array("rxvault/v1 audit-entry".utf8) + bigEndian(entry.sequence) + entry.hash, key: macKey) {
                    findings.append("audit entry \(entry.sequence) has a MAC that does not verify")
                }
            } else if let head, entry.sequence <= head.sequence {
                findings.append("audit entry \(entry.sequence) lost its MAC")
            } else {
                pending += 1
            }
            previous = entry.hash
        }
        if let head {
            if !MAC.verify(head.mac, Array("rxvault/v1 audit-head".utf8) + bigEndian(head.sequence) + head.hash, key: macKey) {
                findings.append("the audit log's head record does not verify")
            } else if head.sequence > entries.count {
                findings.append("audit entries \(entries.count + 1)...\(head.sequence) were deleted")
            } else if head.sequence > 0, entries[head.sequence - 1].hash != head.hash {
                findings.append("audit entry \(head.sequence) differs from the one the owner last saw")
            }
        } else {
            // Every vault gets a head at init: without one the log was deleted.
            findings.append("the audit log's head record was deleted")
        }
        return (findings, pending)
    }

    /// The owner countersigns entries written by clients since the last owner write (after
    /// checking they chain on), and moves the head to the end.
    static func countersign(store: any RecordStore, macKey: SecretBytes, isClientRead: (AuditEntryRecord) -> Bool) throws {
        let head = try store.auditHead()
        let entries = try store.auditEntries(after: head?.sequence ?? 0)
        guard let last = entries.last, last.sequence > (head?.sequence ?? 0) else { return }
        var previous = head?.hash ?? zeroHash
        for entry in entries where entry.sequence > (head?.sequence ?? 0) {
            // A broken chain is left for `check` to report; never bless it.
            guard hash(previous: previous, sequence: entry.sequence, sealed: entry.entry) == entry.hash else { return }
            // Clients may only log their own reads; anything else (an entry claiming to be the
            // owner's, or bytes that do not decrypt) is left unsigned for `check` to report.
            guard entry.mac != nil || isClientRead(entry) else { return }
            if entry.mac == nil { try store.setAuditMAC(sequence: entry.sequence, mac: try entryMAC(sequence: entry.sequence, hash: entry.hash, key: macKey)) }
            previous = entry.hash
        }
        try store.setAuditHead(sequence: last.sequence, hash: last.hash, mac: try headMAC(sequence: last.sequence, hash: last.hash, key: macKey))
    }
}
