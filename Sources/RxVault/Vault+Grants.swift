import Foundation
import RxCrypto
import RxModel
import RxStore

/// Per-prescription read grants (DESIGN.md, "Clients and grants").
///
/// A grant seals the current version's data key (and its attachments' keys unless excluded) to
/// the client's X25519 key with `crypto_box_seal`; the client needs nothing else to read, and
/// can read nothing else. Every change to what a prescription's grantees may read re-seals:
/// an edit or attachment change re-seals the new keys; a revoke or an expiry re-keys the
/// prescription (new data key, new version) so the old sealed key is worthless and gone.
extension Vault {
    /// Grants `client` read access to `prescriptions`, or changes the terms of its grants on them.
    ///
    /// What is not restated is kept: `expires` nil keeps an existing grant's end (a new grant has
    /// none), `attachments` nil keeps its attachment setting (a new grant includes them),
    /// `measurements` nil keeps whether the patient's measurements are carried (a new grant does
    /// not carry them). So a repeated grant never widens access by omission: removing an end
    /// (`.never`) or adding attachments or measurements (`true`) must be asked for. Returns, per prescription, what changed. A grant
    /// that changes nothing writes nothing, not even the housekeeping of a write; each change is
    /// one audit entry saying what it was.
    @discardableResult
    public func grant(
        _ client: ClientSummary, _ prescriptions: [PrescriptionID], expires: GrantExpiry?,
        attachments: Bool?, measurements: Bool? = nil
    ) throws(VaultError) -> [GrantOutcome] {
        if case .until(let day) = expires, day < clock.today() {
            throw .invalidInput("grant expiry \(day) is in the past")
        }
        var seen: Set<PrescriptionID> = []
        let wanted = prescriptions.filter { seen.insert($0).inserted }
        func plan(_ prescriptionID: PrescriptionID) throws -> (GrantOutcome, existing: GrantSummary?) {
            guard try store.latestVersion(of: prescriptionID) != nil else {
                throw VaultError.notFound(id: prescriptionID.short)
            }
            let existing = try storedGrants(clientID: client.id, prescriptionID: prescriptionID).first
                .map { try openGrant($0, client: client) }
            // An expired grant (not swept yet) counts as none: it gives nothing to keep.
            let before = existing.flatMap {
                $0.isActive(on: clock.today())
                    ? GrantTerms(
                        expires: $0.expires, attachments: $0.includesAttachments,
                        measurements: $0.includesMeasurements) : nil
            }
            let after = GrantTerms(
                expires: expires.map { if case .until(let day) = $0 { day } else { nil } } ?? before?.expires,
                attachments: attachments ?? before?.attachments ?? true,
                measurements: measurements ?? before?.measurements ?? false)
            return (GrantOutcome(prescriptionID: prescriptionID, before: before, after: after), existing)
        }
        let planned = try read { try wanted.map { try plan($0).0 } }
        if !planned.contains(where: \.changed) { return planned }
        let now = clock.timestamp()
        var replaced = false
        let outcomes: [GrantOutcome] = try perform { write in
            // Planned again inside the write: another process may have changed the grants since.
            try wanted.map { prescriptionID in
                // Its rows verified against the owner's manifest before any is relied on.
                if try store.latestVersion(of: prescriptionID) != nil { try touch(prescriptionID.hex, in: write) }
                let (outcome, existing) = try plan(prescriptionID)
                guard outcome.changed else { return outcome }
                replaced = replaced || existing != nil
                try writeGrant(
                    id: existing?.id ?? GrantID.random(), client: client, prescriptionID: prescriptionID,
                    info: GrantInfo(
                        schema: 1, granted: existing?.granted ?? now, expires: outcome.after.expires,
                        attachments: outcome.after.attachments, measurements: outcome.after.measurements ? true : nil,
                        by: try (existing.map { $0.stamp } ?? stamp(write))?.text,
                        terms: try existing == nil ? nil : stamp(write)?.text),
                    in: write)
                try audit(
                    AuditEvent(
                        time: now, actor: AuditEvent.ownerActor, action: .grant, client: client.id.hex,
                        prescriptions: [prescriptionID.hex], detail: outcome.description))
                return outcome
            }
        }
        // A replaced grant's old sealed keys (perhaps with attachment keys no longer granted)
        // must not linger in the write-ahead log.
        if replaced { purge() }
        return outcomes
    }

    /// Grants with every term stated: until `expires` (nil: no end), with or without attachments.
    @discardableResult
    public func grant(
        _ client: ClientSummary, _ prescriptions: [PrescriptionID], expires: CalendarDate?,
        includeAttachments: Bool
    ) throws(VaultError) -> [GrantOutcome] {
        try grant(client, prescriptions, expires: expires.map { .until($0) } ?? .never, attachments: includeAttachments)
    }

    /// Revokes the client's grants on `prescriptions` (all of its grants when nil) and re-keys each
    /// prescription, so the keys the client held open nothing stored from now on.
    /// Returns the prescriptions whose grant was revoked.
    @discardableResult
    public func revoke(_ client: ClientSummary, _ prescriptions: [PrescriptionID]?) throws(VaultError)
        -> [PrescriptionID]
    {
        // Nothing to revoke writes nothing; a prescription the client has no grant on is "not
        // found", said before anything is revoked.
        let held = try read { Set(try storedGrants(clientID: client.id, prescriptionID: nil).map(\.prescriptionID)) }
        if let prescriptions, let missing = prescriptions.first(where: { !held.contains($0) }) {
            throw .grantNotFound(client: client.name, prescription: missing.short)
        }
        if held.isEmpty { return [] }
        let revoked: [PrescriptionID] = try perform { write in
            var done: [PrescriptionID] = []
            let grants = try storedGrants(clientID: client.id, prescriptionID: nil)
            let wanted = prescriptions.map { Set($0) }
            for grant in grants where wanted?.contains(grant.prescriptionID) ?? true {
                try touch(grant.prescriptionID.hex, in: write)
                try store.deleteGrant(grant.row.id)
                try rekey(prescriptionID: grant.prescriptionID, reason: "re-keyed: access revoked", in: write)
                done.append(grant.prescriptionID)
            }
            // Checked again inside the write: the grant may have expired (and been swept just
            // now) or been revoked by another process since.
            if let prescriptions, let missing = prescriptions.first(where: { p in !done.contains(p) }) {
                throw VaultError.grantNotFound(client: client.name, prescription: missing.short)
            }
            if !done.isEmpty {
                try audit(
                    AuditEvent(
                        time: clock.timestamp(), actor: AuditEvent.ownerActor, action: .revoke, client: client.id.hex,
                        prescriptions: done.map(\.hex)))
            }
            return done
        }
        purge()
        return revoked
    }

    /// Who can read what: every grant (or one client's, or one prescription's), rows verified.
    public func grants(client: ClientSummary? = nil, prescription: PrescriptionID? = nil) throws(VaultError)
        -> [GrantSummary]
    {
        try reading { read in
            let clients = Dictionary(uniqueKeysWithValues: try clientSummaries().map { ($0.id, $0) })
            let grants = try storedGrants(clientID: client?.id, prescriptionID: prescription)
            let lastReads = try lastReadTimes(
                of: Set(grants.map { "\($0.row.clientID) \($0.prescriptionID)" }), in: read)
            // Only grants the owner holds current are listed: a revoked one put back is refused.
            for id in Set(grants.map(\.prescriptionID) + [prescription].compactMap { $0 }).sorted() {
                try verifyCurrent(id.hex, in: read)
            }
            return try grants.map { grant in
                guard let owner = clients[grant.row.clientID] else {
                    throw VaultError.integrity("grant \(grant.row.id.short) names no client")
                }
                var summary = try openGrant(grant, client: owner)
                summary.lastRead = lastReads["\(grant.row.clientID) \(grant.prescriptionID)"]
                return summary
            }
        }
    }

    // MARK: - Sealing grants

    /// Seals the current keys of `prescriptionID` to the client and stores the grant row.
    func writeGrant(
        id: GrantID, client: ClientSummary, prescriptionID: PrescriptionID, info: GrantInfo, in write: OwnerWrite
    ) throws {
        try touch(prescriptionID.hex, in: write)
        guard let latest = try store.latestVersion(of: prescriptionID) else {
            throw VaultError.notFound(id: prescriptionID.short)
        }
        var attachmentIDs: [String] = []
        var attachmentKeys: [SecretBytes] = []
        if info.attachments {
            for row in try store.attachments(of: prescriptionID) {
                attachmentIDs.append(row.id.hex)
                attachmentKeys.append(try attachmentDataKey(of: row))
            }
        }
        // Format 4: the patient travels in the sealed context (its record is the owner's alone);
        // format 6: with its measurements, when the grant includes them.
        let patient = header.formatVersion >= 4 ? try open(latest, in: write).prescription.patient : nil
        let measurements = info.measurements == true ? try grantedMeasurements(of: patient, in: write) : nil
        let keys = GrantKeys(
            context: .init(
                schema: 1, grant: id.hex, client: client.id.hex, prescription: prescriptionID.hex,
                version: latest.version, expires: info.expires, attachments: attachmentIDs,
                patient: patient, measurements: measurements),
            dataKey: try dataKey(of: latest), attachmentKeys: attachmentKeys)
        let sealedKeys = try X25519.seal(try keys.encoded(), to: client.recipient.publicKey)
        var info = info
        info.prescription = prescriptionID.hex
        let reference = try grantReference(clientID: client.id, prescriptionID: prescriptionID)
        let sealedInfo = try sealOwnerInfo(
            info, purpose: .grantInfo, fields: [.text(id.hex), .text(client.id.hex), .text(reference)])
        var row = GrantRecord(
            id: id, clientID: client.id, reference: reference, sealedKeys: sealedKeys, info: sealedInfo, mac: [])
        row.mac = try MAC.authenticate(grantRowMessage(row, version: latest.version), key: grantMACKey)
        try store.upsert(row)
    }

    /// The MAC covers the row and the prescription version it was sealed for. Every revoke,
    /// removal or expiry re-keys (a new version), so a revoked grant row put back from an old
    /// copy of the file no longer verifies and is never re-sealed.
    func grantRowMessage(_ row: GrantRecord, version: Int) -> [UInt8] {
        AssociatedData.build(
            .grantRow,
            [
                .bytes(header.vaultID), .text(row.id.hex), .text(row.clientID.hex), .text(row.reference),
                .int(version), .bytes(row.sealedKeys), .bytes(row.info)
            ])
    }

    /// Verifies and opens a grant; `version` is the prescription version it must have been
    /// sealed for (the newest one, unless a new version is being written).
    func openGrant(_ grant: StoredGrant, client: ClientSummary, version: Int? = nil) throws -> GrantSummary {
        let row = grant.row
        let sealedFor = try version ?? (store.latestVersion(of: grant.prescriptionID)?.version ?? 0)
        guard MAC.verify(row.mac, grantRowMessage(row, version: sealedFor), key: grantMACKey) else {
            throw VaultError.integrity("grant \(row.id.short) is forged or altered (its MAC does not verify)")
        }
        let info = try grantInfo(row)
        func write(_ text: String?, that what: String) throws(VaultError) -> WriteStamp? {
            guard let text else { return nil }
            guard let stamp = WriteStamp(text: text) else {
                throw .integrity("grant \(row.id.short) names no write that \(what)")
            }
            return stamp
        }
        return GrantSummary(
            id: row.id, client: client, prescriptionID: grant.prescriptionID, granted: info.granted,
            expires: info.expires,
            includesAttachments: info.attachments, includesMeasurements: info.measurements ?? false, lastRead: nil,
            stamp: try write(info.by, that: "made it"), termsStamp: try write(info.terms, that: "set its terms"))
    }

    // MARK: - Finding grant rows

    /// A grant row and the prescription it is for.
    struct StoredGrant {
        let row: GrantRecord
        let prescriptionID: PrescriptionID
    }

    /// Grant rows (one client's, one prescription's, both, or all) with their prescriptions. In
    /// format 1 and 2 the row names it; in format 3 the owner's sealed info does, and the row's
    /// reference must be the one the owner computes for its client and that prescription, so a
    /// row moved to another client or reference is refused here. The rows' MACs are checked by
    /// `openGrant`. A prescription's grants cost one reference per client (an index lookup each);
    /// in a read over many prescriptions (`batch`), the client list and every grant row are read
    /// once instead.
    func storedGrants(clientID: ClientID?, prescriptionID: PrescriptionID?, batch: ReadBatch? = nil) throws
        -> [StoredGrant]
    {
        guard header.formatVersion >= 3 else {
            // The reference is the prescription id (32 hex digits, as the store checked).
            return try store.grants(clientID: clientID, references: prescriptionID.map { [$0.hex] })
                .map { StoredGrant(row: $0, prescriptionID: try PrescriptionID.checked($0.reference)) }
        }
        var references: [String]?
        if let prescriptionID {
            let clientIDs = try clientID.map { [$0] } ?? allClientIDs(batch: batch)
            references = try clientIDs.map { try grantReference(clientID: $0, prescriptionID: prescriptionID) }
        }
        let rows: [GrantRecord]
        if let batch, clientID == nil, let references {
            let all = try allGrantsByReference(batch: batch)
            rows = references.flatMap { all[$0] ?? [] }
        } else {
            rows = try store.grants(clientID: clientID, references: references)
        }
        return try verifiedGrants(rows)
    }

    /// The grants of every one of `prescriptionIDs` (of every client), in one query.
    func storedGrants(of prescriptionIDs: [PrescriptionID]) throws -> [StoredGrant] {
        guard header.formatVersion >= 3 else {
            return try prescriptionIDs.flatMap { try storedGrants(clientID: nil, prescriptionID: $0) }
        }
        let clientIDs = try allClientIDs(batch: nil)
        var references: [String] = []
        for prescriptionID in prescriptionIDs {
            for clientID in clientIDs {
                references.append(try grantReference(clientID: clientID, prescriptionID: prescriptionID))
            }
        }
        // A few hundred references to a query: statements have a limit on their parameters.
        var rows: [GrantRecord] = []
        for chunk in references.chunks(of: 500) {
            rows += try store.grants(clientID: nil, references: Array(chunk))
        }
        return try verifiedGrants(rows)
    }

    /// Grant rows with the prescription each names, refusing one whose reference is not its
    /// client's and prescription's.
    private func verifiedGrants(_ rows: [GrantRecord]) throws -> [StoredGrant] {
        try rows.map { row in
            guard let prescription = try grantInfo(row).prescription.flatMap(PrescriptionID.init(hex:)),
                try grantReference(clientID: row.clientID, prescriptionID: prescription) == row.reference
            else {
                throw VaultError.integrity(
                    "grant \(row.id.short)'s reference is not its client's and prescription's (altered, or moved from another row)"
                )
            }
            return StoredGrant(row: row, prescriptionID: prescription)
        }
    }

    /// In a read over many prescriptions: every grant row by its reference, read once.
    private func allGrantsByReference(batch: ReadBatch) throws -> [String: [GrantRecord]] {
        if let rows = batch.grantsByReference { return rows }
        let rows = Dictionary(grouping: try store.grants(clientID: nil, references: nil), by: \.reference)
        batch.grantsByReference = rows
        return rows
    }

    /// Every client's id; read once in a read over many prescriptions.
    private func allClientIDs(batch: ReadBatch?) throws -> [ClientID] {
        if let ids = batch?.clientIDs { return ids }
        let ids = try store.clients().map(\.id)
        batch?.clientIDs = ids
        return ids
    }

    /// The owner's sealed part of a grant row (authenticated with the row's id, client and reference).
    func grantInfo(_ row: GrantRecord) throws -> GrantInfo {
        try openOwnerInfo(
            row.info, purpose: .grantInfo, fields: [.text(row.id.hex), .text(row.clientID.hex), .text(row.reference)],
            place: "grant \(row.id.short)")
    }

    /// Format 3: the reference of (client, prescription)'s grant row; format 1 and 2: the prescription id.
    func grantReference(clientID: ClientID, prescriptionID: PrescriptionID) throws -> String {
        guard header.formatVersion >= 3 else { return prescriptionID.hex }
        return try GrantReference.make(
            vaultID: header.vaultID, clientID: clientID.hex, prescriptionID: prescriptionID.hex, key: grantReferenceKey)
    }

    /// Re-seals every grant of the prescription to its current keys (after an edit, attach,
    /// detach or re-key), keeping each grant's dates and scope. `previousVersion` is the version
    /// the rows were sealed for (nil: the current one, when no version was added).
    func resealGrants(of prescriptionID: PrescriptionID, previousVersion: Int? = nil, in write: OwnerWrite) throws {
        // Only to the grantees the owner's manifest lists (a grant put back from an older copy is refused).
        try touch(prescriptionID.hex, in: write)
        let grants = try storedGrants(clientID: nil, prescriptionID: prescriptionID)
        guard !grants.isEmpty else { return }
        let clients = Dictionary(uniqueKeysWithValues: try clientSummaries().map { ($0.id, $0) })
        for grant in grants {
            guard let client = clients[grant.row.clientID] else { continue }
            let summary = try openGrant(grant, client: client, version: previousVersion)
            try writeGrant(
                id: grant.row.id, client: client, prescriptionID: prescriptionID,
                info: GrantInfo(keeping: summary), in: write)
        }
    }

    /// Stores the newest version again under a new data key, as a new version, and re-seals the
    /// remaining grants: a key handed out before opens nothing written from now on.
    func rekey(prescriptionID: PrescriptionID, reason: String, in write: OwnerWrite) throws {
        guard let latest = try store.latestVersion(of: prescriptionID) else { return }
        let current = try open(latest, in: write)
        var next = PrescriptionRecord(
            id: current.id, version: current.version + 1, recorded: clock.timestamp(),
            prescription: current.prescription)
        next.change = reason
        // The same content sealed again: a prescription in conflict stays so until resolved.
        next.conflict = current.conflict
        try storeVersion(next, in: write)
        try resealGrants(of: prescriptionID, previousVersion: current.version, in: write)
    }

    /// Revokes grants past their expiry (re-keying their prescriptions). Runs at the start of
    /// every owner write. Returns how many it revoked.
    func sweepExpiredGrants(_ write: OwnerWrite) throws -> Int {
        let today = clock.today()
        let clients = Dictionary(uniqueKeysWithValues: try clientSummaries().map { ($0.id, $0) })
        // Verify and pick the expired grants first, then delete them, then re-key each affected
        // prescription once (re-keying re-seals the other grants, so rows read earlier go stale).
        var expired: [(StoredGrant, GrantSummary)] = []
        for stored in try storedGrants(clientID: nil, prescriptionID: nil) {
            guard let client = clients[stored.row.clientID] else { continue }
            let grant = try openGrant(stored, client: client)
            if !grant.isActive(on: today) { expired.append((stored, grant)) }
        }
        for (stored, _) in expired { try touch(stored.prescriptionID.hex, in: write) }
        for (stored, grant) in expired {
            try store.deleteGrant(stored.row.id)
            try audit(
                AuditEvent(
                    time: clock.timestamp(), actor: AuditEvent.ownerActor, action: .grantExpired,
                    client: stored.row.clientID.hex,
                    prescriptions: [stored.prescriptionID.hex], detail: grant.expires.map { "expired \($0)" }))
        }
        for prescription in Set(expired.map(\.0.prescriptionID)).sorted() {
            try rekey(prescriptionID: prescription, reason: "re-keyed: access expired", in: write)
        }
        return expired.count
    }

    /// "client prescription" -> time of the client's last read of it, for the keys in `wanted`,
    /// from the entries the owner vouches for (a forged read names no one's last read). The log is
    /// read newest first, and only until every one is found (`vouchedAuditEvents`): a grant read
    /// since the last large import costs the entries after that read, a grant never read a pass
    /// over the whole log that decrypts each entry and decodes only the reads.
    func lastReadTimes(of wanted: Set<String>, in read: VaultRead) throws -> [String: String] {
        var times: [String: String] = [:]
        guard !wanted.isEmpty else { return times }
        let answered = try vouchedAuditEvents([.read], in: read) { event in
            guard let client = event.client else { return true }
            for prescription in event.prescriptions {
                let key = "\(client) \(prescription)"
                if times[key] == nil, wanted.contains(key) { times[key] = event.time }
            }
            return times.count < wanted.count
        }
        return answered ? times : try lastReadTimesFromWholeLog().filter { wanted.contains($0.key) }
    }

    /// The same from the whole log, every entry reviewed oldest first (`reviewAuditLog`): for a
    /// format-1 vault, or entries after the head that only the whole review can judge.
    func lastReadTimesFromWholeLog() throws -> [String: String] {
        var times: [String: String] = [:]
        for event in try verifiedAuditEvents() where event.action == .read {
            guard let client = event.client else { continue }
            for prescription in event.prescriptions { times["\(client) \(prescription)"] = event.time }
        }
        return times
    }
}
