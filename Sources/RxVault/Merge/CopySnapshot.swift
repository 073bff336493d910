import RxStore

/// What a merge reads of one copy, verified, in one snapshot: the newest version row of each
/// prescription (compared as rows, so only prescriptions whose rows differ are opened), the
/// patients, clients and grants, the key slots and the audit head.
struct CopySnapshot {
    var heads: [PrescriptionID: PrescriptionVersionRecord] = [:]
    var patients: PatientDirectory
    var clients: [ClientSummary]
    var grants: [GrantSummary]
    var keySlots: [KeySlotRecord]
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
        auditHead = try vault.store.auditHead().map { ($0.sequence, $0.hash) }
    }
}
