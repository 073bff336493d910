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
    /// Reads served and not yet in the audit log (written at least every second, and at shutdown).
    private var pendingReads: [AuditEvent] = []
    private var streams: [Int: AttachmentStream] = [:]
    private var nextStream = 0

    init(vault: sending Vault) {
        self.vault = vault
        cache = ServedCache(stamp: nil, today: vault.today)
    }

    /// Drops what was kept if the vault's state or the day is not the one it was kept for.
    private func refresh() throws(VaultError) {
        let stamp = try vault.stateStamp()
        let today = vault.today
        if !cache.isCurrent(stamp: stamp, today: today) { cache = ServedCache(stamp: stamp, today: today) }
    }

    // MARK: - Clients and what they may read

    func client(publicKey: [UInt8]) throws(VaultError) -> ClientSummary? { try vault.client(withPublicKey: publicKey) }

    /// The client's live grants; nil when it is no longer registered.
    func access(clientID: RecordID) throws(VaultError) -> ServedCache.ClientView? {
        try refresh()
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

    func prescription(_ id: PrescriptionID) throws(VaultError) -> PrescriptionRecord {
        try refresh()
        if let kept = cache.records[id] { return kept }
        let record = try vault.prescription(id)
        cache.keep(record)
        return record
    }

    /// The newest version of a prescription as `GET /VisionPrescription/{id}` sends it.
    func renderedPrescription(_ id: PrescriptionID) throws -> ByteBuffer {
        let record = try prescription(id)
        if let kept = cache.rendered[id] { return kept }
        let buffer = try FHIRResponse.encode(FHIRAPI.prescriptionResource(record))
        cache.keep(rendered: buffer, of: id)
        return buffer
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

    func logRead(_ event: AuditEvent) { pendingReads.append(event) }

    /// Writes the served reads to the owner's audit log. On failure they stay queued for the
    /// next flush (the server says so on stderr).
    func flushReads() throws(VaultError) {
        guard !pendingReads.isEmpty else { return }
        let batch = pendingReads
        let write = try vault.logServedReads(batch)
        pendingReads.removeFirst(batch.count)
        // Only our audit entries changed since the cache was read: it holds in the new state too
        // (otherwise the next request finds another stamp and starts afresh).
        if write.onlyAudit, let to = write.to, cache.keeps, write.from == cache.stamp { cache.carry(to: to) }
    }

    var today: CalendarDate { vault.today }
}
