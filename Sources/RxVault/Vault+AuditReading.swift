import Foundation
import RxCrypto
import RxStore

/// Reading only the part of the audit log a listing needs (DESIGN.md, "Audit log").
///
/// `grants` (each grant's last read) and `requests` (access requests and their answers) read the
/// log newest first from the head pinned in the state root, authenticate every entry they read by
/// the hash chain back from that head, and decode an entry's event only when its action is one
/// they use: an import's or export's entry, which names every prescription, is decrypted but not
/// decoded. `grants` stops as soon as every grant it lists has its last read.
extension Vault {
    /// Calls `body` with each event the owner vouches for whose action is in `actions`, newest
    /// first, until it returns false: the whole review's verdict (`reviewAuditLog`) on every entry
    /// it reads, without reading the rest. Returns false, having called `body` for nothing, when
    /// this reading cannot give that verdict (a format-1 vault; an entry after the head that is
    /// not a genuine client entry, or a read of what that client no longer holds): the caller
    /// then reviews the whole log.
    ///
    /// The head's sequence and hash are the state root's (MAC'd; `verifiedState` compares them),
    /// so an entry under the head is the one the owner last saw if its hash chains back from the
    /// head, and the owner's if its MAC verifies; one there without a MAC is an entry the owner
    /// refused (or whose MAC was deleted) and counts for nothing. A break in the part read, or a
    /// MAC that does not verify, is an integrity error, as in `log`.
    func vouchedAuditEvents(
        _ actions: Set<AuditEvent.Action>, in access: any StateAccess, newestFirst body: (AuditEvent) throws -> Bool
    ) throws -> Bool {
        guard header.formatVersion >= 2, try verifiedState(in: access) != nil, let head = try store.auditHead() else {
            return false
        }
        // 1. What clients (and servers on a database) appended since the owner's last write: reads
        //    and access requests awaiting its countersignature.
        let pending = try store.auditEntries(after: head.sequence)
        var pendingEvents: [AuditEvent] = []
        if actions.contains(.read) || actions.contains(.accessRequested) {
            let trusting = access.write?.trustingFormatOneReads ?? false
            guard let genuine = try genuinePendingEntries(pending, head: head, trustingFormatOneReads: trusting) else {
                return false
            }
            pendingEvents = genuine.filter { actions.contains($0.action) }
        } else if pending.contains(where: { $0.mac != nil }) {
            return false // the owner's code never MACs an entry without moving the head to it
        }
        for event in pendingEvents.reversed() where try !body(event) { return true }
        // 2. The entries under the head, newest first, each chained to the one after it; one
        //    without a MAC counts for nothing.
        try AuditChain.backward(from: (head.sequence, head.hash), store: store, macKey: auditMACKey) { row in
            guard row.mac != nil, let event = try auditEvent(row, ifActionIn: actions) else { return true }
            return try body(event)
        }
        return true
    }

    /// The event of an entry the owner vouches for if its action is one of `actions`, else nil,
    /// decoding no more than the action when it can: events are written with sorted keys, so
    /// "action" comes first (an entry that does not start so is decoded whole). An entry that
    /// does not decode as an event (an action this rxvault does not know) is skipped, as the
    /// whole review skips it.
    func auditEvent(_ row: AuditEntryRecord, ifActionIn actions: Set<AuditEvent.Action>) throws -> AuditEvent? {
        let plaintext = try auditPlaintext(row)
        if let leading = plaintext.json.withUnsafeBytes({ Self.leadingAction($0[...]) }),
            !actions.contains(where: { $0.rawValue == leading })
        {
            return nil
        }
        guard let event = try? AuditEvent(json: plaintext.json), actions.contains(event.action) else { return nil }
        return event
    }

    /// The action of event JSON that starts `{"action":"` (sorted keys, no spaces, as
    /// `AuditLog.encode` writes it), or nil when it does not start so.
    static func leadingAction(_ json: Slice<UnsafeRawBufferPointer>) -> String? {
        let prefix = #"{"action":""#.utf8
        guard json.count > prefix.count, json.prefix(prefix.count).elementsEqual(prefix) else { return nil }
        let rest = json.dropFirst(prefix.count)
        // An escape would need decoding; no action has one.
        guard let end = rest.firstIndex(where: { $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }),
            rest[end] == UInt8(ascii: "\"")
        else { return nil }
        return String(decoding: rest[..<end], as: UTF8.self)
    }

    /// The events of the entries after the head, oldest first, if every one is a genuine client
    /// entry as the whole review judges it (`clientEntryProblem`): chained on from the head,
    /// without a MAC, authenticated by the registered client it names at its place in the chain,
    /// dated at most a day ahead, and an access request or a read of prescriptions granted to
    /// that client. The whole review asks for a grant by an earlier owner entry; here a grant the
    /// client holds now (its row's MAC verified) stands for one: every grant row was written with
    /// an owner grant entry, before the head, and nothing has been revoked since the head (a
    /// revoke is an owner write). Nil when any entry is anything else (say a read of a
    /// prescription granted once and revoked before it): then only the whole review can say
    /// which of them count.
    func genuinePendingEntries(
        _ pending: [AuditEntryRecord], head: (sequence: Int, hash: [UInt8], mac: [UInt8]),
        trustingFormatOneReads: Bool
    ) throws -> [AuditEvent]? {
        guard !pending.isEmpty else { return [] }
        let clients = try registeredClientKeys()
        let summaries = Dictionary(try clientSummaries().map { ($0.id.hex, $0) }, uniquingKeysWith: { a, _ in a })
        let timestamps = ISO8601DateFormatter()
        let now = timestamps.date(from: clock.timestamp())
        var keys: [String: SecretBytes] = [:]
        var granted: Set<String> = [] // "client prescription", held now
        var grantsRead: Set<String> = []
        /// The entry's event if it is a genuine client entry, else nil.
        func genuineEntry(_ row: AuditEntryRecord, previous: [UInt8], findings: [AuditFinding]) -> AuditEvent? {
            guard findings.isEmpty, row.mac == nil, let (plaintext, event) = try? openAuditPlaintext(row) else {
                return nil
            }
            if let client = summaries[event.actor], !grantsRead.contains(event.actor) {
                grantsRead.insert(event.actor)
                guard let actor = ClientID(hex: event.actor),
                    let held = try? storedGrants(clientID: actor, prescriptionID: nil)
                else { return nil }
                for grant in held where (try? openGrant(grant, client: client)) != nil {
                    granted.insert("\(event.actor) \(grant.prescriptionID)")
                }
            }
            let problem = clientEntryProblem(
                row, plaintext: plaintext, event: event, previousHash: previous, clients: clients,
                keys: &keys, granted: granted, now: now, timestamps: timestamps,
                trustingFormatOneReads: trustingFormatOneReads)
            return problem == nil ? event : nil
        }
        var events: [AuditEvent]? = []
        AuditChain.forward(pending, after: (head.sequence, head.hash)) { row, previous, findings in
            guard let event = genuineEntry(row, previous: previous, findings: findings) else {
                events = nil
                return false
            }
            events?.append(event)
            return true
        }
        return events
    }
}
