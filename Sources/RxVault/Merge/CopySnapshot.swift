import RxModel
import RxStore

/// What a merge reads of one copy, verified, in one snapshot: the newest version row of each
/// prescription (compared as rows, so only prescriptions whose rows differ are opened), the
/// patients, clients and grants, the key slots and settings with the key ring's stamps of them,
/// and the audit head.
struct CopySnapshot {
    var heads: [PrescriptionID: PrescriptionVersionRecord] = [:]
    var patients: PatientDirectory
    var clients: [ClientSummary]
    var grants: [GrantSummary]
    var keySlots: [KeySlotRecord]
    /// The header row: slot 1 (its key columns) and the attachment size limit.
    var header: VaultHeaderRecord
    var assumedValidity: AssumedValidity
    /// Format 8: which write made each slot and setting, and the slots removed (`KeyRingHistory`).
    var ringHistory: KeyRingHistory
    var auditHead: (sequence: Int, hash: [UInt8])?

    init(of vault: Vault, in access: any StateAccess) throws {
        for row in try vault.store.latestVersions() { heads[row.prescriptionID] = row }
        for id in heads.keys { try vault.verifyCurrent(id.hex, in: access) }
        patients = try vault.patientDirectory(in: access)
        clients = try vault.clientSummaries()
        let byID = Dictionary(uniqueKeysWithValues: clients.map { ($0.id, $0) })
        grants = try vault.storedGrants(clientID: nil, prescriptionID: nil).map { stored in
            guard let client = byID[stored.row.clientID] else {
                throw VaultError.integrity("grant \(stored.row.id.short) names no client")
            }
            return try vault.openGrant(stored, client: client)
        }
        keySlots = try vault.store.keySlots()
        header = try vault.store.header()
        assumedValidity = try vault.storedAssumedValidity()
        ringHistory = try vault.storedRingHistory()
        auditHead = try vault.store.auditHead().map { ($0.sequence, $0.hash) }
    }
}

extension CopySnapshot {
    /// Each key slot's hash as the key ring commits to it (`KeyRing.slotHash`), by id; slot 1
    /// only while the header wraps the root key.
    var slotHashes: [Int: [UInt8]] { KeyRing.content(header: header, slots: keySlots).slots }

    /// Whether slot `id` is a passphrase slot (slot 1 always is).
    func isPassphrase(_ id: Int) -> Bool {
        id == 1 || keySlots.first { $0.id == id }?.kind == KeySlot.Kind.passphrase.rawValue
    }
}
