import Foundation
import RxCrypto
import RxModel
import RxStore

/// The state root and the manifest (format 2; DESIGN.md, "State root"): how the owner tells the
/// current rows from rows deleted, put back from an older copy of the file, or mixed between
/// copies, by checking only what a command touches.
extension Vault {
    // MARK: - Reading the root

    /// The verified state root as `access` sees it; nil for a format-1 vault (not upgraded yet).
    /// In an owner write, the write's own root (as it has changed it so far); in a verified read,
    /// the file's, verified once per read (`verifyStateNow`).
    func verifiedState(in access: any StateAccess) throws -> VaultState? {
        try access.root { try verifyStateNow() }
    }

    /// The state root as the file holds it now, verified; nil for a format-1 vault. It also
    /// checks the client rows, the audit head and the key ring against it (a few rows), so every
    /// owner command starts from a state it can authenticate as current. Never inside an owner
    /// write's body, which works from its own root (`verifiedState(in:)`): only where a write
    /// begins (`beginOwnerWrite`) or outside any.
    ///
    /// The root and the rows checked against it are read in one snapshot (a read transaction,
    /// or the caller's): read one statement at a time, a write committed in between (the
    /// server's audit entries every second, a client's read, another command) would pair the
    /// old root with the new audit head or key ring, and look like a rollback.
    func verifyStateNow() throws -> VaultState? {
        guard header.formatVersion >= 2 else { return nil }
        return try store.read { () throws -> VaultState in
            let state = try rootState()
            Self.pauseAfterStateRootForTests()
            try verifyClientsAndAuditHead(state)
            try verifyKeyRing(state)
            return state
        }
    }

    /// The state row, MAC verified.
    func rootState() throws -> VaultState {
        guard let row = try store.vaultState() else {
            throw VaultError.integrity(
                "the vault's state root is missing (deleted, or the file was turned back into format 1)")
        }
        guard let state = VaultState.decode(row.state, counter: row.writeCounter),
            MAC.verify(row.mac, state.macMessage(vaultID: header.vaultID), key: stateMACKey)
        else {
            throw VaultError.integrity("the vault's state root is forged or altered (its MAC does not verify)")
        }
        if state.schemaByte != VaultState.schema(forFormat: header.formatVersion) {
            try adoptUpgradedHeader(for: state)
        }
        return state
    }

    /// The root is of a newer format than the header this process read at open: another
    /// connection upgraded the vault since (a `serve`'s own audit writer, an owner command, a
    /// write from another machine on a database). The header as stored now, read in the root's
    /// snapshot, is taken when it is the same vault and its format is the root's; anything else is
    /// a header whose format was edited (the root, MAC'd by the owner, says which format it is).
    func adoptUpgradedHeader(for state: VaultState) throws {
        let stored = try storedHeaderOfThisVault()
        guard stored.formatVersion > header.formatVersion,
            state.schemaByte == VaultState.schema(forFormat: stored.formatVersion),
            try store.schemaVersion() == stored.formatVersion
        else {
            throw VaultError.integrity(
                "the vault's state root is of another format than its header's format \(stored.formatVersion) (the header's format version was edited)"
            )
        }
        // The rest of the header (key slots, the attachment limit) only as the owner's key ring
        // vouches for it, before anything here uses it.
        if stored.formatVersion >= 4 {
            let findings = try keyRingFindings(state)
            guard findings.isEmpty else {
                throw VaultError.integrity(findings.joined(separator: "; ") + "; run 'rxvault check'")
            }
        }
        header = stored
    }

    /// The header as stored now, refused when it is not this vault's (another vault's file put at
    /// the path while this one was open): what another process may have changed since the open.
    func storedHeaderOfThisVault() throws -> VaultHeader {
        let stored = try VaultHeader(store.header(), slots: store.keySlots())
        guard stored.vaultID == header.vaultID, stored.auditPublicKey == header.auditPublicKey else {
            throw VaultError.integrity("the vault header changed while the vault was open (another vault's header?)")
        }
        return stored
    }

    func verifyClientsAndAuditHead(_ state: VaultState) throws {
        guard VaultState.clientsHash(try store.clients()) == state.clientsHash else {
            throw VaultError.integrity(
                "the client list is not the one the owner wrote last (a client deleted, or a removed client put back from an older copy)"
            )
        }
        guard let head = try store.auditHead(), head.sequence == state.auditSequence, head.hash == state.auditHash
        else {
            throw VaultError.integrity(
                "the audit log's head is not the one the owner wrote last (the log was rolled back or altered)")
        }
    }

    /// Refuses an index bucket that is not the one the owner last wrote.
    func verifyIndexBucket(_ bucket: Int, sealed: [UInt8]?, state: VaultState) throws {
        // Format 5 compares the bucket's seal digest, which pins it only because every reader
        // opens the bucket next (`VaultState.sealDigest`): `readIndexBucket` and `indexSnapshot`
        // do; `checkState` compares only, and `check`'s index stage opens every bucket.
        guard state.indexHash(sealed) == state.indexHashes[bucket] else {
            throw VaultError.integrity(
                "search index bucket \(bucket) is not the one the owner wrote last (deleted, or put back from an older copy)"
            )
        }
    }

    /// The manifest entries of one bucket, verified against the root. In an owner write or a
    /// verified read the file cannot change, so a bucket is opened once, and kept in `access`.
    func manifestEntries(bucket: Int, state: VaultState, in access: any StateAccess) throws -> [String: ManifestEntry] {
        if let cached = access.manifestCache[bucket] { return cached }
        let content = try store.manifestBucket(bucket)
        guard VaultState.bucketHash(content) == state.manifestHashes[bucket] else {
            throw VaultError.integrity(
                "manifest bucket \(bucket) is not the one the owner wrote last (deleted, or put back from an older copy)"
            )
        }
        let entries = try openManifestBucket(bucket, content: content)
        access.manifestCache[bucket] = entries
        return entries
    }

    /// Runs `body` in one read transaction, handed a `VaultRead`: the state root verified once,
    /// when first needed, and each manifest bucket opened at most once. Every owner read that
    /// checks what it reads against the root runs in one; never inside an owner write, whose
    /// body reads through its `OwnerWrite`.
    func reading<T>(_ body: (VaultRead) throws -> T) throws(VaultError) -> T {
        try verifiedRead(batch: nil, body)
    }

    /// `reading` for commands that verify many prescriptions (export): the root verified at
    /// once, and the rows of the prescriptions verified last, the client list, the grant rows and
    /// which prescriptions have attachments read once (`ReadBatch`).
    func readingMany<T>(_ body: (VaultRead) throws -> T) throws(VaultError) -> T {
        try verifiedRead(batch: ReadBatch()) { read in
            _ = try verifiedState(in: read)
            return try body(read)
        }
    }

    private func verifiedRead<T>(batch: ReadBatch?, _ body: (VaultRead) throws -> T) throws(VaultError) -> T {
        try read {
            guard !writeUnderWay else { throw VaultError.internalError("a verified read began inside an owner write") }
            return try body(VaultRead(batch: batch))
        }
    }

    /// Format 3 seals each manifest bucket (it names every grant and client of its prescriptions)
    /// under the manifest sub-key, bound to its bucket; format 2 kept it in the clear.
    func openManifestBucket(_ bucket: Int, content: [UInt8]?) throws -> [String: ManifestEntry] {
        guard let content else { return [:] }
        var plain = content
        if header.formatVersion >= 3 {
            do {
                plain = try AEAD.open(content, key: manifestKey, associatedData: manifestAssociatedData(bucket))
                    .withUnsafeBytes { Array($0) }
            } catch {
                throw VaultError.integrity(
                    "manifest bucket \(bucket) failed authentication (altered, moved or damaged)")
            }
        }
        guard let entries = ManifestEntry.decode(plain) else {
            throw VaultError.integrity("manifest bucket \(bucket) does not decode")
        }
        return entries
    }

    func sealManifestBucket(_ bucket: Int, entries: [ManifestEntry]) throws -> [UInt8]? {
        guard !entries.isEmpty else { return nil }
        let plain = ManifestEntry.encode(entries)
        guard header.formatVersion >= 3 else { return plain }
        return try AEAD.seal(plain, key: manifestKey, associatedData: manifestAssociatedData(bucket))
    }

    func manifestAssociatedData(_ bucket: Int) -> [UInt8] {
        AssociatedData.build(.manifestBucket, [.bytes(header.vaultID), .int(bucket)])
    }

    /// One prescription's rows as the file holds them now (versions with their content,
    /// attachment rows without their chunks, grant rows), read once for both the check against
    /// the manifest and the caller's use.
    /// `batch`: a read over many prescriptions, which reads which have attachments, and every
    /// grant row, once.
    func storedRows(_ id: String, batch: ReadBatch? = nil) throws -> StoredRows {
        let prescriptionID = try PrescriptionID.checked(id)
        let versions = try store.versions(of: prescriptionID)
        let attachments = try mayHaveAttachments(id, batch: batch) ? store.attachments(of: prescriptionID) : []
        let grants = try storedGrants(clientID: nil, prescriptionID: prescriptionID, batch: batch)
        // Only a prescription with no rows at all needs its own row looked up.
        let exists =
            try !versions.isEmpty || !attachments.isEmpty || !grants.isEmpty
            || store.prescriptionIDs(withPrefix: id, limit: 1).first == prescriptionID
        return StoredRows(id: id, exists: exists, versions: versions, attachments: attachments, grants: grants)
    }

    /// `storedRows` of each of `ids`, in a few queries whatever their number (a write's end reads
    /// back every prescription it changed: an import's tens of thousands).
    func storedRows(_ ids: [String]) throws -> [StoredRows] {
        guard ids.count > 1 else { return try ids.map { try storedRows($0) } }
        let prescriptionIDs = try ids.map { try PrescriptionID.checked($0) }
        let versions = Dictionary(grouping: try store.versions(ofAll: prescriptionIDs), by: \.prescriptionID)
        let attachments = Dictionary(grouping: try store.attachments(ofAll: prescriptionIDs), by: \.prescriptionID)
        let grants = Dictionary(grouping: try storedGrants(of: prescriptionIDs), by: \.prescriptionID)
        return try zip(ids, prescriptionIDs).map { id, prescriptionID in
            let (versions, attachments, grants) = (
                versions[prescriptionID] ?? [], attachments[prescriptionID] ?? [], grants[prescriptionID] ?? []
            )
            let exists =
                try !versions.isEmpty || !attachments.isEmpty || !grants.isEmpty
                || store.prescriptionIDs(withPrefix: id, limit: 1).first == prescriptionID
            return StoredRows(id: id, exists: exists, versions: versions, attachments: attachments, grants: grants)
        }
    }

    /// False only when a read over many prescriptions has seen that it has no attachment row.
    private func mayHaveAttachments(_ id: String, batch: ReadBatch?) throws -> Bool {
        guard let batch else { return true }
        if let owners = batch.withAttachments { return owners.contains(id) }
        let owners = Set(try store.attachmentCountsByPrescription().keys.map(\.hex))
        batch.withAttachments = owners
        return owners.contains(id)
    }

    /// The state root's counter and MAC as stored (not verified: a cheap test of whether the
    /// root changed since something was verified); read once in a verified read.
    func storedStateStamp(in read: VaultRead) throws -> StateStamp? {
        if let stamp = read.stamp { return stamp.map { StateStamp(counter: $0.counter, mac: $0.mac) } }
        let stamp = try store.vaultStateStamp()
        read.stamp = .some(stamp)
        return stamp.map { StateStamp(counter: $0.counter, mac: $0.mac) }
    }

    /// Compares a prescription's rows (versions, attachments, grants) with the owner's manifest
    /// entry and refuses, naming what differs, on any extra, missing or other row. Costs the
    /// prescription's own rows and one manifest bucket; in a read over many prescriptions, once
    /// per prescription.
    func verifyCurrent(_ id: String, in access: any StateAccess) throws {
        if let batch = access.batch, batch.verified.contains(id) { return }
        // Touched in this write: verified when first touched, and its rows since are this
        // write's own (a merge re-seals a patient's grants, then reads the history), which the
        // manifest will hold only when the write ends.
        if let write = access as? OwnerWrite, write.touched.contains(id) { return }
        _ = try verifiedRows(id, in: access)
    }

    /// `verifyCurrent`, handing over the rows it checked (nil for a format-1 vault, which has no
    /// manifest: the caller reads the rows itself). In a read over many prescriptions the rows of
    /// the prescriptions checked last (an export's batch) are kept, so reading one next (its
    /// newest version, then its attachments, as an export does) costs no second read.
    /// `knownRows`: the rows when the caller knows them without a read (none, for an id a large
    /// import knows has no row).
    func verifiedRows(_ id: String, in access: any StateAccess, knownRows: StoredRows? = nil) throws -> StoredRows? {
        guard let state = try verifiedState(in: access) else { return nil }
        if let rows = access.batch?.recentRows[id] { return rows }
        guard id.count == 32, RecordID.isHex(id) else {
            throw VaultError.integrity("a stored prescription id is malformed")
        }
        let expected = try manifestEntries(bucket: SearchIndex.bucket(of: id), state: state, in: access)[id]
        let rows = try knownRows ?? storedRows(id, batch: access.batch)
        let actual = rows.entry
        guard expected == actual else {
            throw VaultError.integrity(
                ManifestEntry.differences(id, expected: expected, actual: actual).joined(separator: "; "))
        }
        access.batch?.verified.insert(id)
        access.batch?.keep(rows)
        return rows
    }

    /// In an owner write, before anything of a prescription is read to be extended or re-sealed:
    /// verifies it (once per transaction) and marks its manifest entry to be rewritten at the end.
    func touch(_ id: String, in write: OwnerWrite) throws {
        guard !write.touched.contains(id) else { return }
        if let prescriptionID = PrescriptionID(hex: id), try knownToHaveNoRows(prescriptionID, in: write) {
            // No row to read (`StoredPrescriptions`): compared as none, so the manifest must
            // have no entry either.
            _ = try verifiedRows(id, in: write, knownRows: .none(id))
            write.stored?.forget(prescriptionID)
        } else {
            try verifyCurrent(id, in: write)
        }
        write.touched.insert(id)
    }

    // MARK: - Owner write transactions

    /// First step of every owner write: refuse a rolled-back vault and verify the root, the
    /// client rows and the audit head. Only the upgrade's own write (`upgrading`,
    /// `upgradeIfNeeded`) begins on an older format, and brings it to the current one here; any
    /// other write begins on a current-format vault, and finding another is an internal error
    /// (its upgrade did not run).
    func beginOwnerWrite(_ write: OwnerWrite, upgrading: Bool) throws {
        if let rollback, !mergingOverFork { throw VaultError.integrity(Self.rollbackMessage(rollback)) }
        // Another process may have upgraded the file, or changed its key slots or settings, since
        // it was opened: the write works from the header as stored (verified with the key ring
        // below, from format 4).
        header = try storedHeaderOfThisVault()
        guard header.formatVersion < VaultHeader.currentFormatVersion else {
            write.state = try verifyStateNow()
            return
        }
        guard upgrading else {
            throw VaultError.internalError(
                "an owner write began on a format-\(header.formatVersion) vault that was not upgraded first")
        }
        try upgradeSteps(write)
    }

    /// Last step of every owner write: index and manifest buckets written, then the root with
    /// the next counter, all in the same transaction.
    func finishOwnerWrite(_ write: OwnerWrite) throws {
        try storeUnsealedVersions(write)
        try flushIndex(write)
        try flushManifest(write)
        try refreshPatientsHash(write)
        try storePatientBuckets(write)
        var state = try write.root()
        state.clientsHash = VaultState.clientsHash(try store.clients())
        guard let head = try store.auditHead() else {
            throw VaultError.integrity("the audit log's head record was deleted")
        }
        state.auditSequence = head.sequence
        state.auditHash = head.hash
        // Format 7: the setting this write changed, else the one the ring holds (verified when
        // the write began). Format 8: the ring's stamps, taken before the knowledge counts this
        // write (a slot or setting it changed takes its stamp).
        let assumed = header.formatVersion >= 7 ? try write.assumedValidity ?? storedAssumedValidity() : nil
        let ringHistory = try nextRingHistory(write, assumedValidity: assumed)
        state.counter = max(state.counter, write.counterFloor) + 1
        advanceKnowledge(&state, joining: write.joinedKnowledge, counting: write.countsOwnWrite || write.stamp != nil)
        if header.formatVersion >= 4 {
            try store.setKeyRing(
                try KeyRing.record(
                    header: try store.header(), slots: try store.keySlots(), assumedValidity: assumed,
                    history: ringHistory, counter: state.counter, key: stateMACKey))
        }
        let root = VaultStateRecord(
            writeCounter: state.counter, state: state.encoded(),
            mac: try MAC.authenticate(state.macMessage(vaultID: header.vaultID), key: stateMACKey))
        try store.setVaultState(root)
        write.state = state
        write.written = StateStamp(counter: root.writeCounter, mac: root.mac)
    }

    /// Rewrites the manifest entries of the prescriptions touched so far (at the end of every
    /// owner write, and every few ten thousand prescriptions of a large import). A prescription
    /// touched again later is verified against its rewritten entry, and rewritten again.
    func flushManifest(_ write: OwnerWrite) throws {
        try storeUnsealedVersions(write)
        var state = try write.root()
        var byBucket: [Int: [String]] = [:]
        for id in write.touched { byBucket[SearchIndex.bucket(of: id), default: []].append(id) }
        for (bucket, ids) in byBucket {
            var entries = try manifestEntries(bucket: bucket, state: state, in: write)
            for rows in try storedRows(ids) { entries[rows.id] = rows.entry }
            let content = try sealManifestBucket(bucket, entries: Array(entries.values))
            try store.setManifestBucket(bucket, to: content)
            state.manifestHashes[bucket] = VaultState.bucketHash(content)
            write.manifestCache[bucket] = entries
        }
        write.state = state
        write.rememberTouched()
        write.touched = []
    }

    // MARK: - Key ring (format 4)

    /// Refuses key slots or settings that are not the ones the owner wrote last (`KeyRing`).
    func verifyKeyRing(_ state: VaultState) throws {
        guard header.formatVersion >= 4 else { return }
        let findings = try keyRingFindings(state)
        guard findings.isEmpty else {
            throw VaultError.integrity(findings.joined(separator: "; ") + "; run 'rxvault check'")
        }
    }

    func keyRingFindings(_ state: VaultState) throws -> [String] {
        KeyRing.findings(
            ring: try store.keyRing(), counter: state.counter, header: try store.header(), slots: try store.keySlots(),
            key: stateMACKey)
    }

    // MARK: - Rollback anchor

    static func rollbackMessage(_ finding: RollbackAnchor.Finding) -> String {
        historyWarning(finding, refused: "changes are refused")
    }

    /// What the owner is told of a rollback or a fork, saying what it refuses (`refused`: a
    /// server refuses its reads too).
    public static func historyWarning(_ finding: RollbackAnchor.Finding, refused: String) -> String {
        guard let history = finding.history else {
            return
                "this vault is older than a copy of it this computer has seen (it is at write \(finding.found), this computer saw write \(finding.seen)): it may have been replaced by an older copy; \(refused) until you run 'rxvault check --accept-rollback' (if you restored it on purpose)"
        }
        if history.relation == .forked {
            return
                "this vault is another line of history than the one this computer has seen: it lacks \(history.missingText), and holds \(HistoryFinding.writes(history.unseenCount)) never seen here (another device's copy was put over it, or an older copy was written to); \(refused) until you run 'rxvault check --accept-fork', which goes on from this state (the writes it lacks stay only in the copies that hold them)"
        }
        return
            "this vault is older than a copy of it this computer has seen: it lacks \(history.missingText); it may have been replaced by an older copy; \(refused) until you run 'rxvault check --accept-rollback' (if you restored it on purpose)"
    }

    /// Compares the file's counter with the anchor (at open). The counter is read without its
    /// MAC here, so that `check` can still open a damaged vault; a lower number only warns and
    /// blocks writes, and a counter is recorded only once the root verifies.
    ///
    /// The file's own anchor decides; without one, the vault's legacy anchor (one per vault id,
    /// from before anchors were per file), which the file takes over once it is at or past it.
    func compareWithAnchor() {
        guard let anchor, let anchorKey else { return }
        // Format 8: what this computer knows of the vault decides first (another line of
        // history has no lower counter to give it away).
        if let finding = historyFinding() {
            rollback = finding
            return
        }
        // The anchor first: it is only raised after a commit, so a writer committing meanwhile
        // can only make the file newer than what was read here, never look like a rollback.
        let own = anchor.own(anchorKey)
        let legacy = own == nil ? anchor.legacy(anchorKey.vaultIDHex) : nil
        let found = ((try? store.vaultState()) ?? nil)?.writeCounter ?? 0
        if let seen = own ?? legacy, found < seen {
            rollback = RollbackAnchor.Finding(seen: seen, found: found)
        } else if let state = try? read({ try verifyStateNow() }) {
            if legacy != nil {
                anchor.takeOverLegacy(anchorKey, counter: state.counter)
            } else {
                anchor.record(anchorKey, counter: state.counter)
            }
            recordOpened(state)
        }
    }

    /// The owner chose this state of the vault (it was restored or put back on purpose): the
    /// file's anchor records its counter as the newest, and writes are allowed again. A legacy
    /// anchor is left for the file it protected (this may be a side copy).
    ///
    /// `asThisComputersLine` false (a copy restored beside the vault): only the file's counter
    /// anchor moves; what this computer knows of the vault stays, so the copy is a fork of it
    /// (readable, written only once accepted) and the vault itself is unchanged.
    public func acceptCurrentState(asThisComputersLine: Bool = true) throws(VaultError) {
        let state = try read { try verifyStateNow() }
        if let anchorKey { anchor?.record(anchorKey, counter: state?.counter ?? 0, force: true) }
        if asThisComputersLine { acceptKnowledge(state) }
        rollback = nil
    }

    /// The write counter of the vault (0 for format 1).
    public func writeCounter() throws(VaultError) -> Int {
        try read { try verifyStateNow()?.counter ?? 0 }
    }

    // MARK: - check

    /// The patient bucket hashes against the rows, bucket by bucket (what a read of one
    /// prescription's patient relies on): each bucket whose rows are not the ones the owner wrote
    /// last, or a note when there are no bucket hashes for the current set.
    func patientBucketFindings(_ state: VaultState) throws -> (errors: [String], note: String?) {
        guard let hash = state.patientsHash else { return ([], nil) }
        guard let buckets = try currentPatientBuckets(patientsHash: hash) else {
            return (
                [],
                "no patient bucket hashes for the current patient records (none written yet, or an older rxvault changed them last): reading a prescription checks every patient row until the next owner write"
            )
        }
        let rows = PatientBuckets(rows: try store.patientMACs(), patientsHash: hash)
        return (
            (0..<PatientBuckets.count).filter { rows.hashes[$0] != buckets.hashes[$0] }.map {
                "patient bucket \($0) is not the one the owner wrote last (a patient row deleted, or put back from an older copy)"
            }, nil
        )
    }

    /// `check`'s stage: the root, every bucket against it, every prescription's rows against the
    /// manifest, and the client rows and the audit head.
    func checkState() throws -> CheckReport.Stage {
        let name = "state root and manifest"
        guard header.formatVersion >= 2 else {
            return CheckReport.Stage(
                name: name, checked: 0, errors: [],
                notes: [
                    "format 1: rows deleted or put back from an older copy cannot be detected until the next owner write upgrades the vault to format 2"
                ])
        }
        let state: VaultState
        do { state = try rootState() } catch {
            return CheckReport.Stage(name: name, checked: 1, errors: [try Self.finding(error)], notes: [])
        }
        var errors: [String] = []
        do { try verifyClientsAndAuditHead(state) } catch { errors.append(try Self.finding(error)) }
        if header.formatVersion >= 4 { errors += try keyRingFindings(state) }
        var index: [Int: [UInt8]] = [:]
        for (bucket, sealed) in try store.indexBuckets() { index[bucket] = sealed }
        var manifest: [String: ManifestEntry] = [:]
        var manifestContent: [Int: [UInt8]] = [:]
        for (bucket, content) in try store.manifestBuckets() { manifestContent[bucket] = content }
        for bucket in 0..<VaultState.bucketCount {
            do { try verifyIndexBucket(bucket, sealed: index[bucket], state: state) } catch {
                errors.append(try Self.finding(error))
            }
            guard VaultState.bucketHash(manifestContent[bucket]) == state.manifestHashes[bucket] else {
                errors.append(
                    "manifest bucket \(bucket) is not the one the owner wrote last (deleted, or put back from an older copy)"
                )
                continue
            }
            do {
                for (id, entry) in try openManifestBucket(bucket, content: manifestContent[bucket]) {
                    manifest[id] = entry
                }
            } catch {
                errors.append(try Self.finding(error))
            }
        }
        let ids = Set(try store.allPrescriptionIDs().map(\.hex)).union(manifest.keys)
        for id in ids.sorted() {
            let actual: ManifestEntry?
            do { actual = try storedRows(id).entry } catch {
                errors.append(try Self.finding(error))
                continue
            }
            let expected = manifest[id]
            if expected != actual { errors += ManifestEntry.differences(id, expected: expected, actual: actual) }
        }
        // Format 4: every patient row's MAC and the set of them against the root (a prescription
        // naming a patient the vault does not hold fails to open in the versions stage).
        var notes = ["write \(state.counter)"]
        if header.formatVersion >= 4 {
            do {
                let patients = try loadPatients(expected: state.patientsHash)
                notes.append("\(patients.records.count) patient record(s)")
            } catch {
                errors.append(try Self.finding(error))
            }
            do {
                let (found, note) = try patientBucketFindings(state)
                errors += found
                if let note { notes.append(note) }
            } catch {
                errors.append(try Self.finding(error))
            }
        }
        // Format 3 grant rows name no prescription in the clear: one that no manifest entry holds
        // (a removed client's, or one under a reference of no current prescription) is found here.
        if header.formatVersion >= 3 {
            let pinned = Set(manifest.values.flatMap(\.grants.keys))
            for row in try store.grants(clientID: nil, references: nil) where !pinned.contains(row.id.hex) {
                errors.append(
                    "grant \(row.id.short) (client \(row.clientID.short)) is not one the owner holds current (put back from an older copy, or forged)"
                )
            }
        }
        return CheckReport.Stage(name: name, checked: ids.count, errors: errors, notes: notes)
    }
}
