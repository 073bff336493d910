import Foundation
import RxCrypto
import RxStore

/// Upgrades of an older vault to the current format, in a write transaction of their own before
/// the first owner write (docs/format.md, the format table): each step brings the rows, the root
/// and the manifest one format further, trusting what the earlier format could vouch for and
/// nothing more.
extension Vault {
    /// Upgrades an older vault to the current format now (`rxvault upgrade`; any owner write does
    /// it first). Returns the format before and after; equal when there was nothing to do.
    public func upgrade() throws(VaultError) -> (from: Int, to: Int) {
        let from = header.formatVersion
        do { try upgradeIfNeeded() } catch { throw VaultError.wrap(error) }
        return (from, header.formatVersion)
    }

    /// Brings an older-format vault to the current format in one write transaction of its own:
    /// the owner's checks, every upgrade step, the housekeeping every owner write does (a
    /// format-1 vault's client reads are countersigned in this write, `trustingFormatOneReads`),
    /// and a root in the current format. Nothing to do (one comparison) once this process has
    /// seen the vault current, so it runs at most once per process, before its first owner write.
    ///
    /// It commits on its own, before the command's write begins: a command refused afterwards
    /// (wrong input, a dry run's rollback) leaves the vault upgraded, whole, and its own write
    /// undone. The upgrade depends on nothing the command was given, and the file is all old
    /// format or all new either way; kept inside each command's transaction, every write carried
    /// every migration, and a write could not tell its own changes from the upgrade's.
    func upgradeIfNeeded() throws {
        guard header.formatVersion < VaultHeader.currentFormatVersion else { return }
        try ownerTransaction(upgrading: true) { _ in }
    }

    /// The steps from the header's format to the current one, in the upgrade's write
    /// (`beginOwnerWrite`); the root is verified first, except a format-1 vault's, which has none.
    func upgradeSteps(_ write: OwnerWrite) throws {
        let fromFormatOne = header.formatVersion < 2
        if fromFormatOne {
            try upgradeToFormat2(write)
        } else {
            write.state = try verifyStateNow()
        }
        if header.formatVersion < 3 { try upgradeToFormat3(verifyingManifest: !fromFormatOne, in: write) }
        if header.formatVersion < 4 { try upgradeToFormat4(write) }
        if header.formatVersion < 5 { try upgradeToFormat5(write) }
        if header.formatVersion < 6 { try upgradeToFormat6(write) }
        if header.formatVersion < 7 { try upgradeToFormat7(write) }
        if header.formatVersion < 8 { try upgradeToFormat8(write) }
        // Upgrades rewrite the manifest: nothing opened before them is current.
        write.manifestCache = [:]
    }

    /// Upgrades a format-1 vault inside the upgrade's write transaction: adds the format-2
    /// tables, re-wraps the root key for format 2 and computes the root and the manifest from
    /// the rows as they are. Those rows are trusted as the owner's (SECURITY.md), but any whose
    /// MAC does not verify refuses the upgrade.
    func upgradeToFormat2(_ write: OwnerWrite) throws {
        let clients = Dictionary(uniqueKeysWithValues: try clientSummaries().map { ($0.id, $0) })
        if let finding = try AuditLog.verify(
            entries: try store.auditEntries(), head: try store.auditHead(), macKey: auditMACKey
        ).first {
            throw VaultError.integrity("cannot upgrade to format 2: \(finding.message); run 'rxvault check'")
        }
        let ids = try store.allPrescriptionIDs()
        for id in ids {
            for row in try store.versions(of: id) where !MAC.verify(row.mac, versionRowMessage(row), key: recordMACKey)
            {
                throw VaultError.integrity(
                    "cannot upgrade to format 2: prescription \(id.short) version \(row.version) was altered; run 'rxvault check'"
                )
            }
            for row in try store.attachments(of: id)
            where !MAC.verify(
                row.mac,
                attachmentRowMessage(
                    id: row.id, prescriptionID: row.prescriptionID, wrappedKey: row.wrappedKey, metadata: row.metadata,
                    streamHeader: row.streamHeader), key: recordMACKey)
            {
                throw VaultError.integrity(
                    "cannot upgrade to format 2: attachment \(row.id.short) was altered; run 'rxvault check'")
            }
            for grant in try storedGrants(clientID: nil, prescriptionID: id) {
                guard let client = clients[grant.row.clientID] else {
                    throw VaultError.integrity("grant \(grant.row.id.short) names no client")
                }
                _ = try openGrant(grant, client: client)
            }
        }
        var record = header.record
        record.formatVersion = 2
        record.wrappedRootKey = try rootKeyWrapped(for: record)
        try olderFormatSteps().toFormat2(wrappedRootKey: record.wrappedRootKey)
        header = try VaultHeader(record)
        var state = VaultState.empty(clientsHash: VaultState.clientsHash(try store.clients()))
        for (bucket, sealed) in try store.indexBuckets() { state.indexHashes[bucket] = VaultState.bucketHash(sealed) }
        if let head = try store.auditHead() {
            state.auditSequence = head.sequence
            state.auditHash = head.hash
        }
        write.state = state
        if try store.indexBuckets().isEmpty, !ids.isEmpty { try rebuildIndex(write) }
        write.touched = Set(ids.map(\.hex))
        // Client reads logged by rxvault 0.1.0 and not countersigned yet carry no client
        // authenticator; this write countersigns them as format 1 would have (SECURITY.md).
        write.trustingFormatOneReads = true
    }

    /// Upgrades a format-2 vault (or one just upgraded from format 1) inside the current write
    /// transaction: client rows get lookup tags, grant rows references, their public keys and
    /// prescriptions move into the sealed info, the manifest is sealed, and the root key is
    /// re-wrapped for format 3. A format-2 vault is first verified whole against its root and
    /// manifest (once, at the upgrade), so no row deleted or put back is carried over as current.
    func upgradeToFormat3(verifyingManifest: Bool, in write: OwnerWrite) throws {
        let state = try write.root()
        let ids = try store.allPrescriptionIDs()
        // A vault just upgraded from format 1 has no manifest yet (its rows were checked then).
        if verifyingManifest {
            for id in ids { try touch(id.hex, in: write) }
        }
        let clients = try clientSummaries()
        let byID = Dictionary(uniqueKeysWithValues: clients.map { ($0.id, $0) })
        var grants: [(StoredGrant, ClientSummary, GrantInfo)] = []
        for grant in try storedGrants(clientID: nil, prescriptionID: nil) {
            guard let client = byID[grant.row.clientID] else {
                throw VaultError.integrity("grant \(grant.row.id.short) names no client")
            }
            _ = try openGrant(grant, client: client)
            grants.append((grant, client, try grantInfo(grant.row)))
        }
        var record = header.record
        record.formatVersion = 3
        record.wrappedRootKey = try rootKeyWrapped(for: record)
        // From here on rows are written in the format-3 form (the header is what they consult).
        let previousHeader = header
        header = try VaultHeader(record)
        do {
            let clientRows = try clients.map { client in
                try clientRow(
                    id: client.id, recipient: client.recipient,
                    info: ClientInfo(schema: 1, name: client.name, added: client.added))
            }
            var grantRows: [GrantRecord] = []
            for (grant, client, info) in grants {
                var info = info
                info.prescription = grant.prescriptionID.hex
                let reference = try grantReference(clientID: client.id, prescriptionID: grant.prescriptionID)
                let sealedInfo = try sealOwnerInfo(
                    info, purpose: .grantInfo, fields: [.text(grant.row.id.hex), .text(client.id.hex), .text(reference)]
                )
                var row = GrantRecord(
                    id: grant.row.id, clientID: client.id, reference: reference, sealedKeys: grant.row.sealedKeys,
                    info: sealedInfo, mac: [])
                let sealedFor = try store.latestVersion(of: grant.prescriptionID)?.version ?? 0
                row.mac = try MAC.authenticate(grantRowMessage(row, version: sealedFor), key: grantMACKey)
                grantRows.append(row)
            }
            try olderFormatSteps().toFormat3(
                wrappedRootKey: record.wrappedRootKey, clients: clientRows, grants: grantRows)
        } catch {
            header = previousHeader
            throw error
        }
        // Every manifest bucket is written again, sealed, at the end of this write.
        var fresh = state
        for (bucket, _) in try store.manifestBuckets() { try store.setManifestBucket(bucket, to: nil) }
        fresh.manifestHashes = Array(repeating: VaultState.absentBucket, count: VaultState.bucketCount)
        write.state = fresh
        write.touched = Set(ids.map(\.hex))
    }

    /// Upgrades a format-3 vault (or one just upgraded to format 3) to format 4 inside the current
    /// write transaction: the root key is re-wrapped with format 4 in its associated data, as
    /// `upgradeToFormat3` does, then each format-4 part takes its step: patients (the state root
    /// gains the patients hash, state schema 2) and key slots (their tables; the key ring is
    /// written at the end of the write, as at every owner write).
    func upgradeToFormat4(_ write: OwnerWrite) throws {
        var state = try write.root()
        var record = header.record
        record.formatVersion = 4
        record.wrappedRootKey = try rootKeyWrapped(for: record)
        let steps = try olderFormatSteps()
        try steps.createPatientTable()
        try steps.toFormat4(wrappedRootKey: record.wrappedRootKey)
        header = try VaultHeader(record)
        state.patientsHash = VaultState.patientsHash([PatientRecord]())
        write.state = state
        write.patients = PatientDirectory()
        try upgradePatientsToFormat4(write)
        try upgradeKeySlotsToFormat4()
    }

    /// Format 4, key slots: the header's passphrase stays where it is and becomes slot 1; the
    /// tables for more slots and the key ring are added (the ring is written at the end of this
    /// write, as at every owner write).
    func upgradeKeySlotsToFormat4() throws {
        try olderFormatSteps().createKeySlotTables()
    }

    /// Upgrades a format-4 vault (or one just upgraded to format 4) to format 5 inside the
    /// current write transaction: the state root pins each search-index bucket by its seal digest
    /// (`VaultState.sealDigest`, state schema 3) instead of the SHA-256 of the whole bucket. Every
    /// bucket, present or absent, is first checked against the whole hash the root holds now, so
    /// a bucket deleted or put back from an older copy is refused here, not carried over as
    /// current; the buckets themselves stay as they are. No key is wrapped again
    /// (`VaultHeader.keyFormat`), so the agent's root key upgrades as well as a passphrase.
    func upgradeToFormat5(_ write: OwnerWrite) throws {
        var state = try write.root()
        var present = [Bool](repeating: false, count: VaultState.bucketCount)
        for (bucket, sealed) in try store.indexBuckets() {
            guard bucket >= 0, bucket < VaultState.bucketCount else {
                throw VaultError.integrity("search index bucket \(bucket) is not one rxvault writes")
            }
            try verifyIndexBucket(bucket, sealed: sealed, state: state)
            present[bucket] = true
            state.indexHashes[bucket] = VaultState.sealDigest(sealed)
        }
        for bucket in 0..<VaultState.bucketCount where !present[bucket] {
            try verifyIndexBucket(bucket, sealed: nil, state: state)
        }
        state.indexBySeal = true
        try store.advanceFormat(to: 5, adding: [])
        try adoptFormat(5, state: state, in: write)
    }

    /// Upgrades a format-5 vault (or one just upgraded to format 5) to format 6 inside the
    /// current write transaction: grants may from now on carry their patient's measurements
    /// (`GrantInfo.measurements`), which an rxvault that reads up to format 5 would drop when it
    /// re-seals a grant, so such an rxvault must refuse the vault as made by a newer one. No row
    /// changes but the header and the state root's schema byte (4); no key is wrapped again.
    func upgradeToFormat6(_ write: OwnerWrite) throws {
        var state = try write.root()
        state.measurementGrants = true
        try store.advanceFormat(to: 6, adding: [])
        try adoptFormat(6, state: state, in: write)
    }

    /// The steps before format 4, which only a vault file takes: a database vault is created at
    /// format 4 or later, so one older than that is no vault this rxvault made.
    private func olderFormatSteps() throws -> SQLiteFormatUpgrade {
        guard let steps = SQLiteFormatUpgrade(store) else {
            throw VaultError.from(
                StoreError.unsupportedVersion(found: header.formatVersion, supported: StoredSchema.currentFormat))
        }
        return steps
    }

    /// Upgrades a format-6 vault (or one just upgraded to format 6) to format 7 inside the
    /// current write transaction: the key ring written at the end of this write carries the
    /// `assumed-validity` setting (unset), and records may carry an assumed expiry
    /// (`Prescription.assumedExpiry`), both of which an rxvault that reads up to format 6 would
    /// drop when it rewrites them, so it must refuse the vault as made by a newer one. No row
    /// changes but the header and the state root's schema byte (5); no key is wrapped again.
    func upgradeToFormat7(_ write: OwnerWrite) throws {
        var state = try write.root()
        state.assumedValidity = true
        try store.advanceFormat(to: 7, adding: [])
        try adoptFormat(7, state: state, in: write)
    }

    /// After a step that wraps no key (formats 5 to 7): this process's header takes the new
    /// format (the store wrote it), and the write ends with the root in that format's schema.
    func adoptFormat(_ format: Int, state: VaultState, in write: OwnerWrite) throws {
        var record = header.record
        record.formatVersion = format
        header = try VaultHeader(record, slots: try store.keySlots())
        write.state = state
    }
}
