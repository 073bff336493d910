import Foundation
import Logging
import NIOCore
import RxModel
import RxVault

/// The one place the server touches the vault: an actor around the owner's open `Vault`, so
/// requests take turns on its SQLite connection. Every answer is as the file is now: what is
/// kept between requests (`ServedCache`) is dropped as soon as the owner writes anything, so a
/// revoke, a removal or an expiry made meanwhile by the owner's CLI counts at the next request.
/// And it is the file now at the vault's path: one replaced by rename is followed before the
/// request is answered (`live`, `FileFollower`).
///
/// It answers with records and, for the one read kept rendered, the bytes RxVault's FHIR
/// rendering makes (`FHIR.Rendering.api`); it knows nothing of the routes.
actor VaultGateway {
    /// The open vault; nil while the file at the path cannot be served (clients get 503).
    private var vault: Vault?
    private var follower: FileFollower
    private let writer: AuditWriter
    private var cache: ServedCache
    private var streams: [Int: AttachmentStream] = [:]
    private var nextStream = 0

    init(
        vault: sending Vault, writer: AuditWriter, stampReader: StateStampReader?, busyTimeoutMilliseconds: Int32,
        logger: Logger
    ) {
        let reopener = vault.reopener(busyTimeoutMilliseconds: busyTimeoutMilliseconds)
        follower = FileFollower(reopener: reopener, serving: vault, logger: logger)
        cache = ServedCache(stamp: nil, today: reopener.today)
        self.writer = writer
        self.vault = vault
        rounds = stampReader.map(StampRounds.init)
    }

    /// Drops what was kept if the vault's state or the day is not the one it was kept for.
    ///
    /// While the server's own audit write is under way, a new stamp is most likely that write's
    /// (it changes nothing served): the request waits the moment until the write says so
    /// (`carry`), rather than start afresh and work out again everything kept.
    ///
    /// On a database the stamp comes from `StampRounds`, and the gateway serves other requests
    /// while it is read; a request whose round began before the one the cache was made in is
    /// answered from the cache, which is at least as current as its own stamp.
    private func refresh() async throws -> Vault {
        var vault = try await live()
        var fresh = try await currentStamp(vault)
        if auditWritesUnderWay > 0, fresh.stamp != cache.stamp {
            await withCheckedContinuation { afterAuditWrite.append($0) }
            vault = try await live()
            fresh = try await currentStamp(vault)
        }
        if rounds != nil { vault = try await live() }
        let today = vault.today
        if fresh.round < cacheRound, today == cache.today { return vault }
        if !cache.isCurrent(stamp: fresh.stamp, today: today) { cache = ServedCache(stamp: fresh.stamp, today: today) }
        cacheRound = fresh.round
        return vault
    }

    /// Where the stamp comes from on a database (nil for a file: read on the vault's connection).
    private let rounds: StampRounds?
    /// The round whose stamp the cache was made for (always 0 on a file).
    private var cacheRound = 0

    private func currentStamp(_ vault: Vault) async throws -> StampRounds.Fresh {
        guard let rounds else { return StampRounds.Fresh(stamp: try vault.stateStamp(), round: 0) }
        return try await rounds.stamp()
    }

    private var auditWritesUnderWay = 0
    private var afterAuditWrite: [CheckedContinuation<Void, Never>] = []

    // MARK: - The file at the vault's path

    /// A switch to the file now at the path is under way: requests wait for it.
    private var following = false
    private var afterFollowing: [CheckedContinuation<Void, Never>] = []

    /// The vault as the file at its path is now: when that file is not the one open (a stat per
    /// request), the old one is let go of and the new one opened first; while it cannot be
    /// served, 503 (`APIError.fileReplaced`).
    private func live() async throws -> Vault {
        while following { await withCheckedContinuation { afterFollowing.append($0) } }
        if let vault, follower.isCurrent() { return vault }
        following = true
        defer {
            following = false
            let waiting = afterFollowing
            afterFollowing = []
            for continuation in waiting { continuation.resume() }
        }
        if let old = vault {
            // Nothing of the old file is used again: downloads from it stop (`nextChunk`), what
            // was kept goes, the writer finishes the write under way and closes its connection,
            // then this one. The reads still queued are written to the new file, marked.
            streams = [:]
            cache = ServedCache(stamp: nil, today: follower.reopener.today)
            follower.noteCounter(try? old.writeCounter())
            vault = nil
            await writer.release()
            old.emptyWriteAheadLog()
            markQueuedReadsAsServedFromReplacedFile()
            follower.letGo()
        }
        guard let fresh = follower.open(), let file = fresh.openFileNumbers() else { throw APIError.fileReplaced }
        if let why = await writer.follow(follower.reopener, file: file, generation: generation) {
            follower.refuse(why, file: file)
            throw APIError.fileReplaced
        }
        follower.opened(fresh, file: file)
        vault = fresh
        return fresh
    }

    /// The look at the file the flusher takes every second, so that a replaced file is let go
    /// of (and its queued reads written to the new one) even when no request comes.
    func followFile() async {
        _ = try? await live()
    }

    // MARK: - Clients and what they may read

    func client(publicKey: [UInt8]) async throws -> ClientSummary? { try await live().client(withPublicKey: publicKey) }

    /// The client's live grants; nil when it is no longer registered.
    func access(clientID: ClientID) async throws -> ClientView? {
        try currentView(clientID, in: try await refresh())
    }

    func prescription(_ id: PrescriptionID) async throws -> PrescriptionRecord {
        try currentRecord(id, in: try await refresh())
    }

    /// A granted prescription's newest version and when it last changed for the client
    /// (`ClientLastUpdated`), in one turn.
    func served(_ id: PrescriptionID, for view: ClientView) async throws -> (
        record: PrescriptionRecord, lastUpdated: String
    ) {
        let vault = try await refresh()
        guard let grant = view.access.grants[id] else { throw VaultError.notFound(id: id.short) }
        let record = try currentRecord(id, in: vault)
        return (record, try lastUpdated(record, grant: grant, in: vault))
    }

    /// What `GET /VisionPrescription/{id}` answers, in one turn of the actor: the client's view,
    /// the newest version as sent, and the read queued for the audit log.
    enum NewestRead: Sendable {
        case unregistered
        case notGranted
        case found(ByteBuffer)
    }

    func readNewest(clientID: ClientID, resourceID: String) async throws -> NewestRead {
        let vault = try await refresh()
        guard let view = try currentView(clientID, in: vault) else { return .unregistered }
        guard let id = view.prescriptions[resourceID], let grant = view.access.grants[id] else { return .notGranted }
        let rendered: ByteBuffer
        // Kept per client: its meta.lastUpdated counts its own grant (`ClientLastUpdated`).
        let key = ServedCache.RenderedKey(client: clientID, prescription: id)
        if let kept = cache.rendered[key] {
            rendered = kept
        } else {
            let record = try currentRecord(id, in: vault)
            rendered = ByteBuffer(
                bytes: FHIR.Rendering.api.bytes(
                    ClientLastUpdated.resource(record, lastUpdated: try lastUpdated(record, grant: grant, in: vault))))
            cache.keep(rendered: rendered, of: key)
        }
        logRead(client: view.access.client, prescriptions: [id], detail: "api read VisionPrescription")
        return .found(rendered)
    }

    // Below: as the cache says, after `refresh`.

    private func currentView(_ clientID: ClientID, in vault: Vault) throws(VaultError) -> ClientView? {
        if let kept = cache.clients[clientID] { return kept }
        var view: ClientView?
        if let client = try vault.client(id: clientID) {
            let access = try vault.access(for: client)
            view = ClientView(
                access: access,
                prescriptions: Dictionary(
                    uniqueKeysWithValues: access.grants.keys.map {
                        (FHIR.prescriptionResourceID($0), $0)
                    }))
        }
        if cache.keeps { cache.clients[clientID] = .some(view) }
        return view
    }

    private func currentRecord(_ id: PrescriptionID, in vault: Vault) throws(VaultError) -> PrescriptionRecord {
        if let kept = cache.records[id] { return kept }
        let record = try vault.prescription(id)
        cache.keep(record)
        return record
    }

    /// When the prescription last changed for the holder of `grant` (`ClientLastUpdated`); its
    /// newest attachment's time is kept per vault state, as the record is.
    private func lastUpdated(_ record: PrescriptionRecord, grant: GrantSummary, in vault: Vault) throws(VaultError)
        -> String
    {
        guard grant.includesAttachments else {
            return ClientLastUpdated.of(record, grant: grant, newestAttachment: nil)
        }
        let newest: String?
        if let kept = cache.newestAttachment[record.id] {
            newest = kept
        } else {
            newest = try vault.attachments(of: record.id).map(\.metadata.added).max()
            cache.keep(newestAttachment: newest, of: record.id)
        }
        return ClientLastUpdated.of(record, grant: grant, newestAttachment: newest)
    }

    func history(_ id: PrescriptionID) async throws -> [PrescriptionRecord] { try await live().history(id) }

    /// The measurements the client's live grants carry (format 6), with the client's view
    /// read in the same turn (a grant changed between the two cannot widen what is answered);
    /// nil when the client is no longer registered.
    func measurements(clientID: ClientID) async throws -> (ClientView, [GrantedMeasurements])? {
        let vault = try await refresh()
        guard let view = try currentView(clientID, in: vault) else { return nil }
        return (view, try vault.grantedMeasurements(view.access))
    }

    func attachments(of id: PrescriptionID) async throws -> [AttachmentInfo] { try await live().attachments(of: id) }

    // MARK: - Attachments, one chunk at a time

    func openStream(_ attachment: AttachmentID, of prescription: PrescriptionID) async throws -> (Int, AttachmentInfo) {
        let stream = try await live().attachmentStream(attachment, of: prescription)
        nextStream += 1
        streams[nextStream] = stream
        return (nextStream, stream.info)
    }

    /// The next chunk; nil at the verified end. A stream the gateway dropped because its file
    /// was replaced throws: the response stops short, and the client sees a truncated body.
    func nextChunk(_ handle: Int) throws(VaultError) -> [UInt8]? {
        guard let stream = streams[handle] else {
            throw .internalError("the vault's file was replaced while the attachment was being sent")
        }
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

    func requestAccess(
        clientID: ClientID, reason: String, patient: String?, kinds: [PrescriptionKind], ownerWrite: Bool
    ) async throws -> AccessRequest {
        let vault = try await live()
        guard let client = try vault.client(id: clientID) else { throw VaultError.clientNotFound(clientID.short) }
        return try vault.requestAccess(
            for: client, reason: reason, patient: patient, kinds: kinds, ownerWrite: ownerWrite)
    }

    func accessRequest(_ id: String, clientID: ClientID) async throws -> AccessRequest? {
        let vault = try await live()
        guard let client = try vault.client(id: clientID) else { return nil }
        return try vault.accessRequests(client: client).first { $0.id == id }
    }

    // MARK: - The audit log

    /// What makes two reads the same entry: the client, what it read, and how.
    private struct ReadKey: Hashable {
        let client: ClientID
        let detail: String
        let prescriptions: [PrescriptionID]
        let attachments: [AttachmentID]
    }

    /// Reads served and not yet written, in order: when each was first served, and how often.
    private var pendingReads: [(key: ReadKey, first: Date, count: Int)] = []
    private var pendingIndex: [ReadKey: Int] = [:]
    /// Entries a failed write left, to go first in the next one.
    private var unwritten: [AuditEvent] = []
    /// The public key of each client whose reads were served, as it was served: an append
    /// (`ServeSettings.ownerWrites` false) authenticates a read for its client with it, even
    /// once the client is removed.
    private var clientKeys: [ClientID: [UInt8]] = [:]

    func logRead(
        client: ClientSummary, prescriptions: [PrescriptionID], attachments: [AttachmentID] = [], detail: String
    ) {
        clientKeys[client.id] = client.recipient.publicKey
        let key = ReadKey(client: client.id, detail: detail, prescriptions: prescriptions, attachments: attachments)
        if let index = pendingIndex[key] {
            pendingReads[index].count += 1
        } else {
            pendingIndex[key] = pendingReads.count
            pendingReads.append((key, Date(), 1))
        }
    }

    /// Reads served from a file that was then replaced and not written yet go to the new file
    /// (the same vault, proved by its key), saying where they were served from: the old file is
    /// deleted, or kept aside by whoever replaced it, and either way no one reads its log again.
    /// `generation` counts the files served, so a batch the switch overtook is marked too.
    private var generation = 0
    static let replacedNote = " (served from the file since replaced)"

    private func markQueuedReadsAsServedFromReplacedFile() {
        unwritten = (unwritten + queuedEvents()).map(Self.servedFromReplacedFile)
        generation += 1
    }

    static func servedFromReplacedFile(_ event: AuditEvent) -> AuditEvent {
        var marked = event
        if marked.detail?.hasSuffix(replacedNote) != true { marked.detail = (marked.detail ?? "") + replacedNote }
        return marked
    }

    /// Reads served and not written yet (entries, one per distinct read): what is lost if the
    /// server stops before a file it may write them to is back.
    var unrecordedReads: Int { unwritten.count + pendingReads.count }

    /// Entries for the queued reads, one per distinct read since the last write: a client that
    /// reads the same thing many times within that second gets one entry (at the first read's
    /// time) that says how many ("api read VisionPrescription (37 times)"). Under load, an
    /// entry per request would cost the writer more than answering them.
    private func queuedEvents() -> [AuditEvent] {
        let events = pendingReads.map { key, first, count in
            let client = key.client.hex
            return AuditEvent(
                time: Timestamp.iso(first), actor: client, action: .read, client: client,
                prescriptions: key.prescriptions.map(\.hex),
                attachments: key.attachments.isEmpty ? nil : key.attachments.map(\.hex),
                detail: count > 1 ? key.detail + " (\(count) times)" : key.detail)
        }
        pendingReads = []
        pendingIndex = [:]
        return events
    }

    /// The reads to write now, and which file they were served from (`AuditWriter.write`
    /// writes them only into that one).
    struct ReadBatch: Sendable {
        let events: [AuditEvent]
        let generation: Int
        let clientKeys: [ClientID: [UInt8]]
    }

    func takeReads() -> ReadBatch {
        let events = unwritten + queuedEvents()
        unwritten = []
        // The caller writes them now, then calls `carry` or `requeue`: until then a new stamp is
        // waited on, not acted on (`refresh`).
        if !events.isEmpty { auditWritesUnderWay += 1 }
        return ReadBatch(events: events, generation: generation, clientKeys: clientKeys)
    }

    /// A write that failed or did not reach the live file: its entries go first next time (a
    /// failure is said on stderr).
    func requeue(_ batch: ReadBatch) {
        unwritten =
            (batch.generation == generation ? batch.events : batch.events.map(Self.servedFromReplacedFile)) + unwritten
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
}
