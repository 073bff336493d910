import RxStore

/// What a large import knows of the store when it begins, read in three queries: every
/// prescription id a table names, every grant reference and every client. An id that is in none
/// of them has no row at all, and none can be written under the owner's write lock but by this
/// write: so the import plans it as new, and checks it against the manifest, without a read of
/// its own. Reads were five per prescription, each a round trip to a database server; an import
/// of 100,000 into PostgreSQL spent most of its time on them. An id the write touches
/// (`Vault.touch`) may get rows from then on and is no longer counted as known.
struct StoredPrescriptions {
    private var ids: Set<PrescriptionID>
    private let grantReferences: Set<String>
    let clientIDs: [ClientID]

    init(ids: [PrescriptionID], grantReferences: [String], clientIDs: [ClientID]) {
        self.ids = Set(ids)
        self.grantReferences = Set(grantReferences)
        self.clientIDs = clientIDs
    }

    /// Whether `id` has no row: no table names it, and no client's grant reference for it
    /// (`reference`) is stored.
    func hasNoRows(_ id: PrescriptionID, reference: (ClientID) throws -> String) rethrows -> Bool {
        guard !ids.contains(id) else { return false }
        for client in clientIDs where grantReferences.contains(try reference(client)) { return false }
        return true
    }

    /// `id` may have rows from now on (the write touched it).
    mutating func forget(_ id: PrescriptionID) { ids.insert(id) }
}

extension Vault {
    /// Reads what `StoredPrescriptions` knows, for the owner write under way.
    func learnStoredPrescriptions(_ write: OwnerWrite) throws {
        write.stored = StoredPrescriptions(
            ids: try store.allPrescriptionIDs(),
            grantReferences: try store.grants(clientID: nil, references: nil).map(\.reference),
            clientIDs: try store.clients().map(\.id))
    }

    /// Whether the write under way knows that `id` has no row (false when it does not know).
    func knownToHaveNoRows(_ id: PrescriptionID, in write: OwnerWrite) throws -> Bool {
        guard let stored = write.stored else { return false }
        return try stored.hasNoRows(id) { try grantReference(clientID: $0, prescriptionID: id) }
    }
}
