import Foundation
import NIOCore
import RxModel
import RxVault

/// The one place the server touches the vault: an actor around the owner's open `Vault`, so
/// requests take turns on its SQLite connection. Every answer is as the file is now: what is
/// kept between requests (`ServedCache`) is dropped as soon as the owner writes anything, so a
/// revoke, a removal or an expiry made meanwhile by the owner's CLI counts at the next request.
actor VaultGateway {
    let vault: Vault
    private var cache: ServedCache
    private var streams: [Int: AttachmentStream] = [:]
    private var nextStream = 0

    init(vault: sending Vault) {
        self.vault = vault
        cache = ServedCache(stamp: nil, today: vault.today)
    }

    /// Drops what was kept if the vault's state or the day is not the one it was kept for.
    ///
    /// While the server's own audit write is under way, a new stamp is most likely that write's
    /// (it changes nothing served): the request waits the moment until the write says so
    /// (`carry`), rather than start afresh and work out again everything kept.
    private func refresh() async throws(VaultError) {
        var stamp = try vault.stateStamp()
        if auditWritesUnderWay > 0, stamp != cache.stamp {
            await withCheckedContinuation { afterAuditWrite.append($0) }
            stamp = try vault.stateStamp()
        }
        let today = vault.today
        if !cache.isCurrent(stamp: stamp, today: today) { cache = ServedCache(stamp: stamp, today: today) }
    }

    private var auditWritesUnderWay = 0
    private var afterAuditWrite: [CheckedContinuation<Void, Never>] = []

    // MARK: - Clients and what they may read

    func client(publicKey: [UInt8]) throws(VaultError) -> ClientSummary? { try vault.client(withPublicKey: publicKey) }

    /// The client's live grants; nil when it is no longer registered.
    func access(clientID: RecordID) async throws(VaultError) -> ServedCache.ClientView? {
        try await refresh()
        return try currentView(clientID)
    }

    func prescription(_ id: PrescriptionID) async throws(VaultError) -> PrescriptionRecord {
        try await refresh()
        return try currentRecord(id)
    }

    /// What `GET /VisionPrescription/{id}` answers, in one turn of the actor: the client's view,
    /// the newest version as sent, and the read queued for the audit log.
    enum NewestRead: Sendable {
        case unregistered
        case notGranted
        case found(ByteBuffer)
    }

    func readNewest(clientID: RecordID, resourceID: String) async throws -> NewestRead {
        try await refresh()
        guard let view = try currentView(clientID) else { return .unregistered }
        guard let id = view.prescriptions[resourceID] else { return .notGranted }
        let rendered: ByteBuffer
        if let kept = cache.rendered[id] {
            rendered = kept
        } else {
            rendered = try FHIRResponse.encode(FHIRAPI.prescriptionResource(try currentRecord(id)))
            cache.keep(rendered: rendered, of: id)
        }
        logRead(client: clientID, prescriptions: [id], detail: "api read VisionPrescription")
        return .found(rendered)
    }

    // Below: as the cache says, after `refresh`.

    private func currentView(_ clientID: RecordID) throws(VaultError) -> ServedCache.ClientView? {
        if let kept = cache.clients[clientID] { return kept }
        var view: ServedCache.ClientView?
        if let client = try vault.client(id: clientID) {
            let access = try vault.access(for: client)
            view = ServedCache.ClientView(access: access, prescriptions: Dictionary(uniqueKeysWithValues: access.grants.keys.map {
                (FHIR.prescriptionResourceID($0), $0)
            }))
        }
        if cache.keeps { cache.clients[clientID] = .some(view) }
        return view
    }

    private func currentRecord(_ id: PrescriptionID) throws(VaultError) -> PrescriptionRecord {
        if let kept = cache.records[id] { return kept }
        let record = try vault.prescription(id)
        cache.keep(record)
        return record
    }

    func history(_ id: PrescriptionID) throws(VaultError) -> [PrescriptionRecord] { try vault.history(id) }

    func attachments(of id: PrescriptionID) throws(VaultError) -> [AttachmentInfo] { try vault.attachments(of: id) }

    // MARK: - Attachments, one chunk at a time

    func openStream(_ attachment: AttachmentID, of prescription: PrescriptionID) throws(VaultError) -> (Int, AttachmentInfo) {
        let stream = try vault.attachmentStream(attachment, of: prescription)
        nextStream += 1
        streams[nextStream] = stream
        return (nextStream, stream.info)
    }

    func nextChunk(_ handle: Int) throws(VaultError) -> [UInt8]? {
        guard let stream = streams[handle] else { return nil }
        do {
            let chunk = try stream.next()
            if chunk == nil { streams[handle] = nil }
            return chunk
        } catch {
            streams[handle] = nil
            throw error
        }
    }

    func closeStream(_ handle: Int) { streams[handle] = nil }

    // MARK: - Access requests

    func requestAccess(clientID: RecordID, reason: String, patient: String?, kinds: [PrescriptionKind]) throws(VaultError) -> AccessRequest {
        guard let client = try vault.client(id: clientID) else { throw .clientNotFound(clientID.short) }
        return try vault.requestAccess(for: client, reason: reason, patient: patient, kinds: kinds)
    }

    func accessRequest(_ id: String, clientID: RecordID) throws(VaultError) -> AccessRequest? {
        guard let client = try vault.client(id: clientID) else { return nil }
        return try vault.accessRequests(client: client).first { $0.id == id }
    }

    // MARK: - The audit log

    /// What makes two reads the same entry: the client, what it read, and how.
    private struct ReadKey: Hashable {
        let client: RecordID
        let detail: String
        let prescriptions: [PrescriptionID]
        let attachments: [AttachmentID]
    }

    /// Reads served and not yet written, in order: when each was first served, and how often.
    private var pendingReads: [(key: ReadKey, first: Date, count: Int)] = []
    private var pendingIndex: [ReadKey: Int] = [:]
    /// Entries a failed write left, to go first in the next one.
    private var unwritten: [AuditEvent] = []

    func logRead(client: RecordID, prescriptions: [PrescriptionID], attachments: [AttachmentID] = [], detail: String) {
        let key = ReadKey(client: client, detail: detail, prescriptions: prescriptions, attachments: attachments)
        if let index = pendingIndex[key] {
            pendingReads[index].count += 1
        } else {
            pendingIndex[key] = pendingReads.count
            pendingReads.append((key, Date(), 1))
        }
    }

    /// The reads to write now, one entry per distinct read since the last write: a client that
    /// reads the same thing many times within that second gets one entry (at the first read's
    /// time) that says how many ("api read VisionPrescription (37 times)"). Under load, an
    /// entry per request would cost the writer more than answering them.
    func takeReads() -> [AuditEvent] {
        var events = unwritten
        for (key, first, count) in pendingReads {
            let client = key.client.hex
            events.append(AuditEvent(time: Timestamp.iso(first), actor: client, action: .read, client: client,
                                     prescriptions: key.prescriptions.map(\.hex), attachments: key.attachments.isEmpty ? nil : key.attachments.map(\.hex),
                                     detail: count > 1 ? key.detail + " (\(count) times)" : key.detail))
        }
        unwritten = []
        pendingReads = []
        pendingIndex = [:]
        // The caller writes them now, then calls `carry` or `requeue`: until then a new stamp is
        // waited on, not acted on (`refresh`).
        if !events.isEmpty { auditWritesUnderWay += 1 }
        return events
    }

    /// A write that failed: its entries go first next time (the server says so on stderr).
    func requeue(_ events: [AuditEvent]) {
        unwritten = events + unwritten
        auditWriteEnded()
    }

    private func auditWriteEnded() {
        auditWritesUnderWay -= 1
        let waiting = afterAuditWrite
        afterAuditWrite = []
        for continuation in waiting { continuation.resume() }
    }

    /// After the server's own audit write: if it started from the state the cache was read in
    /// and changed nothing but the log, the cache holds in the state it left. Otherwise the next
    /// request finds another stamp and starts afresh (a carry that comes late is a no-op then).
    func carry(_ write: Vault.ServedReadsWrite) {
        if write.onlyAudit, let to = write.to, cache.keeps, write.from == cache.stamp { cache.carry(to: to) }
        auditWriteEnded()
    }

    var today: CalendarDate { vault.today }
}
