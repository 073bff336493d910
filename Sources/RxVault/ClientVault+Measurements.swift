import RxModel
import RxStore

/// The measurements a client was granted (format 6): those its grants carry, each grant with its
/// prescription's patient's measurements as the owner last sealed them (`Vault+MeasurementGrants`).
extension ClientVault {
    /// The patients of the client's grants that include measurements, each with those
    /// measurements (oldest first), by name. A patient's measurements reach the client through
    /// every grant on that patient's prescriptions that includes them; the owner re-seals all of
    /// them in one write, so they agree (the grant of the lowest prescription id is taken).
    public func measuredPatients() throws(VaultError) -> [PatientSummary] {
        var byPatient: [String: PatientSummary] = [:]
        for (id, keys) in granted.sorted(by: { $0.key.hex < $1.key.hex }) {
            guard let stored = keys.context.measurements, let patient = keys.context.patient,
                let patientHex = patient.id, let patientID = PatientID(hex: patientHex)
            else { continue }
            // Each grant on the patient's prescriptions carries the same list (all are re-sealed
            // together); the first one read stands for them.
            if byPatient[patientHex] != nil { continue }
            let measurements: [EyeMeasurement]
            do { measurements = try stored.map { try $0.measurement() } } catch {
                throw .integrity("the grant on prescription \(id.short) carries measurements that do not read")
            }
            byPatient[patientHex] = PatientSummary(
                id: patientID, name: patient.name, birthDate: patient.birthDate, merged: [],
                family: patient.family, given: patient.given, measurements: measurements)
        }
        return PatientDirectory.ordered(Array(byPatient.values))
    }

    /// The granted measurements of one patient (`patient`: a name, part of one or an id prefix,
    /// matched as the owner's `measurement list` matches it among the granted patients only), or
    /// of every granted patient. Logged as a read of the prescriptions whose grants carried them.
    public func measurements(of patient: String?) throws(VaultError) -> [MeasurementRecord] {
        let patients = try measuredPatients()
        var chosen = patients
        if let patient { chosen = [try Vault.findPatient(patient, among: patients)] }
        let ids = Set(chosen.map(\.id.hex))
        let carriers = granted.filter {
            $0.value.context.measurements != nil && ids.contains($0.value.context.patient?.id ?? "")
        }
        logRead(carriers.keys.map(\.hex).sorted(), detail: "measurements")
        return chosen.flatMap { summary in
            summary.measurements.map { MeasurementRecord(patient: summary, measurement: $0) }
        }
    }
}
