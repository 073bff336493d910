import RxStore

/// What one transaction has verified of the vault's state, handed to the reads that run in an
/// owner write or outside one (`verifiedState(in:)`, `manifestEntries`, `verifiedRows`, the
/// patient directory, the index snapshot): an owner write (`OwnerWrite`) or a verified read
/// (`VaultRead`). Such a read behaves as its argument says, never as its caller's context
/// happens to be: nothing of it is kept on the long-lived `Vault`.
protocol StateAccess: AnyObject {
    /// Which it is. Inside a write the root and the patient records are the write's own (as it
    /// has changed them so far), not the file's last committed ones.
    var transaction: Transaction { get }
    /// Manifest buckets opened and verified in this transaction: the file cannot change under
    /// it, so each is decrypted once, not once per prescription.
    var manifestCache: [Int: [String: ManifestEntry]] { get set }
    /// What a read over many prescriptions keeps (`Vault.readingMany`); nil for any other.
    var batch: ReadBatch? { get }
    /// The verified state root as this transaction sees it (nil: a format-1 vault); `verify`
    /// reads and verifies it when the transaction has none yet.
    func root(verifying verify: () throws -> VaultState?) throws -> VaultState?
}

/// An owner write or a verified read, for the few reads that differ between them.
enum Transaction {
    case write(OwnerWrite)
    case read(VaultRead)
}

extension StateAccess {
    /// The owner write this is; nil for a read.
    var write: OwnerWrite? {
        if case .write(let write) = transaction { return write }
        return nil
    }
}

/// One verified read transaction (`Vault.reading`, `Vault.readingMany`): the state root, verified
/// once, when first needed, and what was opened under it. Nothing in the file can change under a
/// read transaction, so whatever it verified stays verified until it ends, and it is dropped
/// with it.
final class VaultRead: StateAccess {
    var transaction: Transaction { .read(self) }
    var manifestCache: [Int: [String: ManifestEntry]] = [:]
    let batch: ReadBatch?
    /// The state root once verified (`.some(nil)`: a format-1 vault).
    private var verified: VaultState??
    /// The state root's counter and MAC as stored, read once (`Vault.storedStateStamp`).
    var stamp: (counter: Int, mac: [UInt8])??

    init(batch: ReadBatch?) {
        self.batch = batch
    }

    func root(verifying verify: () throws -> VaultState?) throws -> VaultState? {
        if let verified { return verified }
        let state = try verify()
        verified = .some(state)
        return state
    }
}

/// What a read over many prescriptions (an export) keeps, so that it checks each prescription's
/// rows against the manifest once, and reads the client list, the grant rows and which
/// prescriptions have attachments once, instead of again for each prescription. A read of one
/// prescription has none: reading every grant row to find one prescription's would cost more.
final class ReadBatch {
    /// Prescriptions whose rows were compared with the manifest in this read.
    var verified: Set<String> = []
    /// The rows of the prescriptions verified last (up to `recentLimit`: an export's batch), for
    /// the reads that follow on them (its newest version, then its attachments).
    private(set) var recentRows: [String: StoredRows] = [:]
    static let recentLimit = 256

    /// Keeps `rows` among the recent ones, forgetting the others when there are `recentLimit`.
    func keep(_ rows: StoredRows) {
        if recentRows.count >= Self.recentLimit { recentRows.removeAll(keepingCapacity: true) }
        recentRows[rows.id] = rows
    }
    /// The client ids, read once (a prescription's grants are looked up by one reference per client).
    var clientIDs: [ClientID]?
    /// Every grant row by its reference, read once (format 3), instead of a query per prescription.
    var grantsByReference: [String: [GrantRecord]]?
    /// The prescriptions that have attachment rows, read once: the others need no query for them.
    var withAttachments: Set<String>?
}

/// One prescription's rows as the file holds them (`Vault.storedRows`).
struct StoredRows {
    let id: String
    /// Its prescription row exists (it may have no other rows yet).
    let exists: Bool
    /// Every version, oldest first, with its sealed content.
    let versions: [PrescriptionVersionRecord]
    /// Its attachment rows (metadata and keys; the chunks are read when needed).
    let attachments: [AttachmentRecord]
    let grants: [Vault.StoredGrant]

    /// A prescription with no row at all.
    static func none(_ id: String) -> StoredRows {
        StoredRows(id: id, exists: false, versions: [], attachments: [], grants: [])
    }

    /// The rows in the manifest's terms (nil: no row at all).
    var entry: ManifestEntry? {
        guard exists else { return nil }
        return ManifestEntry(
            prescriptionID: id, versions: versions, attachments: attachments, grants: grants.map(\.row))
    }
}
