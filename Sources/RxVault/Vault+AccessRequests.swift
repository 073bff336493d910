import Foundation
import RxCrypto
import RxModel

extension Vault {
    /// Records a client's access request (the server calls this). Refuses a reason that is not
    /// plain text or too long, and a client that already has `AccessRequest.maximumPending`
    /// requests waiting. With `ownerWrite` false (`serve` on a database, whose role may only read
    /// and append) the request is appended as a client-form entry authenticated from the owner's
    /// side, as `appendServedReads` does, and countersigned by the owner's next write.
    public func requestAccess(
        for client: ClientSummary, reason: String, patient: String?,
        kinds: [PrescriptionKind], ownerWrite: Bool = true
    ) throws(VaultError) -> AccessRequest {
        if let refused = AccessRequest.problem(reason: reason, patient: patient) {
            throw .invalidInput("\(refused.field): \(refused.problem)")
        }
        let now = clock.timestamp()
        let expires =
            ISO8601DateFormatter().date(from: now).map {
                ISO8601DateFormatter().string(from: $0.addingTimeInterval(AccessRequest.lifetime))
            } ?? now
        let record = AccessRequestRecord(
            id: Hex.encode(randomBytes(8)), reason: reason, patient: patient,
            kinds: kinds.map(\.rawValue), expires: expires)
        func take(in access: any StateAccess) throws -> AccessRequest {
            let pending = try accessRequestsFromLog(in: access).filter {
                $0.client == client.id && $0.status == .pending
            }
            guard pending.count < AccessRequest.maximumPending else {
                throw VaultError.invalidInput(
                    "too many requests waiting for the owner (\(AccessRequest.maximumPending)); wait for an answer")
            }
            let event = AuditEvent(
                time: now, actor: client.id.hex, action: .accessRequested, client: client.id.hex,
                detail: String(decoding: try JSONEncoderSorted.encode(record), as: UTF8.self))
            if ownerWrite {
                try audit(event)
            } else {
                try AuditLog.appendClientEntry(
                    event, store: store, vaultID: header.vaultID, auditPublicKey: header.auditPublicKey,
                    key: try clientEntryKey(publicKey: client.recipient.publicKey))
            }
            return AccessRequest(
                id: record.id, client: client.id, reason: reason, patient: patient, kinds: kinds,
                requested: now, expires: expires, status: .pending, granted: [])
        }
        if ownerWrite { return try perform { write in try take(in: write) } }
        // Not an owner write (`serve` on a database): the log is read through a verified read,
        // inside this transaction.
        do { return try store.write { try reading { read in try take(in: read) } } } catch {
            throw VaultError.wrap(error)
        }
    }

    /// Every access request with its status (newest first); `client` narrows to one client's.
    public func accessRequests(client: ClientSummary? = nil) throws(VaultError) -> [AccessRequest] {
        try reading { read in
            try accessRequestsFromLog(in: read).filter { client == nil || $0.client == client?.id }.reversed()
        }
    }

    /// Finds a request by id or unique prefix.
    public func accessRequest(_ reference: String) throws(VaultError) -> AccessRequest {
        let all = try accessRequests()
        let matches = all.filter { $0.id.hasPrefix(reference.lowercased()) }
        guard !reference.isEmpty, let first = matches.first else { throw .requestNotFound(reference) }
        guard matches.count == 1 else {
            throw .invalidInput("request prefix \(reference) matches \(matches.count) requests")
        }
        return first
    }

    /// Approves a pending request with the chosen prescriptions: ordinary grants to its client,
    /// then the answer on the record. Returns the grant outcomes.
    public func approve(
        _ request: AccessRequest, prescriptions: [PrescriptionID], expires: GrantExpiry?,
        attachments: Bool?, measurements: Bool? = nil
    ) throws(VaultError) -> [GrantOutcome] {
        guard request.status == .pending else {
            throw .invalidInput("request \(request.id) is \(request.status.rawValue), not pending")
        }
        guard !prescriptions.isEmpty else {
            throw .invalidInput("name the prescriptions to grant, or deny the request")
        }
        guard let client = try client(id: request.client) else { throw .clientNotFound(request.client.short) }
        let outcomes = try grant(
            client, prescriptions, expires: expires, attachments: attachments, measurements: measurements)
        try answer(request, outcome: .approved, prescriptions: prescriptions)
        return outcomes
    }

    public func deny(_ request: AccessRequest) throws(VaultError) {
        guard request.status == .pending else {
            throw .invalidInput("request \(request.id) is \(request.status.rawValue), not pending")
        }
        try answer(request, outcome: .denied, prescriptions: [])
    }

    private func answer(_ request: AccessRequest, outcome: AccessRequest.Status, prescriptions: [PrescriptionID])
        throws(VaultError)
    {
        let record = AccessAnswerRecord(
            id: request.id, outcome: outcome.rawValue, prescriptions: prescriptions.map(\.hex))
        try perform { write in
            try audit(
                AuditEvent(
                    time: clock.timestamp(), actor: AuditEvent.ownerActor, action: .accessAnswered,
                    client: request.client.hex, prescriptions: prescriptions.map(\.hex),
                    detail: String(decoding: try JSONEncoderSorted.encode(record), as: UTF8.self)))
        }
    }

    /// Requests and answers, from the entries the owner vouches for, oldest first. Only their
    /// entries are decoded (`vouchedAuditEvents`): an import's, naming every prescription, is not.
    func accessRequestsFromLog(in access: any StateAccess) throws -> [AccessRequest] {
        var events: [AuditEvent] = []
        let answered = try vouchedAuditEvents([.accessRequested, .accessAnswered], in: access) { event in
            events.append(event)
            return true
        }
        return answered ? accessRequests(from: events.reversed()) : try accessRequestsFromWholeLog()
    }

    /// The same from the whole log, every entry reviewed (`reviewAuditLog`).
    func accessRequestsFromWholeLog() throws -> [AccessRequest] {
        accessRequests(from: try verifiedAuditEvents())
    }

    /// Requests and their answers from these events, oldest first.
    private func accessRequests(from events: some Sequence<AuditEvent>) -> [AccessRequest] {
        var requests: [AccessRequest] = []
        var index: [String: Int] = [:]
        let now = clock.timestamp()
        for event in events {
            switch event.action {
            case .accessRequested:
                guard let detail = event.detail, let client = event.client.flatMap(ClientID.init(hex:)),
                    let record = try? JSONDecoderStrict.decode(AccessRequestRecord.self, from: Array(detail.utf8))
                else { continue }
                index[record.id] = requests.count
                requests.append(
                    AccessRequest(
                        id: record.id, client: client, reason: record.reason, patient: record.patient,
                        kinds: record.kinds.compactMap(PrescriptionKind.init(rawValue:)), requested: event.time,
                        expires: record.expires, status: .pending, granted: []))
            case .accessAnswered:
                guard let detail = event.detail,
                    let record = try? JSONDecoderStrict.decode(AccessAnswerRecord.self, from: Array(detail.utf8)),
                    let i = index[record.id], requests[i].status == .pending
                else { continue }
                requests[i].status = record.outcome == "approved" ? .approved : .denied
                requests[i].granted = record.prescriptions.compactMap(PrescriptionID.init(hex:))
            default:
                continue
            }
        }
        // ISO 8601 UTC timestamps of one form compare as text.
        for i in requests.indices where requests[i].status == .pending && requests[i].expires < now {
            requests[i].status = .expired
        }
        return requests
    }
}
