import Foundation
import RxCrypto
import RxModel
import RxStore

/// Adding, reading, editing and removing prescriptions.
///
/// Each version gets a fresh random data key (DEK): content is sealed under the DEK and the DEK
/// under the vault's key-wrapping sub-key, both with associated data naming (vault, type, id,
/// version). A version can therefore be re-keyed or shared (grants) alone, and a row copied
/// elsewhere or an old version put in a newer one's place fails to open.
extension Vault {
    static let objectType = "prescription"

    /// Validates and stores a new prescription. Returns the stored record and the advisories.
    public func add(_ prescription: Prescription) throws(VaultError) -> (PrescriptionRecord, [String]) {
        let checked = try check(prescription)
        let id = PrescriptionID.random()
        let record = PrescriptionRecord(
            id: id, version: 1, recorded: clock.timestamp(), prescription: checked.prescription)
        let stored = try perform { write in try storeVersion(record, in: write) }
        return (stored, checked.advisories)
    }

    /// Resolves a full id or unique prefix to the prescription's id.
    public func resolve(_ idOrPrefix: String) throws(VaultError) -> PrescriptionID {
        let prefix = try PrescriptionID.prefix(from: idOrPrefix)
        let matches = try read { try store.prescriptionIDs(withPrefix: prefix, limit: 2) }
        guard let first = matches.first else { throw .notFound(id: idOrPrefix) }
        guard matches.count == 1 else {
            let total = try read { try store.prescriptionIDs(withPrefix: prefix, limit: 1000).count }
            throw .ambiguousID(prefix: idOrPrefix, matches: total)
        }
        return first
    }

    /// The newest version of every prescription, newest issue date first.
    public func list() throws(VaultError) -> [PrescriptionRecord] {
        try query(PrescriptionFilter())
    }

    /// The prescriptions matching `filter` (newest versions), sorted and limited as it says.
    ///
    /// Filters run on the search index (one small blob per 256th of the vault), and only the
    /// matching records are decrypted in full, so a query costs about the same whatever else
    /// the vault holds.
    public func query(_ filter: PrescriptionFilter) throws(VaultError) -> [PrescriptionRecord] {
        var filter = filter
        if filter.assumedValidity == nil { filter.assumedValidity = try assumedValidity() }
        do {
            let snapshot = try indexSnapshot(keep: true)
            return try read {
                let byID = try store.attachmentCountsByPrescription()
                let subjects = snapshot.rows.map { IndexSubject(row: $0, snapshot: snapshot) }
                return try filter.apply(subjects, attachmentCounts: byID, today: clock.today()).map {
                    try snapshot.record($0.row)
                }
            }
        } catch let error as VaultError {
            throw error
        } catch {
            throw VaultError.wrap(error)
        }
    }

    /// The ids of the prescriptions matching `filter`, in the order `query` lists them (selected
    /// on the index alone: nothing else is decoded).
    func matchingIDs(_ filter: PrescriptionFilter) throws(VaultError) -> [PrescriptionID] {
        var filter = filter
        if filter.assumedValidity == nil { filter.assumedValidity = try assumedValidity() }
        do {
            let snapshot = try indexSnapshot()
            let byID = try read { try store.attachmentCountsByPrescription() }
            let subjects = snapshot.rows.map { IndexSubject(row: $0, snapshot: snapshot) }
            return filter.apply(subjects, attachmentCounts: byID, today: clock.today()).map(\.subjectID)
        } catch let error as VaultError {
            throw error
        } catch {
            throw VaultError.wrap(error)
        }
    }

    /// One prescription: its newest version, or `version` if given.
    public func prescription(_ id: PrescriptionID, version: Int? = nil) throws(VaultError) -> PrescriptionRecord {
        try reading { read in try prescription(id, version: version, in: read) }
    }

    /// `prescription` in `read`.
    func prescription(_ id: PrescriptionID, version: Int? = nil, in read: VaultRead) throws(VaultError)
        -> PrescriptionRecord
    {
        if let version {
            // An earlier version is written once and never changes: its own MAC is enough.
            let row: PrescriptionVersionRecord?
            do { row = try store.versions(of: id).first { $0.version == version } } catch {
                throw VaultError.wrap(error)
            }
            guard let row else { throw .notFound(id: "\(id.short) version \(version)") }
            return try open(row, in: read)
        }
        return try open(try newestRow(id, in: read), in: read)
    }

    /// The newest version row of `id`, checked: format 2 on, against the manifest (the check
    /// reads every version anyway; rows the manifest holds but the file lacks fail it); format 1,
    /// against the search index.
    func newestRow(_ id: PrescriptionID, in read: VaultRead) throws(VaultError) -> PrescriptionVersionRecord {
        let row: PrescriptionVersionRecord?
        do {
            if let rows = try verifiedRows(id.hex, in: read) {
                row = rows.versions.last
            } else {
                row = try store.latestVersion(of: id)
                if let row { try requireNewest(row, of: id, in: read) }
            }
        } catch {
            throw VaultError.wrap(error)
        }
        guard let row else { throw .notFound(id: id.short) }
        return row
    }

    /// Every version of one prescription, oldest first.
    public func history(_ id: PrescriptionID) throws(VaultError) -> [PrescriptionRecord] {
        try reading { read in try history(id, in: read) }
    }

    /// `history` in an owner write or a verified read.
    func history(_ id: PrescriptionID, in access: any StateAccess) throws(VaultError) -> [PrescriptionRecord] {
        let rows: [PrescriptionVersionRecord]
        do {
            try verifyCurrent(id.hex, in: access)
            rows = try store.versions(of: id)
        } catch {
            throw VaultError.wrap(error)
        }
        guard !rows.isEmpty else { throw .notFound(id: id.short) }
        var records: [PrescriptionRecord] = []
        for row in rows { records.append(try open(row, in: access)) }
        return records
    }

    /// Stores `change` applied to the newest version as a new version. The old versions stay
    /// (see `history`). Returns nil, writing nothing, when the change leaves the prescription as it was.
    /// Throws a `VaultError`, or whatever `change` throws (unchanged, so the caller can report it).
    /// Applies `change` as a new version. Returns it with the advisories the change introduced
    /// (not those the previous version had already), or nil when nothing changed.
    public func edit(_ id: PrescriptionID, _ change: (inout Prescription) throws -> Void) throws -> (
        PrescriptionRecord, [String]
    )? {
        // Read, check and write in one transaction so two concurrent edits cannot both build on
        // the same version (the second waits, then sees the first's result).
        // A refused change and a change that changes nothing both end the write unwritten (rolled
        // back, the counter where it was): `WriteAbandoned` carries them out of the transaction.
        do {
            return try ownerWrite { (write: OwnerWrite) throws -> (PrescriptionRecord, [String]) in
                guard let row = try store.latestVersion(of: id) else { throw VaultError.notFound(id: id.short) }
                try touch(id.hex, in: write)
                let current = try open(row, in: write)
                var edited = current.prescription
                do { try change(&edited) } catch { throw WriteAbandoned(reason: error) }
                // Kept FHIR elements follow the edit by their rule (KeptFHIR): a stale narrative goes.
                edited.fhir = current.prescription.keptFHIR(after: edited)
                // A patient given a different name or birth date is another patient (found or
                // created by `add`'s rule); `patient rename` changes the patient itself.
                if edited.patient.id != nil, edited.patient.id == current.prescription.patient.id,
                    edited.patient.name != current.prescription.patient.name
                        || edited.patient.birthDate != current.prescription.patient.birthDate
                {
                    edited.patient.id = nil
                    // A new name's parts are not the old one's.
                    if edited.patient.name != current.prescription.patient.name {
                        (edited.patient.family, edited.patient.given) = (nil, nil)
                    }
                }
                let checked = try check(edited)
                let candidate = try linkPatient(
                    PrescriptionRecord(
                        id: id, version: current.version + 1, recorded: clock.timestamp(),
                        prescription: checked.prescription), in: write)
                guard candidate.prescription != current.prescription else { throw WriteAbandoned(reason: nil) }
                let record = try storeVersion(candidate, in: write)
                try resealGrants(of: id, previousVersion: current.version, in: write)
                // An advisory is news when the edit brings it: one the stored version already had
                // ("no expiry date") was said when it was introduced, not at every edit after.
                let before = Set((try? check(current.prescription).advisories) ?? [])
                return (record, checked.advisories.filter { !before.contains($0) })
            }
        } catch let abandoned as WriteAbandoned {
            if let reason = abandoned.reason { throw reason }
            return nil
        } catch {
            throw VaultError.wrap(error)
        }
    }

    /// Deletes the prescription and every version of it, then checkpoints and truncates the WAL so
    /// the deleted content (overwritten in place by `secure_delete`) is gone from every file.
    public func remove(_ id: PrescriptionID) throws(VaultError) {
        let deleted = try perform { (write: OwnerWrite) throws -> Bool in try deletePrescription(id, in: write) }
        guard deleted else { throw .notFound(id: id.short) }
        purge()
    }

    /// `remove`'s work inside a write (also a merge's, for a prescription the other copy removed):
    /// the prescription, its versions, attachments and grants, its index and manifest entries.
    func deletePrescription(_ id: PrescriptionID, in write: OwnerWrite) throws -> Bool {
        try indexChanged(id, nil, in: write)
        // Nothing of it is relied on or re-sealed: its manifest entry just goes.
        write.touched.insert(id.hex)
        // Format 3 grants do not name their prescription in the file, so nothing cascades to them.
        for grant in try storedGrants(clientID: nil, prescriptionID: id) { try store.deleteGrant(grant.row.id) }
        return try store.deletePrescription(id)
    }

    // MARK: - Sealing

    /// Seals and stores a new version, and notes it for the search index: every version is
    /// written through here, so the index can never miss one.
    /// Format 4: the patient is linked to its record first (`linkPatient`); returns what was stored.
    @discardableResult
    func storeVersion(_ record: PrescriptionRecord, in write: OwnerWrite) throws -> PrescriptionRecord {
        let linked = try storeVersionLater(record, in: write)
        try storeUnsealedVersions(write)
        return linked
    }

    /// `storeVersion` in two steps, for an import's batch: the patient is linked and the
    /// prescription touched now, in order; the row is sealed (on all cores, with the others
    /// pending) and inserted by `storeUnsealedVersions`, which every reader of the rows in the
    /// write calls first (the manifest's rewrite, a patient's prescriptions refreshed, the end
    /// of the write). Returns the record as it will be stored.
    @discardableResult
    func storeVersionLater(_ record: PrescriptionRecord, in write: OwnerWrite) throws -> PrescriptionRecord {
        var record = try linkPatient(record, in: write)
        // Format 8: every new version says which write made it (a merge's copies keep theirs).
        if record.by == nil { record.by = try stamp(write) }
        try touch(record.id.hex, in: write)
        write.unsealedVersions.append(record)
        return record
    }

    /// Seals the versions `storeVersionLater` left pending on all cores (a version's sealing and
    /// index entry need nothing of the others), then inserts them in the order they came.
    func storeUnsealedVersions(_ write: OwnerWrite) throws {
        guard !write.unsealedVersions.isEmpty else { return }
        let records = write.unsealedVersions
        write.unsealedVersions = []
        let sealing = versionSealing
        let sealed = records.concurrentMap { record in
            Result { () throws(VaultError) in (try sealing.seal(record), SearchIndex.encode(record)) }
        }
        for (record, result) in zip(records, sealed) {
            let (row, entry) = try result.get()
            try store.insert(row)
            try indexChanged(record.id, encoded: entry, in: write)
        }
    }

    func check(_ prescription: Prescription) throws(VaultError) -> CheckedPrescription {
        do { return try PrescriptionRules.check(prescription, today: clock.today()) } catch {
            throw .invalidPrescription(error)
        }
    }

    /// Seals a version for storing (`VersionSealing.seal`).
    func seal(_ record: PrescriptionRecord) throws(VaultError) -> PrescriptionVersionRecord {
        try versionSealing.seal(record)
    }

    /// Opens a stored version (`VersionSealing.open`) and gives it its patient record, as
    /// `access` sees the patients.
    func open(_ row: PrescriptionVersionRecord, in access: any StateAccess) throws(VaultError) -> PrescriptionRecord {
        try withPatient(try versionSealing.open(row), in: access)
    }

    /// What the owner's MAC over a version row covers.
    func versionRowMessage(_ row: PrescriptionVersionRecord) -> [UInt8] {
        versionSealing.macMessage(row)
    }

    /// The version's data key, unwrapped with the key-wrapping key.
    func dataKey(of row: PrescriptionVersionRecord) throws(VaultError) -> SecretBytes {
        try versionSealing.dataKey(of: row)
    }

    /// The owner's sealing of version rows, as a value several threads may use at once.
    var versionSealing: VersionSealing {
        VersionSealing(
            vaultID: header.vaultID, formatVersion: header.formatVersion, keyWrappingKey: keyWrappingKey,
            recordMACKey: recordMACKey)
    }

    var sealing: Sealing { Sealing(vaultID: header.vaultID) }
}
