/// What RxVault needs from storage, and nothing more: header, prescription versions, one write
/// transaction per command. SQLite implements it today (`SQLiteRecordStore`); another engine
/// (PostgreSQL for a practice) can implement it later without touching RxVault.
///
/// Implementations store what they are given: ciphertext and random ids. They never see a key.
///
/// What they hand back is checked where it is read (issue 22): every integer within its
/// `StoredRange`, every id 32 lower-case hex digits, every value of its column's type and not
/// NULL unless the column may be, fixed-length blobs of their length. A row that breaks this is
/// `StoreError.corrupt` naming the table, the row and the column. RxVault counts on it: it adds
/// one to a stored version or sequence number, and indexes by a stored bucket, without checking again.
public protocol RecordStore: AnyObject {
    func header() throws(StoreError) -> VaultHeaderRecord
    func replaceWrappedRootKey(_ wrapped: [UInt8]) throws(StoreError)

    /// The ids that begin with `prefix` (lower-case hex), at most `limit` of them.
    func prescriptionIDs(withPrefix prefix: String, limit: Int) throws(StoreError) -> [String]
    /// Every prescription's newest version.
    func latestVersions() throws(StoreError) -> [PrescriptionVersionRecord]
    /// Every version of one prescription, oldest first; empty if there is no such prescription.
    func versions(of id: String) throws(StoreError) -> [PrescriptionVersionRecord]
    func latestVersion(of id: String) throws(StoreError) -> PrescriptionVersionRecord?
    /// Adds a version; creates the prescription when `record.version` is 1.
    func insert(_ record: PrescriptionVersionRecord) throws(StoreError)
    /// Deletes the prescription with every version. Returns false if there was none.
    func deletePrescription(_ id: String) throws(StoreError) -> Bool
    func prescriptionCount() throws(StoreError) -> Int

    /// The attachments of one prescription, in the order they were added.
    func attachments(of prescriptionID: String) throws(StoreError) -> [AttachmentRecord]
    func attachmentIDs(of prescriptionID: String, withPrefix prefix: String, limit: Int) throws(StoreError) -> [String]
    func attachment(_ id: String) throws(StoreError) -> AttachmentRecord?
    func insert(_ attachment: AttachmentRecord) throws(StoreError)
    func updateMetadata(ofAttachment id: String, to metadata: [UInt8], mac: [UInt8]) throws(StoreError)
    func insertChunk(attachmentID: String, sequence: Int, data: [UInt8]) throws(StoreError)
    /// Calls `body` with each stored chunk in sequence order, one at a time (memory stays bounded).
    func forEachChunk(ofAttachment id: String, _ body: (Int, [UInt8]) throws -> Void) throws
    /// One stored chunk (nil: there is none with that number), for readers that pull chunk by chunk.
    func chunk(ofAttachment id: String, sequence: Int) throws(StoreError) -> [UInt8]?
    func deleteAttachment(_ id: String) throws(StoreError) -> Bool
    func attachmentCount() throws(StoreError) -> Int
    /// prescription id -> number of attachments (only prescriptions that have some).
    func attachmentCountsByPrescription() throws(StoreError) -> [String: Int]

    func clients() throws(StoreError) -> [ClientRecord]
    /// The client whose `lookup` is `key` (format 1 and 2: its public key; format 3: its lookup tag).
    func client(withLookup key: [UInt8]) throws(StoreError) -> ClientRecord?
    func insert(_ client: ClientRecord) throws(StoreError)
    func deleteClient(_ id: String) throws(StoreError)

    /// Grants, optionally only one client's, or only those with one of `references` (format 1
    /// and 2: prescription ids; format 3: grant references).
    func grants(clientID: String?, references: [String]?) throws(StoreError) -> [GrantRecord]
    /// Inserts or replaces the grant with the same reference (one per client and prescription).
    func upsert(_ grant: GrantRecord) throws(StoreError)
    func deleteGrant(_ id: String) throws(StoreError)

    /// The sealed search-index buckets, by number.
    func indexBuckets() throws(StoreError) -> [(Int, [UInt8])]
    func indexBucket(_ bucket: Int) throws(StoreError) -> [UInt8]?
    func setIndexBucket(_ bucket: Int, to sealed: [UInt8]) throws(StoreError)
    func clearIndex() throws(StoreError)

    func auditEntries() throws(StoreError) -> [AuditEntryRecord]
    /// Entries after `sequence` (what clients appended since the owner's last write).
    func auditEntries(after sequence: Int) throws(StoreError) -> [AuditEntryRecord]
    /// One entry, by its sequence number (a reader walking the log back from the head).
    func auditEntry(_ sequence: Int) throws(StoreError) -> AuditEntryRecord?
    /// One entry's stored hash alone (what the entry after it chains on), without its sealed bytes.
    func auditEntryHash(_ sequence: Int) throws(StoreError) -> [UInt8]?
    func lastAuditEntry() throws(StoreError) -> AuditEntryRecord?
    func append(_ entry: AuditEntryRecord) throws(StoreError)
    func setAuditMAC(sequence: Int, mac: [UInt8]) throws(StoreError)
    func auditHead() throws(StoreError) -> (sequence: Int, hash: [UInt8], mac: [UInt8])?
    func setAuditHead(sequence: Int, hash: [UInt8], mac: [UInt8]) throws(StoreError)
    func versionCount() throws(StoreError) -> Int

    // MARK: - Format 2: state root and manifest

    /// The schema version of the file (`1` until upgraded).
    func schemaVersion() throws(StoreError) -> Int
    /// Adds the format-2 tables and moves the header to format 2 with the root key re-wrapped
    /// for it, inside the caller's write transaction.
    func upgradeToFormat2(wrappedRootKey: [UInt8]) throws(StoreError)
    /// Rebuilds the client and grant tables in their format-3 form holding `clients` and
    /// `grants` (already in that form), and moves the header to format 3, inside the caller's
    /// write transaction.
    func upgradeToFormat3(wrappedRootKey: [UInt8], clients: [ClientRecord], grants: [GrantRecord]) throws(StoreError)
    /// Format 4, patients: creates the patient table inside the caller's write transaction
    /// (the header and `user_version` move with `upgradeToFormat4`).
    func createPatientTable() throws(StoreError)
    /// Moves the header to format 4 with the root key re-wrapped for it, and `user_version` to 4,
    /// inside the caller's write transaction (after each format-4 part added its tables).
    func upgradeToFormat4(wrappedRootKey: [UInt8]) throws(StoreError)
    /// Every patient row, in id order (none before format 4).
    func patients() throws(StoreError) -> [PatientRecord]
    /// Every patient row's id and MAC, in id order (what the state root's patients hash covers),
    /// without the sealed info: enough to check the set before opening one row.
    func patientMACs() throws(StoreError) -> [(id: String, mac: [UInt8])]
    /// The ids and MACs of the patient rows whose id starts with `prefix` (two hex digits: one
    /// bucket, `PatientBuckets`), in id order: a range query on the id.
    func patientMACs(withPrefix prefix: String) throws(StoreError) -> [(id: String, mac: [UInt8])]
    /// The owner's patient bucket hashes (`person_buckets`), nil when the file has none (a
    /// vault last written by an rxvault before them, or a new vault before its first write).
    func patientBuckets() throws(StoreError) -> PatientBucketsRecord?
    /// Stores the patient bucket hashes, creating their table if the file has none yet (inside
    /// the caller's write transaction).
    func setPatientBuckets(_ record: PatientBucketsRecord) throws(StoreError)
    /// One patient row, or nil.
    func patient(id: String) throws(StoreError) -> PatientRecord?
    /// Inserts the patient, or replaces the row with the same id.
    func upsert(_ patient: PatientRecord) throws(StoreError)
    /// Deletes the patient row. Returns false if there was none.
    func deletePatient(_ id: String) throws(StoreError) -> Bool

    /// The state root row, nil when there is none.
    func vaultState() throws(StoreError) -> VaultStateRecord?
    /// The state root's counter and MAC alone (what a server compares on every request).
    func vaultStateStamp() throws(StoreError) -> (counter: Int, mac: [UInt8])?
    func setVaultState(_ state: VaultStateRecord) throws(StoreError)
    func manifestBuckets() throws(StoreError) -> [(Int, [UInt8])]
    func manifestBucket(_ bucket: Int) throws(StoreError) -> [UInt8]?
    /// Stores a manifest bucket; `nil` deletes it (no prescription left in it).
    func setManifestBucket(_ bucket: Int, to content: [UInt8]?) throws(StoreError)
    /// Every prescription id that any table names in the clear (prescriptions, versions,
    /// attachments, and grants up to format 2).
    func allPrescriptionIDs() throws(StoreError) -> [String]

    // MARK: - Format 4: key slots

    /// Adds the key-slot tables (format 4), inside the caller's write transaction.
    func upgradeKeySlotsToFormat4() throws(StoreError)
    /// The key slots besides the header's, by id; empty before format 4.
    func keySlots() throws(StoreError) -> [KeySlotRecord]
    /// Inserts or replaces the slot with the same id.
    func upsert(_ slot: KeySlotRecord) throws(StoreError)
    func deleteKeySlot(_ id: Int) throws(StoreError)
    /// Replaces the header's passphrase slot (slot 1): its KDF costs, salt and wrapped root key
    /// (an empty `wrapped` leaves slot 1 empty, format 4).
    func replaceHeaderKey(opsLimit: UInt64, memLimit: UInt64, salt: [UInt8], wrapped: [UInt8]) throws(StoreError)
    func setMaxAttachmentBytes(_ bytes: Int) throws(StoreError)
    /// The key ring row, nil when there is none (or before format 4).
    func keyRing() throws(StoreError) -> KeyRingRecord?
    func setKeyRing(_ ring: KeyRingRecord) throws(StoreError)

    /// Runs `body` as one atomic write: all of it is stored, or none.
    func write<T>(_ body: () throws -> T) throws -> T
    /// Runs `body` against one consistent snapshot.
    func read<T>(_ body: () throws -> T) throws -> T
    /// Writes a consistent copy of the whole store to `path` (a new file), even while another
    /// process writes: the copy is one read transaction's snapshot.
    func snapshot(to path: String) throws(StoreError)

    /// Makes deleted content unrecoverable from the files (WAL checkpoint and truncate).
    /// Returns false when another connection kept the WAL from being truncated.
    @discardableResult
    func purgeDeletedContent() -> Bool
    /// Copies what the write-ahead log holds into the file, as far as no reader needs it, and
    /// empties it when no reader uses it, without waiting (a store that is no file answers true).
    @discardableResult
    func checkpointWithoutWaiting() -> Bool
    /// Whether the file the store has open was replaced or removed since it was opened (a store
    /// that is no file answers false).
    func fileHasMoved() -> Bool
    /// Keeps the page cache small while a large attachment streams through, so memory stays at a
    /// few chunks instead of the engine's default cache (2 MiB for SQLite).
    func useSmallCacheForStreaming()
    /// Lets one large write transaction (an import of many prescriptions) keep its pages in
    /// memory until commit, instead of spilling and rewriting them many times over; and one
    /// large read (an export) keep the b-tree pages it comes back to.
    func useLargeCacheForBulkWork()
}
