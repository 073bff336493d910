import Foundation
import RxCrypto
import RxModel
import RxStore

/// Reading, judging and checking the audit log (the owner's side).
extension Vault {
    /// One entry as the owner reads it.
    public struct AuditRecord: Sendable {
        public let sequence: Int
        public let event: AuditEvent
        /// False while a client's entry awaits the owner's countersignature, and for an entry the
        /// owner refused (see `problem`).
        public let countersigned: Bool
        /// Why the entry is not to be believed, when no owner MAC vouches for it and it is not a
        /// read authenticated by the client it names (a forgery, an entry written before clients
        /// authenticated theirs, a MAC removed). Nil for every entry the owner wrote or accepted.
        public let problem: String?

        public var isVerified: Bool { problem == nil }
    }

    /// The log, oldest first, filtered. Fails with an integrity error if the chain is broken;
    /// entries the owner cannot vouch for are returned with their `problem`.
    public func log(client: ClientSummary? = nil, prescription: PrescriptionID? = nil, since: CalendarDate? = nil)
        throws(VaultError) -> [AuditRecord]
    {
        try reading { read in
            _ = try verifiedState(in: read) // the head is the owner's last (format 2)
            return try vouchedAuditLog().map { reviewed in
                guard let event = reviewed.event else { throw AuditFinding.doesNotDecrypt(reviewed.row.sequence).error }
                return AuditRecord(
                    sequence: reviewed.row.sequence, event: event, countersigned: reviewed.row.mac != nil,
                    problem: reviewed.problem)
            }.filter { record in
                let e = record.event
                if let client, e.client != client.id.hex && e.actor != client.id.hex { return false }
                if let prescription, !e.prescriptions.contains(prescription.hex) { return false }
                if let since, String(e.time.prefix(10)) < since.description { return false }
                return true
            }
        }
    }

    /// The events the owner vouches for: every entry except those `reviewAuditLog` refuses, once
    /// the chain and every owner MAC verified (as `log` checks them): the review itself trusts an
    /// entry that has a MAC, and `grants` and `requests` come here whenever the newest-first reader
    /// cannot answer (an entry after the head it cannot judge), which anyone who can write the
    /// file can arrange.
    func verifiedAuditEvents() throws -> [AuditEvent] {
        try vouchedAuditLog().compactMap { $0.problem == nil ? $0.event : nil }
    }

    /// `check`'s audit stage: the chain's structure, then every entry: it must decrypt, and one
    /// without an owner MAC must be a read authenticated by the client it names.
    func auditFindings() throws -> (checked: Int, errors: [String], notes: [String]) {
        let review = try reviewAuditLog()
        var errors = review.findings.map(\.message)
        var notes: [String] = []
        var pending = 0
        for reviewed in review.entries {
            if reviewed.event == nil {
                errors.append(AuditFinding.doesNotDecrypt(reviewed.row.sequence).message)
            } else if let problem = reviewed.problem {
                if reviewed.servedBeforeRemoval {
                    notes.append("audit entry \(reviewed.row.sequence) \(problem)")
                } else {
                    errors.append("audit entry \(reviewed.row.sequence) \(problem)")
                }
            } else if reviewed.row.mac == nil {
                pending += 1
            }
        }
        if pending > 0 {
            notes.insert(
                "\(pending) entries written by clients await the owner's next write to be countersigned", at: 0)
        }
        return (review.entries.count, errors, notes)
    }

    /// What an owner write's housekeeping did: the entries appended since the owner's last write
    /// it countersigned, those it refused (not a genuine client entry: `check` says why), and
    /// the expired grants it revoked.
    public struct Upkeep: Sendable, Equatable {
        public let countersigned: Int
        public let refused: Int
        public let expiredGrants: Int
    }

    /// Housekeeping every owner write does first, in the same transaction: countersign the
    /// entries clients (and, on a database, the owner's servers) appended to the log, then
    /// revoke expired grants (re-keying).
    func maintain(_ write: OwnerWrite) throws -> Upkeep {
        // Countersign first: the sweep appends owner entries, which move the head past them.
        let head = try store.auditHead()
        var signed = (countersigned: 0, refused: 0)
        // What clients and servers appended since the owner's last write (usually nothing).
        let appended = try store.auditEntries(after: head?.sequence ?? 0)
        if head != nil, let macd = appended.first(where: { $0.mac != nil }) {
            // Only another holder of the vault's keys (a `serve` whose role may only append) puts
            // one there; the owner's next entry would move the head past it and vouch for it.
            throw VaultError.integrity(
                "audit entry \(macd.sequence) carries an owner MAC but lies after the owner's head: it was not written by the owner's own writes; restore a backup from before it"
            )
        }
        if !appended.isEmpty {
            // Judged with the whole log (the grants it records) and the clients as they are now:
            // no owner write came between these entries and this one, so nothing has changed.
            let verdicts = Dictionary(
                try reviewAuditLog(trustingFormatOneReads: write.trustingFormatOneReads).entries.map {
                    ($0.row.sequence, $0)
                }, uniquingKeysWith: { a, _ in a })
            signed = try AuditLog.countersign(store: store, macKey: auditMACKey) { entry in
                guard let verdict = verdicts[entry.sequence], verdict.row == entry else { return false }
                return verdict.event != nil && verdict.problem == nil
            }
        }
        let expired = try sweepExpiredGrants(write)
        return Upkeep(countersigned: signed.countersigned, refused: signed.refused, expiredGrants: expired)
    }

    /// One owner write that does nothing but its housekeeping (`rxvault sweep`): what servers
    /// on a database and clients appended is countersigned, expired grants are revoked.
    public func sweep() throws(VaultError) -> Upkeep {
        try perform { write in write.upkeep }
    }

    // MARK: - Judging entries

    /// One entry, decrypted (nil if it does not), with what is wrong with it if no owner MAC
    /// vouches for it.
    struct ReviewedAuditEntry {
        let row: AuditEntryRecord
        let event: AuditEvent?
        let problem: String?
        /// The entry is a client-form read or request by a client an earlier owner entry removed,
        /// dated around that removal (`servedAroundRemoval`): what a server writes for a read it
        /// served just before. Its authenticator cannot be checked (the client's key is gone), so
        /// it is never countersigned, but `check` notes it rather than calling it forged.
        var servedBeforeRemoval = false
    }

    /// How far in the future (by the owner's clock) a client's entry may be dated: a day covers a
    /// device whose clock writes local time as UTC, in any time zone. Earlier times are not
    /// refused: the chain, not the clocks, orders the log.
    static let clientClockSkew: TimeInterval = 24 * 60 * 60

    /// The whole log walked once, oldest first (`AuditLog.verify`): what is wrong with its chain
    /// and its head, and every entry decrypted and judged. An entry without a MAC must be a read,
    /// by the registered client it names, authenticated by that client's key at its place in the
    /// chain, of prescriptions granted to that client by an earlier owner entry, and not dated in
    /// the future; one that passes but that the owner's head already covers lost its MAC.
    /// `trustingFormatOneReads`: in the write that upgrades a format-1 vault, which countersigns
    /// the reads rxvault 0.1.0 logged (before clients authenticated their entries).
    func reviewAuditLog(trustingFormatOneReads: Bool = false) throws -> (
        entries: [ReviewedAuditEntry], findings: [AuditFinding]
    ) {
        let head = try store.auditHead()
        let clients = try registeredClientKeys()
        let timestamps = ISO8601DateFormatter()
        let now = timestamps.date(from: clock.timestamp())
        var keys: [String: SecretBytes] = [:]
        var grantedAt: Set<String> = [] // "client prescription", granted by an owner entry so far
        var removedAt: [String: (sequence: Int, time: String)] = [:] // client -> its removal entry
        var reviewed: [ReviewedAuditEntry] = []
        let entries = try store.auditEntries()
        let findings = AuditLog.verify(entries: entries, head: head, macKey: auditMACKey) { row, previous in
            guard let (plaintext, event) = try? openAuditPlaintext(row) else {
                reviewed.append(ReviewedAuditEntry(row: row, event: nil, problem: "does not decrypt"))
                return
            }
            if row.mac != nil {
                // The owner's code moves the head with every entry it MACs: a MAC'd entry past the
                // head was put there by someone else holding the owner's keys (a `serve` host whose
                // database role may only append), and is not the owner's word.
                if let head, row.sequence > head.sequence {
                    reviewed.append(
                        ReviewedAuditEntry(
                            row: row, event: event,
                            problem:
                                "carries an owner MAC but lies after the owner's head: the owner's own writes move the head with every entry they MAC (inserted by another holder of the vault's keys)"
                        ))
                    return
                }
                if AuditLog.hasOwnerMAC(row, key: auditMACKey), event.actor == AuditEvent.ownerActor,
                    let client = event.client
                {
                    if event.action == .grant {
                        for prescription in event.prescriptions { grantedAt.insert("\(client) \(prescription)") }
                    } else if event.action == .clientRemoved {
                        removedAt[client] = (row.sequence, event.time)
                    }
                }
                reviewed.append(ReviewedAuditEntry(row: row, event: event, problem: nil))
                return
            }
            var problem = clientEntryProblem(
                row, plaintext: plaintext, event: event, previousHash: previous, clients: clients,
                keys: &keys, granted: grantedAt, now: now, timestamps: timestamps,
                trustingFormatOneReads: trustingFormatOneReads)
            if problem == nil, let head, row.sequence <= head.sequence {
                problem = "lost its MAC (the owner's head covers it)"
            }
            if problem != nil, clients[event.actor] == nil, let removal = removedAt[event.actor],
                Self.servedAroundRemoval(plaintext, event, removalTime: removal.time, timestamps: timestamps)
            {
                let served = Self.entryKind(event.action)
                reviewed.append(
                    ReviewedAuditEntry(
                        row: row, event: event,
                        problem:
                            "is a \(served) by client \(event.actor.prefix(8)) dated around its removal (entry \(removal.sequence)) but written after it: its key is gone with it, so it cannot be verified or countersigned",
                        servedBeforeRemoval: true))
                return
            }
            reviewed.append(ReviewedAuditEntry(row: row, event: event, problem: problem))
        }
        return (reviewed, findings)
    }

    /// The review of a log whose chain and head hold (`log`, and `grants` and `requests` when
    /// the newest-first reader cannot answer); an integrity error naming the first thing wrong
    /// otherwise. The review itself trusts an entry that has a MAC, so the MACs must verify first.
    func vouchedAuditLog() throws -> [ReviewedAuditEntry] {
        let review = try reviewAuditLog()
        if let first = review.findings.first { throw first.error }
        return review.entries
    }

    /// Why an unsigned entry is not a genuine client read, or nil if it is.
    func clientEntryProblem(
        _ row: AuditEntryRecord, plaintext: AuditPlaintext, event: AuditEvent, previousHash: [UInt8],
        clients: [String: [UInt8]], keys: inout [String: SecretBytes], granted: Set<String>,
        now: Date?, timestamps: ISO8601DateFormatter, trustingFormatOneReads: Bool
    ) -> String? {
        let actor = event.actor == AuditEvent.ownerActor ? "the owner" : "client \(event.actor.prefix(8))"
        let kind = Self.entryKind(event.action)
        guard event.action == .read || event.action == .accessRequested, event.actor == event.client,
            event.actor != AuditEvent.ownerActor
        else {
            return "claims to be a \(event.action.rawValue) by \(actor) but has no owner MAC (forged)"
        }
        guard let publicKey = clients[event.actor] else {
            return "claims to be a \(kind) by \(actor), which is not a registered client (removed, or never added)"
        }
        guard case .client(let authenticator, let json) = plaintext else {
            // Format 1 countersigned such reads at the owner's next write, and so does the write
            // that upgrades it: a read, by a registered client, of what it was granted.
            if event.action == .read, trustingFormatOneReads || header.formatVersion < 2 {
                return grantedReadProblem(event, actor: actor, granted: granted, now: now, timestamps: timestamps)
            }
            return
                "claims to be a \(kind) by \(actor) but is not authenticated by any client's key (forged, or written by an rxvault from before clients authenticated their entries)"
        }
        if keys[event.actor] == nil {
            keys[event.actor] = try? ClientAuditAuthenticator.key(
                vaultID: header.vaultID, clientPublicKey: publicKey,
                auditPublicKey: header.auditPublicKey, secretKey: auditSecretKey,
                peerPublicKey: publicKey)
        }
        guard let key = keys[event.actor],
            ClientAuditAuthenticator.verify(
                authenticator, json: json, sequence: row.sequence, previousHash: previousHash,
                vaultID: header.vaultID, key: key)
        else {
            return
                "claims to be a \(kind) by \(actor) but is not authenticated by that client's key at this place in the log (forged, copied or altered)"
        }
        if event.action == .accessRequested {
            if let problem = Self.accessRequestProblem(event, timestamps: timestamps) {
                return "is an access request by \(actor) that \(problem)"
            }
            return timeProblem(event, actor: actor, now: now, timestamps: timestamps)
        }
        return grantedReadProblem(event, actor: actor, granted: granted, now: now, timestamps: timestamps)
    }

    /// How long before its client's removal a served entry may be dated and still be taken for
    /// one the server held while the removal committed (it writes every second; a database
    /// outage can hold them longer), and how far after it (the server's clock against the
    /// owner's).
    static let servedBeforeRemovalWindow: (before: TimeInterval, after: TimeInterval) = (10 * 60, 60)

    /// Whether an entry naming a removed client looks like what a server writes for a read or
    /// request it took just before the removal: the client form, a read or access request by
    /// that client, dated within `servedBeforeRemovalWindow` of the removal.
    static func servedAroundRemoval(
        _ plaintext: AuditPlaintext, _ event: AuditEvent, removalTime: String, timestamps: ISO8601DateFormatter
    ) -> Bool {
        guard case .client = plaintext, event.action == .read || event.action == .accessRequested,
            event.actor == event.client, let time = timestamps.date(from: event.time),
            let removal = timestamps.date(from: removalTime)
        else { return false }
        return time >= removal.addingTimeInterval(-servedBeforeRemovalWindow.before)
            && time <= removal.addingTimeInterval(servedBeforeRemovalWindow.after)
    }

    /// What is wrong with an access request a client's key authenticates, or nil: it must be one
    /// `requestAccess` could have written (a client holding the file can append its own, and
    /// must not get past the checks the server makes): its record decodes, its id is 16 hex
    /// digits, its reason, patient and kinds are what the server accepts, it names nothing, and
    /// it expires `AccessRequest.lifetime` after its time, not later.
    static func accessRequestProblem(_ event: AuditEvent, timestamps: ISO8601DateFormatter) -> String? {
        guard let detail = event.detail,
            let record = try? JSONDecoderStrict.decode(AccessRequestRecord.self, from: Array(detail.utf8))
        else { return "does not hold a request" }
        guard record.id.utf8.count == 16, RecordID.isHex(record.id) else {
            return "has a malformed id"
        }
        if let refused = AccessRequest.problem(reason: record.reason, patient: record.patient) {
            return refused.field == "reason" ? "has a reason the server refuses" : "names a patient the server refuses"
        }
        if record.kinds.contains(where: { PrescriptionKind(rawValue: $0) == nil }) {
            return "names a kind of prescription that does not exist"
        }
        guard event.prescriptions.isEmpty, event.attachments == nil else { return "names records" }
        guard let time = timestamps.date(from: event.time), let expires = timestamps.date(from: record.expires),
            expires <= time.addingTimeInterval(AccessRequest.lifetime)
        else { return "expires later than a request may" }
        return nil
    }

    /// "read", "access request": what a client's entry is, in a finding.
    static func entryKind(_ action: AuditEvent.Action) -> String {
        action == .accessRequested ? "access request" : action == .read ? "read" : action.rawValue
    }

    /// Why a client's entry is not dated plausibly, or nil.
    private func timeProblem(_ event: AuditEvent, actor: String, now: Date?, timestamps: ISO8601DateFormatter)
        -> String?
    {
        let kind = Self.entryKind(event.action)
        guard let time = timestamps.date(from: event.time) else {
            return "is a \(kind) by \(actor) with a time that is not an ISO 8601 timestamp"
        }
        if let now, time > now.addingTimeInterval(Self.clientClockSkew) {
            return "is a \(kind) by \(actor) dated \(event.time), in the future"
        }
        return nil
    }

    /// Why a client's read is not plausible (its time, what it names), or nil.
    private func grantedReadProblem(
        _ event: AuditEvent, actor: String, granted: Set<String>, now: Date?,
        timestamps: ISO8601DateFormatter
    ) -> String? {
        if let problem = timeProblem(event, actor: actor, now: now, timestamps: timestamps) { return problem }
        if let ungranted = event.prescriptions.first(where: { !granted.contains("\(event.actor) \($0)") }) {
            return "is a read by \(actor) of prescription \(ungranted.prefix(8)), which was never granted to it"
        }
        return nil
    }

    /// Registered clients whose rows verify (the owner's MAC), by id: their public keys.
    func registeredClientKeys() throws -> [String: [UInt8]] {
        var keys: [String: [UInt8]] = [:]
        for row in try store.clients() {
            if let client = try? openClient(row) { keys[row.id.hex] = client.recipient.publicKey }
        }
        return keys
    }

    func openAuditPlaintext(_ row: AuditEntryRecord) throws -> (plaintext: AuditPlaintext, event: AuditEvent) {
        let plaintext = try auditPlaintext(row)
        do { return (plaintext, try AuditEvent(json: plaintext.json)) } catch {
            throw AuditFinding.doesNotDecrypt(row.sequence).error
        }
    }

    /// The entry decrypted with the audit key, its client tag (if any) split from its JSON.
    func auditPlaintext(_ row: AuditEntryRecord) throws -> AuditPlaintext {
        do {
            let plain = try X25519.open(row.entry, publicKey: header.auditPublicKey, secretKey: auditSecretKey)
            return plain.withUnsafeBytes { AuditPlaintext(Array($0)) }
        } catch {
            throw AuditFinding.doesNotDecrypt(row.sequence).error
        }
    }
}
