import Foundation
import Logging
import NIOCore
import RxModel
import RxVault

/// What a client may read now: the client, its live grants resolved at one state of the vault,
/// and the FHIR resource id of each granted prescription (a UUID named by its id).
///
/// A capability: its initializer is private to this file, so the only way to get one is
/// `VaultGateway.view(for:)`, which takes an `AuthenticatedClient` (made only from a bearer token
/// a server of this vault sealed). `ClientAuthentication` calls it once per request and puts the
/// view in the request's context; every read the gateway offers takes it and answers only what it
/// grants, checked again against the grants as they are in the read's own turn.
struct ClientView: Sendable {
    let access: ClientAccess
    let prescriptions: [String: PrescriptionID]
    /// The granted prescriptions, in one order (by id) for every walk over them.
    let granted: [PrescriptionID]
    /// Which of the gateway's caches it was resolved in (`VaultGateway.cacheEpoch`): while that
    /// cache is current, the view is as the grants are now.
    fileprivate let epoch: Int

    var clientID: ClientID { access.client.id }

    fileprivate init(access: ClientAccess, epoch: Int) {
        self.access = access
        self.epoch = epoch
        prescriptions = Dictionary(
            uniqueKeysWithValues: access.grants.keys.map { (FHIR.prescriptionResourceID($0), $0) })
        granted = access.grants.keys.sorted { $0.hex < $1.hex }
    }
}

/// The one place the server touches the vault: an actor around the owner's open `Vault`, so
/// requests take turns on its connection. Every answer is as the file is now: what is
/// kept between requests (`ServedCache`) is dropped as soon as the owner writes anything, so a
/// revoke, a removal or an expiry made meanwhile by the owner's CLI counts at the next request.
/// And it is the file now at the vault's path: one replaced by rename is followed before the
/// request is answered (`live`, `FileFollower`).
///
/// Its reads are scoped to a `ClientView`: each takes one, and in the same turn (one state of the
/// vault) narrows it to the client's grants as they are now and reads only what that leaves. The
/// open vault is `private` to this file and so is every owner-powered read: a route can name no
/// call that reads a prescription, a version, an attachment or a patient without a view, and a
/// view grants only what the owner granted its client. So a route that reads an ungranted id does
/// not compile; at most it asks and is answered "not granted".
///
/// Its turns run on a thread of their own (`StoreThread`): the store's calls block (SQLite's
/// busy handler, PostgreSQL's round trips), and must not block Swift's cooperative pool.
///
/// It answers with records and, for the one read kept rendered, the bytes RxVault's FHIR
/// rendering makes (`FHIR.Rendering.api`); it knows nothing of the routes.
actor VaultGateway {
    private nonisolated let thread = StoreThread(name: "rxvault-gateway")
    nonisolated var unownedExecutor: UnownedSerialExecutor { thread.asUnownedSerialExecutor() }

    /// Whether this turn runs on the actor's own thread (for the tests: never the pool's).
    var runsOnItsThread: Bool { thread.isCurrent }

    /// The open vault; nil while the file at the path cannot be served (clients get 503).
    private var vault: Vault?
    private var follower: FileFollower
    private let writer: AuditWriter
    private var cache: ServedCache
    /// Counts the caches made (one carried to the state the server's own audit write left is the
    /// same one): a view resolved in the current one needs no second look at the grants (`scoped`).
    private var cacheEpoch = 0

    /// Drops what was kept: from now on, for `stamp` and `today`.
    private func startCache(stamp: StateStamp?, today: CalendarDate) {
        cache = ServedCache(stamp: stamp, today: today)
        cacheEpoch += 1
    }
    private var streams: [Int: AttachmentStream] = [:]
    private var nextStream = 0
    private var reads = ServedReadQueue()

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
        if !cache.isCurrent(stamp: fresh.stamp, today: today) { startCache(stamp: fresh.stamp, today: today) }
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
            startCache(stamp: nil, today: follower.reopener.today)
            follower.noteCounter(try? old.writeCounter())
            vault = nil
            await writer.release()
            old.emptyWriteAheadLog()
            reads.markServedFromReplacedFile()
            follower.letGo()
        }
        guard let fresh = follower.open(), let file = fresh.openFileNumbers() else { throw APIError.fileReplaced }
        if let why = await writer.follow(follower.reopener, file: file, generation: reads.generation) {
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

    /// The client whose recipient this is (to issue it a challenge; the client proves it holds the
    /// identity before it gets a token): its id, nothing it was granted.
    func clientID(publicKey: [UInt8]) async throws -> ClientID? {
        try await live().client(withPublicKey: publicKey)?.id
    }

    /// The authenticated client's view: its live grants, as the vault is now. The one maker of a
    /// `ClientView`, called by `ClientAuthentication` once per request. Throws `unregistered`
    /// for a client removed since its token was issued.
    func view(for client: AuthenticatedClient) async throws -> ClientView {
        guard let view = try currentView(client.id, in: try await refresh()) else { throw APIError.unregistered }
        return view
    }

    /// The start of every read: the vault as it is now, and `asked` narrowed to the grants its
    /// client holds now, in this turn. A view resolved in the cache still current is as the grants
    /// are (nothing was written since); otherwise it keeps only what is still granted, on the
    /// terms granted now, so a revoke between the request's view and its read cannot leak.
    private func scoped(_ asked: ClientView) async throws -> (Vault, ClientView) {
        let vault = try await refresh()
        if cache.keeps, asked.epoch == cacheEpoch { return (vault, asked) }
        guard let now = try currentView(asked.clientID, in: vault) else { throw APIError.unregistered }
        if now.access.grants.keys.allSatisfy({ asked.access.grants[$0] != nil }) { return (vault, now) }
        return (vault, ClientView(access: now.access.narrowed(to: Set(asked.access.grants.keys)), epoch: now.epoch))
    }

    /// A prescription's newest version as served to one client: with when it last changed for
    /// that client (`ClientLastUpdated`).
    struct Served: Sendable {
        let record: PrescriptionRecord
        let lastUpdated: String
    }

    /// What `GET /VisionPrescription` searches: every granted prescription's newest version.
    func newestVersions(for asked: ClientView) async throws -> [Served] {
        let (vault, view) = try await scoped(asked)
        return try view.granted.map { id in try served(id, view, in: vault) }
    }

    /// What `GET /VisionPrescription/{id}` answers: the newest version as sent (kept rendered per
    /// client and vault state), the read queued for the audit log; nil when not granted.
    func newestRendered(_ resourceID: String, for asked: ClientView) async throws -> ByteBuffer? {
        let (vault, view) = try await scoped(asked)
        guard let id = view.prescriptions[resourceID] else { return nil }
        // Kept per client: its meta.lastUpdated counts its own grant (`ClientLastUpdated`).
        let key = ServedCache.RenderedKey(client: view.clientID, prescription: id)
        let rendered: ByteBuffer
        if let kept = cache.rendered[key] {
            rendered = kept
        } else {
            let newest = try served(id, view, in: vault)
            rendered = ByteBuffer(
                bytes: FHIR.Rendering.api.bytes(
                    ClientLastUpdated.resource(newest.record, lastUpdated: newest.lastUpdated)))
            cache.keep(rendered: rendered, of: key)
        }
        logRead(view, prescriptions: [id], detail: "api read VisionPrescription")
        return rendered
    }

    /// The versions a grant covers (`_history`): the one current when it was granted and every
    /// later one, oldest first, and the newest as served; nil when not granted.
    func coveredVersions(_ resourceID: String, for asked: ClientView) async throws -> (
        id: PrescriptionID, versions: [PrescriptionRecord], newest: Served
    )? {
        let (vault, view) = try await scoped(asked)
        guard let id = view.prescriptions[resourceID], let grant = view.access.grants[id] else { return nil }
        let all = try vault.history(id)
        let first = all.lastIndex { $0.recorded <= grant.granted } ?? 0
        return (id, Array(all[first...]), try served(id, view, in: vault))
    }

    /// The Patient a granted prescription names (`GET /Patient/{id}`, `_include`), with that
    /// prescription (the read the audit log records); nil when no granted prescription names it.
    func patient(_ resourceID: String, for asked: ClientView) async throws -> (Patient, via: PrescriptionID)? {
        let (vault, view) = try await scoped(asked)
        for id in view.granted {
            let patient = try currentRecord(id, in: vault).prescription.patient
            if FHIR.patientResourceID(patient) == resourceID { return (patient, id) }
        }
        return nil
    }

    /// The measurements the client's live grants carry (format 6), by patient.
    func measurements(for asked: ClientView) async throws -> [GrantedMeasurements] {
        let (vault, view) = try await scoped(asked)
        return try vault.grantedMeasurements(view.access)
    }

    /// The attachments the client may read (`GET /DocumentReference`): per granted prescription
    /// whose grant includes them (only `related`'s when given), its newest version and attachments.
    func attachments(related: String?, for asked: ClientView) async throws -> [(
        record: PrescriptionRecord, attachments: [AttachmentInfo]
    )] {
        let (vault, view) = try await scoped(asked)
        return try view.granted.filter { id in
            view.access.allowsAttachments(of: id) && (related == nil || related == FHIR.prescriptionResourceID(id))
        }.map { id in (try currentRecord(id, in: vault), try vault.attachments(of: id)) }
    }

    // Below: as the cache says, after `refresh`.

    private func currentView(_ clientID: ClientID, in vault: Vault) throws(VaultError) -> ClientView? {
        if let kept = cache.clients[clientID] { return kept }
        var view: ClientView?
        if let client = try vault.client(id: clientID) {
            view = ClientView(access: try vault.access(for: client), epoch: cacheEpoch)
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

    /// A granted prescription's newest version and when it last changed for the view's client.
    private func served(_ id: PrescriptionID, _ view: ClientView, in vault: Vault) throws -> Served {
        guard let grant = view.access.grants[id] else { throw APIError.notFound() }
        let record = try currentRecord(id, in: vault)
        return Served(record: record, lastUpdated: try lastUpdated(record, grant: grant, in: vault))
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

    // MARK: - Attachments, one chunk at a time

    /// An open attachment stream: only `openAttachment` makes one.
    struct StreamHandle: Sendable {
        fileprivate let number: Int
    }

    /// Opens the attachment `GET /Binary/{id}` names, if a granted prescription whose grant
    /// includes attachments has it; the read is queued for the audit log.
    func openAttachment(_ resourceID: String, for asked: ClientView) async throws -> (StreamHandle, AttachmentInfo)? {
        let (vault, view) = try await scoped(asked)
        for id in view.granted where view.access.allowsAttachments(of: id) {
            for info in try vault.attachments(of: id) where FHIR.attachmentResourceID(info.id) == resourceID {
                let stream = try vault.attachmentStream(info.id, of: id)
                nextStream += 1
                streams[nextStream] = stream
                logRead(
                    view, prescriptions: [id], attachments: [info.id], detail: "api read Binary \(info.metadata.name)")
                return (StreamHandle(number: nextStream), stream.info)
            }
        }
        return nil
    }

    /// The next chunk; nil at the verified end. A stream the gateway dropped because its file
    /// was replaced throws: the response stops short, and the client sees a truncated body.
    func nextChunk(_ handle: StreamHandle) throws(VaultError) -> [UInt8]? {
        guard let stream = streams[handle.number] else {
            throw .internalError("the vault's file was replaced while the attachment was being sent")
        }
        do {
            let chunk = try stream.next()
            if chunk == nil { streams[handle.number] = nil }
            return chunk
        } catch {
            streams[handle.number] = nil
            throw error
        }
    }

    func closeStream(_ handle: StreamHandle) { streams[handle.number] = nil }

    // MARK: - Access requests

    /// A request by the view's client for the owner's attention (written to the audit log).
    func requestAccess(
        for asked: ClientView, reason: String, patient: String?, kinds: [PrescriptionKind], ownerWrite: Bool
    ) async throws -> AccessRequest {
        let (vault, view) = try await scoped(asked)
        return try vault.requestAccess(
            for: view.access.client, reason: reason, patient: patient, kinds: kinds, ownerWrite: ownerWrite)
    }

    /// One of the view's client's own requests; nil for any other id.
    func accessRequest(_ id: String, for asked: ClientView) async throws -> AccessRequest? {
        let (vault, view) = try await scoped(asked)
        return try vault.accessRequests(client: view.access.client).first { $0.id == id }
    }

    // MARK: - The audit log

    /// Queues a read served to the view's client (nothing when nothing was read).
    func logRead(
        _ view: ClientView, prescriptions: [PrescriptionID], attachments: [AttachmentID] = [], detail: String
    ) {
        guard !prescriptions.isEmpty else { return }
        reads.add(client: view.access.client, prescriptions: prescriptions, attachments: attachments, detail: detail)
    }

    /// Reads served and not written yet (entries): what is lost if the server stops before a
    /// file it may write them to is back.
    var unrecordedReads: Int { reads.count }

    func takeReads() -> ServedReadQueue.Batch {
        let batch = reads.take()
        // The caller writes them now, then calls `carry` or `requeue`: until then a new stamp is
        // waited on, not acted on (`refresh`).
        if !batch.events.isEmpty { auditWritesUnderWay += 1 }
        return batch
    }

    /// A write that failed or did not reach the live file: its entries go first next time (a
    /// failure is said on stderr).
    func requeue(_ batch: ServedReadQueue.Batch) {
        reads.requeue(batch)
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
