import RxModel

/// A measurement with the patient it belongs to, as the owner reads it.
public struct MeasurementRecord: Sendable, Hashable {
    public let patient: PatientSummary
    public let measurement: EyeMeasurement
}

/// Myopia-management measurements (issue 26): add, list, edit, remove. Each lives inside its
/// patient's sealed record (DESIGN.md, "Measurements"), so every write here is a patient write:
/// the row is sealed again, its MAC and the state root's patients hash change with it, and
/// `check`, backups and restores cover it as they cover the patient. A client reads them only
/// through a grant that includes them (format 6, `Vault+MeasurementGrants.swift`), which every
/// write here re-seals.
extension Vault {
    /// Adds `measurement` (its id is made here) to the patient. Refused (invalid input) when it
    /// breaks `MeasurementRules`.
    @discardableResult
    public func addMeasurement(_ measurement: EyeMeasurement, patient: PatientID) throws(VaultError)
        -> MeasurementRecord
    {
        try requirePatientRecords()
        return try perform { write in
            guard var summary = try patientDirectory(in: write).records[patient.hex] else {
                throw VaultError.patientNotFound(patient.short)
            }
            var m = measurement
            m.id = PatientID.random().hex
            try checkMeasurement(m, of: summary)
            summary.measurements = Self.ordered(summary.measurements + [m])
            try writePatient(summary, in: write)
            try resealMeasurementGrants(ofPatients: [summary.id.hex], in: write)
            return MeasurementRecord(patient: summary, measurement: m)
        }
    }

    /// The measurements of one patient, or of every patient (by patient name, then date).
    public func measurements(of patient: PatientID? = nil) throws(VaultError) -> [MeasurementRecord] {
        try requirePatientRecords()
        let directory: PatientDirectory = try reading { read in try patientDirectory(in: read) }
        return directory.all.filter { patient == nil || $0.id == patient }.flatMap { summary in
            summary.measurements.map { MeasurementRecord(patient: summary, measurement: $0) }
        }
    }

    /// The measurement an id or unique id prefix (8+ hex digits) names.
    public func measurement(_ text: String) throws(VaultError) -> MeasurementRecord {
        let prefix = try RecordID.prefix(from: text)
        let matches = try measurements().filter { $0.measurement.id.hasPrefix(prefix) }
        guard matches.count == 1 else {
            if matches.isEmpty { throw .measurementNotFound(text) }
            throw .ambiguousID(prefix: text, matches: matches.count)
        }
        return matches[0]
    }

    /// Changes a measurement in place (`change` gets the stored one; its id cannot change), checked
    /// by the same rules as `addMeasurement`. Returns it as stored.
    @discardableResult
    public func editMeasurement(_ id: String, _ change: (inout EyeMeasurement) throws(VaultError) -> Void)
        throws(VaultError) -> MeasurementRecord
    {
        let found = try measurement(id)
        return try perform { write in
            guard var summary = try patientDirectory(in: write).records[found.patient.id.hex],
                let index = summary.measurements.firstIndex(where: { $0.id == found.measurement.id })
            else { throw VaultError.measurementNotFound(id) }
            var m = summary.measurements[index]
            try change(&m)
            m.id = found.measurement.id
            try checkMeasurement(m, of: summary)
            summary.measurements[index] = m
            summary.measurements = Self.ordered(summary.measurements)
            try writePatient(summary, in: write)
            try resealMeasurementGrants(ofPatients: [summary.id.hex], in: write)
            return MeasurementRecord(patient: summary, measurement: m)
        }
    }

    /// Removes a measurement; returns what was removed.
    @discardableResult
    public func removeMeasurement(_ id: String) throws(VaultError) -> MeasurementRecord {
        let found = try measurement(id)
        let removed: MeasurementRecord = try perform { write in
            guard var summary = try patientDirectory(in: write).records[found.patient.id.hex],
                let index = summary.measurements.firstIndex(where: { $0.id == found.measurement.id })
            else { throw VaultError.measurementNotFound(id) }
            summary.measurements.remove(at: index)
            try writePatient(summary, in: write)
            try resealMeasurementGrants(ofPatients: [summary.id.hex], in: write)
            return found
        }
        // The grants sealed with it must not linger in the write-ahead log.
        purge()
        return removed
    }

    private func checkMeasurement(_ m: EyeMeasurement, of summary: PatientSummary) throws(VaultError) {
        let problems = MeasurementRules.problems(m, today: clock.today(), birthDate: summary.birthDate)
        if !problems.isEmpty { throw .invalidInput(problems.joined(separator: "; ")) }
    }

    /// Oldest first; the id breaks ties so the order is the same everywhere.
    static func ordered(_ measurements: [EyeMeasurement]) -> [EyeMeasurement] {
        measurements.sorted { ($0.date, $0.id) < ($1.date, $1.id) }
    }
}
