import Foundation
import RxCrypto
import RxModel
import RxStore
import RxValidate

/// An open vault: the file, its header and the keys unwrapped from the passphrase.
///
/// Everything that reads or changes prescriptions goes through here, so rules (validation,
/// one transaction per command, re-wrapping on passphrase change) hold whatever the caller.
/// Keys live in `SecretBytes` and are zeroed when the vault is released.
public final class Vault {
    let store: any RecordStore
    public internal(set) var header: VaultHeader
    public let path: String
    let clock: VaultClock
    let rootKey: SecretBytes
    /// The key slot that opened the vault in this process (nil: opened with the root key, from
    /// the agent), and whether it was a recovery code: `passwd` changes that slot's passphrase,
    /// or slot 1's after a recovery.
    public internal(set) var openedSlot: Int?
    public internal(set) var openedWithRecovery = false
    /// The passphrase's key, kept only while the vault is in a format before 4: an upgrade re-wraps
    /// the root key with the new format version in its associated data, so the file cannot be
    /// turned back into an older format (and re-upgraded from forged rows) without it.
    private let upgradeKEK: SecretBytes?
    /// Set when deleted content could not be purged from the WAL (another process was reading);
    /// it stays there until the next checkpoint.
    public private(set) var purgeFailed = false

    /// Checkpoints and truncates the WAL so deleted content is gone from disk; remembers failure.
    func purge() {
        if !store.purgeDeletedContent() { purgeFailed = true }
    }

    /// Sub-key that wraps every data key.
    let keyWrappingKey: SecretBytes
    /// Sub-keys for the owner's records: MACs of clients and grants, MACs of audit entries,
    /// sealing of owner-only info, and the audit log's X25519 secret.
    let grantMACKey: SecretBytes
    let auditMACKey: SecretBytes
    let ownerInfoKey: SecretBytes
    let auditSecretKey: SecretBytes
    let recordMACKey: SecretBytes
    let indexKey: SecretBytes
    /// MACs the binding of the owner's exports (imports that update need it).
    let exportMACKey: SecretBytes
    let stateMACKey: SecretBytes
    /// Format 3: keys the grant references, seals the manifest.
    let grantReferenceKey: SecretBytes
    let manifestKey: SecretBytes
    /// Where the newest write counter seen is kept outside the file (nil: not kept), and under
    /// which name: this vault in this file, whose path is resolved once, at open.
    let anchor: RollbackAnchor?
    let anchorKey: RollbackAnchor.Key?
    /// Set at open when the file is older than what `anchor` recorded: owner writes are refused
    /// until the owner accepts it (`check --accept-rollback`, `restore`).
    public internal(set) var rollback: RollbackAnchor.Finding?
    /// The replica this process writes as (format 8; `writingReplica`): known at the first
    /// write, or when the owner accepts a state.
    var replica: ReplicaID?
    /// Set while `merge` writes: a merge is the way out of a fork or rollback, so it may write
    /// where other owner writes are refused.
    var mergingOverFork = false
    /// An owner write is under way on this vault: another may not begin inside it, nor a verified
    /// read (`reading`), which would check the file's last committed root instead of the
    /// write's own. A guard, nothing more: no read or write behaves otherwise by it; whatever
    /// runs inside a write is handed the `OwnerWrite`.
    private(set) var writeUnderWay = false
    /// What the last owner write left once committed (nil before one, and after one that rolled back).
    var lastWrite: OwnerWrite.Committed?
    /// What the last owner write did to patient records on its own (created one, set a birth
    /// date): `add` and `import` say so on stderr.
    public var patientNotes: [String] { lastWrite?.patientNotes ?? [] }
    /// Format 4: the patient records last verified outside a write, with the state root they were
    /// read under.
    var patientCache: (stamp: StateStamp, directory: PatientDirectory)?
    /// The search index `query` last opened outside a write (`indexSnapshot(keep:)`), with the
    /// state root's stamp it was verified under: `query` then `supersession` open it once.
    var indexCache: (stamp: StateStamp, snapshot: SearchIndex.Snapshot)?
    /// For reading one prescription's patient (`patientSummary`): the patient rows checked
    /// against the root at `stamp` so far, and the records opened. A cache like the two above,
    /// used only under the stamp it was read at, so a server's reads one after another check a
    /// patient bucket once per root, not once per read.
    var patientRows: PatientRows?

    private init(
        store: any RecordStore, header: VaultHeader, path: String, rootKey: SecretBytes, clock: VaultClock,
        upgradeKEK: SecretBytes?, anchor: RollbackAnchor?
    ) throws(VaultError) {
        self.store = store
        self.header = header
        self.path = path
        self.rootKey = rootKey
        self.clock = clock
        self.upgradeKEK = upgradeKEK
        self.anchor = anchor
        self.anchorKey = anchor.map { _ in RollbackAnchor.Key(vaultIDHex: header.vaultIDHex, path: path) }
        do {
            keyWrappingKey = try Subkey.keyWrapping.derive(from: rootKey)
            grantMACKey = try Subkey.grantMAC.derive(from: rootKey)
            auditMACKey = try Subkey.auditMAC.derive(from: rootKey)
            ownerInfoKey = try Subkey.ownerInfo.derive(from: rootKey)
            auditSecretKey = try Subkey.auditSealing.derive(from: rootKey)
            recordMACKey = try Subkey.recordMAC.derive(from: rootKey)
            indexKey = try Subkey.index.derive(from: rootKey)
            exportMACKey = try Subkey.exportMAC.derive(from: rootKey)
            stateMACKey = try Subkey.stateMAC.derive(from: rootKey)
            grantReferenceKey = try Subkey.grantReference.derive(from: rootKey)
            manifestKey = try Subkey.manifestSealing.derive(from: rootKey)
        } catch { throw .internalError(error.description) }
        // The audit public key in the header must be the one our root key derives: otherwise
        // clients would seal their log entries to someone else.
        guard (try? X25519.publicKey(of: auditSecretKey)) == header.auditPublicKey else {
            throw .integrity("the vault header's audit key does not belong to this vault")
        }
    }

    /// Creates a new vault file at `path` (never replacing one) protected by `passphrase`.
    public static func create(
        at path: String, passphrase: SecretBytes, kdf: PasswordKDF,
        maxAttachmentBytes: Int = ValidationLimits.defaultMaxBytes
    ) throws(VaultError) {
        guard passphrase.count > 0 else { throw .internalError("empty passphrase") }
        let vaultID = randomBytes(VaultHeader.vaultIDLength)
        let salt = randomBytes(PasswordKDF.saltLength)
        let rootKey = SecretBytes(randomCount: AEAD.keyLength)
        let wrapped: [UInt8]
        let auditPublicKey: [UInt8]
        let auditHeadMAC: [UInt8]
        let state: VaultStateRecord
        let keyRing: KeyRingRecord
        let record: VaultHeaderRecord
        do {
            let kek = try kdf.deriveKey(passphrase: passphrase, salt: salt)
            let aad = VaultHeader.rootKeyAssociatedData(
                formatVersion: VaultHeader.currentFormatVersion, vaultID: vaultID, kdf: kdf, salt: salt)
            wrapped = try AEAD.seal(rootKey, key: kek, associatedData: aad)
            auditPublicKey = try X25519.publicKey(of: Subkey.auditSealing.derive(from: rootKey))
            auditHeadMAC = try AuditLog.headMAC(
                sequence: 0, hash: AuditLog.zeroHash, key: Subkey.auditMAC.derive(from: rootKey))
            let empty = VaultState.empty(
                clientsHash: VaultState.clientsHash([]), patientsHash: VaultState.patientsHash([PatientRecord]()),
                indexBySeal: true, measurementGrants: true, assumedValidity: true, knowledge: .empty)
            state = VaultStateRecord(
                writeCounter: empty.counter, state: empty.encoded(),
                mac: try MAC.authenticate(
                    empty.macMessage(vaultID: vaultID), key: Subkey.stateMAC.derive(from: rootKey)))
            record = VaultHeaderRecord(
                formatVersion: VaultHeader.currentFormatVersion, vaultID: vaultID,
                kdfAlgorithm: PasswordKDF.algorithmName, kdfOpsLimit: kdf.opsLimit,
                kdfMemLimit: kdf.memLimit, kdfSalt: salt, wrappedRootKey: wrapped,
                maxAttachmentBytes: maxAttachmentBytes, auditPublicKey: auditPublicKey)
            keyRing = try KeyRing.record(
                header: record, slots: [], assumedValidity: AssumedValidity.none, counter: empty.counter,
                key: Subkey.stateMAC.derive(from: rootKey))
        } catch {
            throw .internalError(String(describing: error))
        }
        do {
            try VaultLocation.createStore(
                at: path, header: record, auditHeadMAC: auditHeadMAC, state: state, keyRing: keyRing)
        } catch let error as StoreError {
            if case .alreadyExists = error { throw .alreadyExists(path: path) }
            throw VaultError.from(error)
        } catch {
            throw VaultError.wrap(error)
        }
    }

    /// Opens the vault at `path` with `key`: its passphrase (a wrong one throws
    /// `.wrongPassphrase` and nothing is written), a recovery code (format 4: what `passwd
    /// --recovery-key-file` does when the passphrase is forgotten), or its root key, as the agent
    /// hands it (`VaultKey`). A command that finds another process writing waits up to
    /// `busyTimeoutMilliseconds` for it, then fails with `.busy`.
    ///
    /// With `anchor`, the vault's write counter is compared with the newest this computer has
    /// seen: an older vault is opened (its `rollback` says so) but owner writes are refused.
    public static func open(
        at path: String, with key: VaultKey, clock: VaultClock = .system,
        busyTimeoutMilliseconds: Int32 = Database.defaultBusyTimeoutMilliseconds,
        anchor: RollbackAnchor? = nil
    ) throws(VaultError) -> Vault {
        if case .rootKey(let rootKey) = key, rootKey.count != AEAD.keyLength {
            throw .internalError("a root key is \(AEAD.keyLength) bytes")
        }
        let vault = try open(at: path, busyTimeoutMilliseconds: busyTimeoutMilliseconds, clock: clock, anchor: anchor) {
            header throws(VaultError) in
            try key.unlock(header)
        }
        if case .recoveryCode = key { vault.openedWithRecovery = true }
        return vault
    }

    /// The same vault on a second SQLite connection with the same keys (no passphrase, no KDF):
    /// `rxvault serve` writes its audit entries there, so the reads it answers on the first
    /// connection never wait for them (SQLite's WAL lets one writer and readers go together).
    public func anotherConnection(busyTimeoutMilliseconds: Int32) throws(VaultError) -> sending Vault {
        let keys = VaultKey.Unlocked(rootKey: rootKey, upgradeKEK: upgradeKEK, slot: nil)
        return try Self.open(at: path, busyTimeoutMilliseconds: busyTimeoutMilliseconds, clock: clock, anchor: anchor) {
            _ in keys
        }
    }

    /// Every way of opening: the file and its header, the keys `unlock` finds for that header,
    /// then the file's counter compared with the anchor.
    private static func open(
        at path: String, busyTimeoutMilliseconds: Int32, clock: VaultClock, anchor: RollbackAnchor?,
        unlock: (VaultHeader) throws(VaultError) -> VaultKey.Unlocked
    ) throws(VaultError) -> sending Vault {
        let (store, header) = try VaultHeader.openStore(at: path, busyTimeoutMilliseconds: busyTimeoutMilliseconds)
        let keys = try unlock(header)
        let vault = try Vault(
            store: store, header: header, path: path, rootKey: keys.rootKey, clock: clock,
            upgradeKEK: keys.upgradeKEK, anchor: anchor)
        vault.openedSlot = keys.slot
        vault.compareWithAnchor()
        return vault
    }

    /// The root key wrapped for `header`'s format (an upgrade), under the passphrase's key.
    func rootKeyWrapped(for header: VaultHeaderRecord) throws -> [UInt8] {
        guard let upgradeKEK else { throw VaultError.internalError("no key to re-wrap the root key with") }
        let kdf = PasswordKDF(opsLimit: header.kdfOpsLimit, memLimit: header.kdfMemLimit)
        return try AEAD.seal(
            rootKey, key: upgradeKEK,
            associatedData: VaultHeader.rootKeyAssociatedData(
                formatVersion: header.formatVersion, vaultID: header.vaultID, kdf: kdf, salt: header.kdfSalt))
    }

    /// Counts of what the vault holds (for `status`).
    public struct Counts: Sendable {
        public let prescriptions: Int
        public let versions: Int
        public let attachments: Int
        /// Prescriptions in conflict (issue 48), counted on the search index's marks.
        public internal(set) var inConflict = 0
    }

    /// Read in one snapshot with the state root, which is verified first, as every owner command
    /// verifies it: `status` given the owner's key says that a root forged, altered or paired
    /// with an edited header is so (76), rather than count the rows as if they were current.
    public func counts() throws(VaultError) -> Counts {
        var counts = try reading { read in
            _ = try verifiedState(in: read)
            return Counts(
                prescriptions: try store.prescriptionCount(), versions: try store.versionCount(),
                attachments: try store.attachmentCount())
        }
        counts.inConflict = try conflictCount()
        return counts
    }

    // MARK: - Transactions

    /// Runs `body` as the command's one write transaction (`ownerWrite`), translating storage
    /// errors.
    func perform<T>(_ body: (OwnerWrite) throws -> T) throws(VaultError) -> T {
        do { return try ownerWrite(body) } catch { throw VaultError.wrap(error) }
    }

    /// The one owner write path. An older-format vault is first upgraded in a write transaction
    /// of its own (`upgradeIfNeeded`, once per process), so the write proper always begins on a
    /// current-format vault. Then one write transaction with its own `OwnerWrite`, begun by the
    /// owner's checks and housekeeping (`beginOwnerWrite`: the root verified; `maintain`: client
    /// log entries countersigned, expired grants revoked), then `body`, handed the write, then
    /// the index, manifest and a new root written (`finishOwnerWrite`), then the commit, after
    /// which the rollback anchor learns the new counter. Whatever `body` throws rolls its write
    /// back and is rethrown as it is (an import's refusal, a dry run's rollback); the upgrade
    /// before it stays committed (see `upgradeIfNeeded` for why); the write's working state is
    /// dropped either way. What may only run inside a write takes the `OwnerWrite` as a parameter
    /// (as GRDB's `write { db in }` hands its body the database), so it cannot be called outside one.
    func ownerWrite<T>(_ body: (OwnerWrite) throws -> T) throws -> T {
        guard !writeUnderWay else { throw VaultError.internalError("an owner write began inside another") }
        try upgradeIfNeeded()
        return try ownerTransaction(upgrading: false, body)
    }

    /// One owner write transaction (`ownerWrite`); `upgrading`: the upgrade's own
    /// (`upgradeIfNeeded`), which brings an older format to the current one before its
    /// housekeeping, and may begin on any format this rxvault reads.
    func ownerTransaction<T>(upgrading: Bool, _ body: (OwnerWrite) throws -> T) throws -> T {
        guard !writeUnderWay else { throw VaultError.internalError("an owner write began inside another") }
        let write = OwnerWrite(header: header)
        writeUnderWay = true
        defer {
            writeUnderWay = false
            // Reads' caches are kept under the root's stamp; after a write there is a new one.
            patientCache = nil
            patientRows = nil
            indexCache = nil
        }
        lastWrite = nil
        var swept = false
        let result: T
        // A write whose housekeeping and body changed nothing stored ends here, rolled back: no
        // new root, the counter where it was (`StoreEngine.writeHasChanges`).
        var unchanged: T?
        do {
            result = try store.write { () throws -> T in
                try beginOwnerWrite(write, upgrading: upgrading)
                write.upkeep = try maintain(write)
                swept = write.upkeep.expiredGrants > 0
                let value = try body(write)
                guard try write.hasPendingWork || store.writeHasChanges() else {
                    unchanged = value
                    throw WriteChangedNothing()
                }
                try finishOwnerWrite(write)
                Self.pauseBeforeCommitForTests()
                return value
            }
        } catch is WriteChangedNothing {
            // The header as `beginOwnerWrite` read and verified it stays: it is the stored one.
            return unchanged!
        } catch {
            header = write.headerBefore
            throw error
        }
        if let written = write.written {
            lastWrite = OwnerWrite.Committed(stamp: written, patientNotes: write.patientNotes)
            if let anchorKey { anchor?.record(anchorKey, counter: written.counter) }
            recordWritten(write.state?.knowledge, touched: write.touchedToRemember)
        }
        if swept { purge() }
        return result
    }

    /// `RXVAULT_TEST_WRITE_PAUSE_MS` (reliability suite only): wait this long with the write
    /// transaction open and everything written, just before commit, after saying so on stderr,
    /// so a kill can be aimed at the worst moment. Unset, it costs one comparison.
    /// Like every fault hook, it exists only in debug builds (`RXVAULT_FAULT_HOOKS`, Package.swift).
    private static let testWritePauseMilliseconds: UInt32 = FaultHook.number("RXVAULT_TEST_WRITE_PAUSE_MS") ?? 0

    static func pauseBeforeCommitForTests() {
        guard testWritePauseMilliseconds > 0 else { return }
        FileHandle.standardError.write(Data("rxvault: test: transaction open, pausing before commit\n".utf8))
        usleep(testWritePauseMilliseconds * 1000)
    }

    /// `RXVAULT_TEST_READ_PAUSE_MS` (tests only): wait this long after reading the state root,
    /// before the rows checked against it (client rows, audit head, key ring), after saying so
    /// on stderr, so a test can commit a write in between (Tests/CLITests/SnapshotReadTests.swift):
    /// the check must still see the one snapshot the root was read in. Unset, one comparison.
    private static let testReadPauseMilliseconds: UInt32 = FaultHook.number("RXVAULT_TEST_READ_PAUSE_MS") ?? 0

    static func pauseAfterStateRootForTests() {
        guard testReadPauseMilliseconds > 0 else { return }
        FileHandle.standardError.write(
            Data("rxvault: test: state root read, pausing before the rows checked against it\n".utf8))
        usleep(testReadPauseMilliseconds * 1000)
    }

    func read<T>(_ body: () throws -> T) throws(VaultError) -> T {
        do { return try store.read(body) } catch { throw VaultError.wrap(error) }
    }
}
