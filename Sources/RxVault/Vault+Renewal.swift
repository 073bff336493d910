import RxModel
import RxStore

/// A renewal's grants (issue 47): a new prescription that supersedes one a client can read
/// leaves that client reading the old one, which now says `superseded`. `add` tells the owner
/// (`liveGrantsSuperseded(by:)`) and `add --from ID --move-grants` moves the grants in the write
/// that adds the renewal (`add(_:movingGrantsFrom:)`).
extension Vault {
    /// The live grants of one prescription a new one supersedes.
    public struct SupersededGrants: Sendable {
        public let superseded: PrescriptionID
        public let grants: [GrantSummary]
    }

    /// The prescriptions `record` (just added) now supersedes, the newest that does
    /// (`Supersession`), that a client can still read, with those grants. Read from the search
    /// index; only the few candidates' grants are opened.
    public func liveGrantsSuperseded(by record: PrescriptionRecord) throws(VaultError) -> [SupersededGrants] {
        let rx = record.prescription
        guard !rx.recordStatus.isWithdrawn else { return [] }
        let superseded: [PrescriptionID]
        do {
            let snapshot = try indexSnapshot()
            let all = snapshot.rows.lazy.map { IndexSubject(row: $0, snapshot: snapshot) }
            let name = PatientName.key(rx.patient.name)
            var targets: [IndexSubject] = []
            for subject in all
            where subject.kind == rx.kind && subject.birthDate == rx.patient.birthDate && subject.issued < rx.issued
                && subject.subjectID != record.id && PatientName.key(subject.patientName) == name
            {
                targets.append(subject)
            }
            superseded = Supersession.superseding(targets, among: all).filter { $0.value == record.id }.keys.sorted()
        } catch let error as VaultError {
            throw error
        } catch {
            throw VaultError.wrap(error)
        }
        let today = clock.today()
        var result: [SupersededGrants] = []
        for id in superseded {
            let live = try liveGrants(of: id, on: today)
            if !live.isEmpty { result.append(SupersededGrants(superseded: id, grants: live)) }
        }
        return result
    }

    /// The grants on `prescriptionID` that work on `today`, rows verified as `grants` verifies
    /// them, by client name; without their last reads (which can cost a pass over the log).
    private func liveGrants(of prescriptionID: PrescriptionID, on today: CalendarDate) throws(VaultError)
        -> [GrantSummary]
    {
        try reading { read in
            try verifyCurrent(prescriptionID.hex, in: read)
            let clients = Dictionary(uniqueKeysWithValues: try clientSummaries().map { ($0.id, $0) })
            return try storedGrants(clientID: nil, prescriptionID: prescriptionID).compactMap { grant in
                guard let client = clients[grant.row.clientID] else { return nil }
                let summary = try openGrant(grant, client: client)
                return summary.isActive(on: today) ? summary : nil
            }
            .sorted { ($0.client.name, $0.client.id.hex) < ($1.client.name, $1.client.id.hex) }
        }
    }

    /// Adds `prescription` (a renewal of `source`) and moves every live grant of `source` to it,
    /// in one owner write: all or nothing. Each client gets a grant on the renewal on the same
    /// terms (end, attachments, measurements), audited as `grant` is ("moved from ..."), and
    /// loses its grant on `source`, audited as `revoke` is ("moved to ..."); `source` is then
    /// re-keyed as `revoke` re-keys, so the keys those clients held open nothing written after.
    ///
    /// Refused (`invalidInput`), writing nothing, unless the renewal supersedes `source`: the
    /// same kind, patient and a later issue date, neither withdrawn (`Supersession`). Returns the
    /// stored record, the advisories and the grants moved (as they were on `source`).
    public func add(_ prescription: Prescription, movingGrantsFrom source: PrescriptionID) throws(VaultError) -> (
        PrescriptionRecord, [String], moved: [GrantSummary]
    ) {
        let checked = try check(prescription)
        let id = PrescriptionID.random()
        let record = PrescriptionRecord(
            id: id, version: 1, recorded: clock.timestamp(), prescription: checked.prescription)
        let today = clock.today()
        let now = clock.timestamp()
        var moved: [GrantSummary] = []
        let stored: PrescriptionRecord = try perform { write in
            try touch(source.hex, in: write)
            guard let latest = try store.latestVersion(of: source) else { throw VaultError.notFound(id: source.short) }
            let old = try open(latest, in: write)
            if let why = Self.whyNotSuperseding(old.prescription, by: record.prescription) {
                throw VaultError.invalidInput(
                    "--move-grants: the renewal does not supersede \(source.short) (\(why)), so its grants stay with it"
                )
            }
            let stored = try storeVersion(record, in: write)
            let clients = Dictionary(uniqueKeysWithValues: try clientSummaries().map { ($0.id, $0) })
            // Expired grants were swept when the write began; what is left is live.
            for grant in try storedGrants(clientID: nil, prescriptionID: source) {
                guard let client = clients[grant.row.clientID] else { continue }
                let summary = try openGrant(grant, client: client)
                guard summary.isActive(on: today) else { continue }
                let terms = GrantTerms(
                    expires: summary.expires, attachments: summary.includesAttachments,
                    measurements: summary.includesMeasurements)
                try writeGrant(
                    id: GrantID.random(), client: client, prescriptionID: id,
                    info: GrantInfo(
                        schema: 1, granted: now, expires: terms.expires, attachments: terms.attachments,
                        measurements: terms.measurements ? true : nil, by: try stamp(write)?.text), in: write)
                try audit(
                    AuditEvent(
                        time: now, actor: AuditEvent.ownerActor, action: .grant, client: client.id.hex,
                        prescriptions: [id.hex],
                        detail: "moved from \(source.hex): "
                            + GrantOutcome(prescriptionID: id, before: nil, after: terms).description))
                try store.deleteGrant(grant.row.id)
                try audit(
                    AuditEvent(
                        time: now, actor: AuditEvent.ownerActor, action: .revoke, client: client.id.hex,
                        prescriptions: [source.hex], detail: "moved to \(id.hex)"))
                moved.append(summary)
            }
            if !moved.isEmpty {
                try rekey(prescriptionID: source, reason: "re-keyed: grants moved to \(id.short)", in: write)
            }
            return stored
        }
        // The old grants' sealed keys must not linger in the write-ahead log.
        if !moved.isEmpty { purge() }
        return (stored, checked.advisories, moved)
    }

    /// Why `newer` does not supersede `older` (`Supersession`'s rule), or nil when it does.
    static func whyNotSuperseding(_ older: Prescription, by newer: Prescription) -> String? {
        if older.recordStatus.isWithdrawn { return "it is \(older.recordStatus.rawValue)" }
        if newer.recordStatus.isWithdrawn { return "the renewal is \(newer.recordStatus.rawValue)" }
        if older.kind != newer.kind { return "it is \(older.kind.rawValue), the renewal \(newer.kind.rawValue)" }
        if PatientName.key(older.patient.name) != PatientName.key(newer.patient.name)
            || older.patient.birthDate != newer.patient.birthDate
        {
            return "the renewal is for another patient"
        }
        if newer.issued <= older.issued {
            return "it was issued \(older.issued), the renewal \(newer.issued): only a later one supersedes"
        }
        return nil
    }
}
