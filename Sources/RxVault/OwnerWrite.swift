import RxModel
import RxStore

/// One owner write's working state (DESIGN.md, "State root"): what the write path
/// (`Vault.ownerWrite`, behind `perform` and `importItems`) keeps while its transaction is open.
/// It is made when the write begins and dropped whole when the write commits or rolls back, so
/// nothing of one write (a verified root, a manifest bucket opened, an index entry pending, the
/// patient records as it left them) can be taken for current by the next, and no reset has to
/// name each field.
///
/// What outlives a write stays on `Vault`, each for its own reason:
/// - `lastWrite`: what the last committed write left, for its caller to read after the commit
///   (the root it wrote, the patient notes of `add` and `import`);
/// - `patientCache`, `patientRows`, `indexCache`: reads' caches, each kept with the state root's
///   stamp it was read under and used only under that stamp (dropped after every write all the
///   same);
/// - `rollback`, `header`: the vault's, not the write's (a write that rolls back puts back the
///   header it began with).
///
/// The reads that run in a write or outside one take it as their `StateAccess`, as they take a
/// `VaultRead` outside one: inside a write they see its own root and patient records.
final class OwnerWrite: StateAccess {
    /// The header as the write found it: put back if the write rolls back (it re-reads the stored
    /// header and may upgrade it), and compared by a served-reads write (`logServedReads`).
    let headerBefore: VaultHeader
    /// The verified state root as this write has changed it so far (index and manifest bucket
    /// hashes, the patients hash). Nil only while a format-1 vault is upgraded, before its first
    /// root is computed.
    var state: VaultState?
    /// Prescriptions verified against the manifest in this write: their entries are rewritten from
    /// their rows at the end (or every few ten thousand, by a large import).
    var touched: Set<String> = []
    /// The first few prescriptions this write touched (short ids), kept past each manifest flush:
    /// the computer remembers them with the write (`DeviceKnowledge.written`).
    private(set) var touchedToRemember: [String] = []
    static let touchedRememberedLimit = 20

    /// Keeps the short ids of `touched` (up to `touchedRememberedLimit` in all) before a flush empties it.
    func rememberTouched() {
        for id in touched.sorted() where touchedToRemember.count < Self.touchedRememberedLimit {
            let short = String(id.prefix(8))
            if !touchedToRemember.contains(short) { touchedToRemember.append(short) }
        }
    }
    /// Format 8: the stamp of the records this write makes (`Vault.stamp`), taken at first need.
    var stamp: WriteStamp?
    /// A merge's: the knowledge of the copy it brings in, joined with the vault's when the write
    /// ends (`Vault.advanceKnowledge`); set before any stamp is taken, so the stamp counts past it.
    var joinedKnowledge: KnowledgeVector?
    /// A merge's: the other copy's write counter, which the new root's counter passes, so that
    /// neither copy's rollback anchor takes the merged vault for an older one.
    var counterFloor = 0
    /// False for a merge that changed no record (it took in the other copy's knowledge and at
    /// most its audit entries): it counts no write of this replica, so two copies that hold the
    /// same records end with the same knowledge and the next merge either way finds nothing to do.
    var countsOwnWrite = true
    /// What a large import learnt of the store when it began (`StoredPrescriptions`); nil in
    /// every other write.
    var stored: StoredPrescriptions?
    /// Index changes (prescription id -> entry, nil = removed), applied to the buckets at the end.
    /// Kept encoded (a few hundred bytes each), so a large import can leave them all pending.
    var pendingIndex: [String: [UInt8]?] = [:]
    /// Versions linked and touched whose rows are not yet sealed and inserted (`Vault.storeVersionLater`):
    /// an import's new prescriptions, a batch at a time, sealed together on all cores.
    var unsealedVersions: [PrescriptionRecord] = []
    /// Manifest buckets opened in this write: the file cannot change under it, so each bucket is
    /// decrypted once per write instead of once per prescription (an import of 100,000 opened
    /// each ~400 times).
    var manifestCache: [Int: [String: ManifestEntry]] = [:]
    /// Format 4: the patient records as verified in this write, kept up to date by its own
    /// patient writes.
    var patients: PatientDirectory?
    /// A patient row was written or deleted: the root's patients hash is stale until
    /// `refreshPatientsHash`.
    var patientsChanged = false
    /// The patient bucket hashes computed with the patients hash (`refreshPatientsHash`).
    var freshPatientBuckets: PatientBuckets?
    /// What the write did to patient records on its own (created one, set a birth date), for
    /// `add` and `import` to say on stderr (`Vault.patientNotes`).
    var patientNotes: [String] = []
    /// A file's patient id the vault does not hold (another vault's export) -> the record its
    /// prescription was linked to here, so the file's patient records (`ExportPatient`) find
    /// the same record by id, whatever their names.
    var linkedPatients: [String: PatientID] = [:]
    /// What the write's housekeeping did before its body (`Vault.maintain`): `rxvault sweep`
    /// reports it.
    var upkeep = Vault.Upkeep(countersigned: 0, refused: 0, expiredGrants: 0)
    /// Set while the write upgrades a format-1 vault: client reads logged by rxvault 0.1.0 (before
    /// clients authenticated their entries) are countersigned as format 1 did.
    var trustingFormatOneReads = false
    /// The `assumed-validity` setting this write changes (`Vault.setAssumedValidity`), written
    /// into the key ring at its end; nil keeps the ring's.
    var assumedValidity: AssumedValidity?
    /// A merge's: the key ring's stamps and removed slots as the merge decided them (format 8),
    /// taken as they are when the ring is written; nil: the ring's, with what this write changed
    /// stamped (`Vault.nextRingHistory`).
    var ringHistory: KeyRingHistory?
    /// The root the write wrote (set by `finishOwnerWrite`, just before the commit).
    var written: StateStamp?

    init(header: VaultHeader) {
        headerBefore = header
    }

    var transaction: Transaction { .write(self) }
    /// A write reads prescriptions one at a time, through its own caches.
    var batch: ReadBatch? { nil }

    /// The write's root, as it has changed it so far; before it has one (a format-1 vault being
    /// upgraded), what `verify` finds: none, for format 1.
    func root(verifying verify: () throws -> VaultState?) throws -> VaultState? {
        if let state { return state }
        return try verify()
    }

    /// Work kept in memory to be stored when the write finishes (index entries, manifest entries
    /// of prescriptions touched, versions not yet sealed, a patients hash to recompute): a write
    /// with any is never taken for one that changed nothing.
    var hasPendingWork: Bool {
        !pendingIndex.isEmpty || !touched.isEmpty || !unsealedVersions.isEmpty || patientsChanged
            || assumedValidity != nil || joinedKnowledge != nil
    }

    /// The state root of the write; an internal error before one is known.
    func root() throws -> VaultState {
        guard let state else { throw VaultError.internalError("no state root in a write") }
        return state
    }

    /// What a committed write leaves for its caller.
    struct Committed {
        /// The state root it wrote: its counter goes to the rollback anchor, and a server tells
        /// its own audit writes from anyone else's by it (`logServedReads`).
        let stamp: StateStamp
        let patientNotes: [String]
    }
}

/// Thrown inside an owner write to end it with nothing written: the transaction rolls back (the
/// counter stays where it was, so a copy of the file put back is not a rollback) and the caller
/// rethrows `reason`, or reports "nothing changed" when there is none.
struct WriteAbandoned: Error {
    let reason: (any Error)?
}

/// Thrown by `Vault.ownerWrite` itself when a write's housekeeping and body changed nothing
/// stored: the transaction rolls back and the body's value is returned, so a command that
/// changes nothing writes nothing (no new root, the counter where it was).
struct WriteChangedNothing: Error {}
