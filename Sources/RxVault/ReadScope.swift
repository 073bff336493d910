import RxStore

/// What one verified read transaction (`Vault.verifiedReads`) has checked so far. Nothing in the
/// file can change under a read transaction, so a command that reads many prescriptions (an
/// export) checks the state root once, each prescription's rows against the manifest once, and
/// reads the client list once, instead of again for each thing it asks of the same prescription.
struct ReadScope {
    /// The state root, verified when the scope began (nil: a format-1 vault).
    let state: VaultState?
    /// Manifest buckets opened in this scope (each decrypted once, not once per prescription).
    var manifest: [Int: [String: ManifestEntry]] = [:]
    /// Prescriptions whose rows were compared with the manifest in this scope.
    var verified: Set<String> = []
    /// The rows of the prescriptions verified last (up to `recentLimit`: an export's batch), for
    /// the reads that follow on them (its newest version, then its attachments).
    private(set) var recentRows: [String: StoredRows] = [:]
    static let recentLimit = 256

    /// Keeps `rows` among the recent ones, forgetting the others when there are `recentLimit`.
    mutating func keep(_ rows: StoredRows) {
        if recentRows.count >= Self.recentLimit { recentRows.removeAll(keepingCapacity: true) }
        recentRows[rows.id] = rows
    }
    /// The client ids, read once (a prescription's grants are looked up by one reference per client).
    var clientIDs: [ClientID]?
    /// Every grant row by its reference, read once (format 3), instead of a query per prescription.
    var grantsByReference: [String: [GrantRecord]]?
    /// The prescriptions that have attachment rows, read once: the others need no query for them.
    var withAttachments: Set<String>?
    /// The state root's counter and MAC, read once.
    var stamp: (counter: Int, mac: [UInt8])??

    init(state: VaultState?) {
        self.state = state
    }
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
