import Foundation
import RxModel
import RxVault

/// The one place the server touches the vault: an actor around the owner's open `Vault`, so
/// requests take turns on its SQLite connection. Every answer is read from the file as it is
/// now (a revoke, a removal or an expiry made meanwhile by the owner's CLI counts at once).
actor VaultGateway {
    let vault: Vault
    /// Reads served and not yet in the audit log (written at least every second, and at shutdown).
    private var pendingReads: [AuditEvent] = []
    private var streams: [Int: AttachmentStream] = [:]
    private var nextStream = 0

    init(vault: sending Vault) {
        self.vault = vault
    }

    // MARK: - Clients and what they may read

    func client(publicKey: [UInt8]) throws(VaultError) -> ClientSummary? { try vault.client(withPublicKey: publicKey) }

    /// The client's live grants; nil when it is no longer registered.
    func access(clientID: RecordID) throws(VaultError) -> ClientAccess? {
        guard let client = try vault.client(id: clientID) else { return nil }
        return try vault.access(for: client)
    }

    func prescription(_ id: PrescriptionID) throws(VaultError) -> PrescriptionRecord { try vault.prescription(id) }

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
        try vault.logServedReads(batch)
        pendingReads.removeFirst(batch.count)
    }

    var today: CalendarDate { vault.today }
}
