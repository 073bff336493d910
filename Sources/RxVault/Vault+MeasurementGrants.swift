import RxModel

/// Measurements granted to clients (issue 26; DESIGN.md, "Measurements"). A grant that includes
/// them carries, in the box sealed to the client, its prescription's patient's measurements as
/// they are when it is sealed: HealthKit authorizes measurements by type rather than per object,
/// and a practice shares a child's axial lengths with the app that follows the child's
/// prescriptions, not one visit at a time. So a measurement has no data key of its own; every
/// change to a patient's measurements re-seals the grants that carry them, and taking them out
/// of a grant re-seals it without them (the manifest pins the new row, so the old one cannot be
/// put back). What a client held before stays with it, as for a revoked prescription.
extension Vault {
    /// The measurements a grant on a prescription of `patient` carries: the patient record's, in
    /// their stored form, oldest first. A prescription without a patient record carries none.
    func grantedMeasurements(of patient: Patient?, in write: OwnerWrite) throws -> [StoredMeasurement] {
        guard let id = patient?.id, let summary = try patientSummary(id, in: write) else { return [] }
        return summary.measurements.map(StoredMeasurement.init)
    }

    /// Re-seals every grant that carries the measurements of one of `patientIDs` (after they
    /// changed), to its client, with its terms unchanged. Other grants stay as they are.
    func resealMeasurementGrants(ofPatients patientIDs: Set<String>, in write: OwnerWrite) throws {
        guard !patientIDs.isEmpty else { return }
        let clients = Dictionary(uniqueKeysWithValues: try clientSummaries().map { ($0.id, $0) })
        guard !clients.isEmpty else { return }
        for indexed in try prescriptions(of: patientIDs, in: write) {
            // Only a prescription with a grant that carries measurements is touched (its rows
            // verified against the owner's manifest, then its entry rewritten): a write of
            // measurements no client is granted leaves the patient's prescriptions' rows and
            // manifest buckets as they were. A grant row is opened (its MAC checked) to tell.
            let carriers = try storedGrants(clientID: nil, prescriptionID: indexed.id).compactMap {
                stored -> (StoredGrant, ClientSummary, GrantSummary)? in
                guard let client = clients[stored.row.clientID] else { return nil }
                let grant = try openGrant(stored, client: client)
                return grant.includesMeasurements ? (stored, client, grant) : nil
            }
            guard !carriers.isEmpty else { continue }
            // Touching verifies the rows read above against the manifest (in this write, so they
            // cannot change in between) before any is rewritten.
            try touch(indexed.id.hex, in: write)
            for (stored, client, grant) in carriers {
                try writeGrant(
                    id: stored.row.id, client: client, prescriptionID: indexed.id,
                    info: GrantInfo(keeping: grant), in: write)
            }
        }
    }
}
