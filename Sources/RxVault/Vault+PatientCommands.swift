import Foundation
import RxCrypto
import RxModel
import RxStore

/// The patient commands (`patients`, `patient show|edit|merge`) over the patient records of
/// Vault+Patients.swift: list, resolve a name or id, rename or date, merge two records.
extension Vault {
    // MARK: - Commands

    /// Every patient record with its prescriptions (newest versions), by name.
    public func patients() throws(VaultError) -> [(PatientSummary, [PrescriptionRecord])] {
        try requirePatientRecords()
        let records = try list()
        let directory: PatientDirectory = try reading { read in try patientDirectory(in: read) }
        var byPatient: [String: [PrescriptionRecord]] = [:]
        for record in records {
            if let id = record.prescription.patient.id { byPatient[id, default: []].append(record) }
        }
        return directory.all.map { ($0, byPatient[$0.id.hex] ?? []) }
    }

    /// The patient a name or id prefix stands for: an exact name match (as `add` matches), else
    /// a unique id prefix. Two or more is an error listing them.
    public func resolvePatient(_ text: String) throws(VaultError) -> PatientSummary {
        try requirePatientRecords()
        let directory: PatientDirectory = try reading { read in try patientDirectory(in: read) }
        return try Self.resolvePatient(text, among: directory.all)
    }

    /// `resolvePatient` among `patients` (a client's: those of its grants).
    static func resolvePatient(_ text: String, among patients: [PatientSummary]) throws(VaultError) -> PatientSummary {
        let byName = patients.filter { PatientName.key($0.name) == PatientName.key(text) }
        if byName.count == 1 { return byName[0] }
        if byName.count > 1 { throw .ambiguousPatient("patient '\(text)'", candidates: byName.map(\.line)) }
        let prefix = text.lowercased()
        guard prefix.count >= RecordID.minimumPrefixLength, RecordID.isHex(prefix) else {
            throw .patientNotFound("'\(text)'")
        }
        let byID = patients.filter { $0.id.hex.hasPrefix(prefix) }
        guard byID.count == 1 else {
            if byID.isEmpty { throw .patientNotFound("'\(text)'") }
            throw .ambiguousPatient("id prefix \(text)", candidates: byID.map(\.line))
        }
        return byID[0]
    }

    /// The patient a name, part of a name or id prefix stands for, as `query --patient` matches
    /// names (`PrescriptionFilter.patientName(_:matches:)`: the name contains the text, in any
    /// case), for `trend` and `patient show`. A name equal to the text (as `add` compares names)
    /// wins over names that only contain it, so "Sam Rivera" is not ambiguous beside "Sam Rivera
    /// Jr". Two or more matches is an error listing them, as for an ambiguous id; none, an id
    /// prefix (`resolvePatient`).
    public func findPatient(_ text: String) throws(VaultError) -> PatientSummary {
        try requirePatientRecords()
        let directory: PatientDirectory = try reading { read in try patientDirectory(in: read) }
        return try Self.findPatient(text, among: directory.all)
    }

    /// `findPatient` among `patients` (a client's: those of its grants).
    static func findPatient(_ text: String, among patients: [PatientSummary]) throws(VaultError) -> PatientSummary {
        let exact = patients.filter { PatientName.key($0.name) == PatientName.key(text) }
        let matches = exact.isEmpty ? patients.filter { PrescriptionFilter.patientName($0.name, matches: text) } : exact
        if matches.count == 1 { return matches[0] }
        if matches.count > 1 { throw .ambiguousPatient("patient '\(text)'", candidates: matches.map(\.line)) }
        return try resolvePatient(text, among: patients)
    }

    /// The records `patient` (a name typed for a patient no record matches by `add`'s rule) may
    /// have been meant as (`PatientNearMiss`); empty when a record matches it, or before format 4.
    public func nearMissPatients(_ patient: Patient) throws(VaultError) -> [PatientSummary] {
        guard header.formatVersion >= 4 else { return [] }
        return try reading { read in try patientDirectory(in: read).nearMisses(patient) }
    }

    /// Removes a patient record that no prescription names any more. Refused (invalid input)
    /// while any prescription's newest version names it (the message says how many), and while
    /// an earlier version of any prescription does: every version is read with its patient, and
    /// one naming a record that is gone would read as tampering. Returns the record removed.
    @discardableResult
    public func removePatient(_ id: PatientID) throws(VaultError) -> PatientSummary {
        try requirePatientRecords()
        return try perform { write in
            guard let summary = try patientDirectory(in: write).records[id.hex] else {
                throw VaultError.patientNotFound(id.short)
            }
            // Inside the write, so an `edit --patient` run at the same moment cannot leave a
            // version naming the record after it is gone (which `check` would call tampering).
            // (A version naming a record merged into this one reads as naming this one.)
            var earlier: Set<PrescriptionID> = []
            for prescriptionID in try store.allPrescriptionIDs() {
                for version in try history(prescriptionID, in: write).dropLast()
                where version.prescription.patient.id == id.hex {
                    earlier.insert(prescriptionID)
                }
            }
            let current = try prescriptions(of: [id.hex], in: write).count
            if current > 0 {
                throw VaultError.invalidInput(
                    "\(summary.line) still has \(current) prescription\(current == 1 ? "" : "s"); "
                        + "remove \(current == 1 ? "it" : "them") ('rxvault remove ID') or move \(current == 1 ? "it" : "them") "
                        + "to another patient ('rxvault patient merge', 'rxvault edit ID --patient NAME') first"
                )
            }
            if !summary.measurements.isEmpty {
                let n = summary.measurements.count
                throw VaultError.invalidInput(
                    "\(summary.line) still has \(n) measurement\(n == 1 ? "" : "s"); "
                        + "remove \(n == 1 ? "it" : "them") first ('rxvault measurement remove ID')")
            }
            if !earlier.isEmpty {
                throw VaultError.invalidInput(
                    "earlier versions of \(earlier.count) prescription\(earlier.count == 1 ? "" : "s") "
                        + "(\(earlier.map(\.short).sorted().joined(separator: ", "))) name \(summary.line); "
                        + "'rxvault history ID' shows them, and the patient is kept for them"
                )
            }
            try deletePatientRow(id, in: write)
            return summary
        }
    }

    /// Which of `patient` (written as free text) the vault's records are, by `add`'s rule.
    public func matchingPatients(_ patient: Patient) throws(VaultError) -> [PatientSummary] {
        guard header.formatVersion >= 4 else { return [] }
        return try reading { read in try patientDirectory(in: read).matching(patient) }
    }

    /// Renames a patient and/or sets (nil in `birthDate`: keeps; `.some(nil)`: removes) the birth
    /// date. Every prescription of the patient reads the new values at once; their grants are
    /// sealed again so clients see them too. Returns the record as it now is.
    @discardableResult
    public func updatePatient(_ id: PatientID, name: String?, birthDate: CalendarDate??) throws(VaultError)
        -> PatientSummary
    {
        try requirePatientRecords()
        let name = name.map { $0.split(whereSeparator: \.isWhitespace).joined(separator: " ") }
        if let name {
            if name.isEmpty { throw .invalidInput("a patient's name cannot be empty") }
            if let problem = TextField.name.problem(with: name) { throw .invalidInput("patient name: \(problem)") }
        }
        if case .some(.some(let day)) = birthDate, day > clock.today() {
            throw .invalidInput("date of birth \(day) is in the future")
        }
        return try perform { write in
            guard var summary = try patientDirectory(in: write).records[id.hex] else {
                throw VaultError.patientNotFound(id.short)
            }
            if let name, name != summary.name {
                summary.name = name
                // The parts of the old name no longer make up the new one.
                (summary.family, summary.given) = (nil, nil)
            }
            if let birthDate { summary.birthDate = birthDate }
            try Self.checkBirthDate(of: summary)
            for record in try prescriptions(of: [id.hex], in: write) {
                if let dob = summary.birthDate, dob > record.prescription.issued {
                    throw VaultError.invalidInput(
                        "date of birth \(dob) is after prescription \(record.id.short)'s issue date \(record.prescription.issued)"
                    )
                }
            }
            try writePatient(summary, in: write)
            try refreshPrescriptions(of: [id.hex], in: write)
            return summary
        }
    }

    /// Merges patient `from` into `into`: each of `from`'s prescriptions gets a new version naming
    /// `into` (its grants sealed again to it), `from`'s record goes, and its id is kept in `into`'s
    /// as merged, so older versions that name it read as `into`. `into` keeps its name, and its
    /// birth date unless it had none.
    @discardableResult
    public func mergePatients(_ from: PatientID, into: PatientID) throws(VaultError) -> (PatientSummary, moved: Int) {
        try requirePatientRecords()
        guard from != into else { throw .invalidInput("a patient cannot be merged into itself") }
        return try perform { write in
            let directory = try patientDirectory(in: write)
            guard let source = directory.records[from.hex] else { throw VaultError.patientNotFound(from.short) }
            guard var target = directory.records[into.hex] else { throw VaultError.patientNotFound(into.short) }
            if let a = target.birthDate, let b = source.birthDate, a != b {
                throw VaultError.invalidInput(
                    "\(target.line) and \(source.line) have different birth dates; set one with 'rxvault patient rename --birth-date' first if they are one person"
                )
            }
            target.birthDate = target.birthDate ?? source.birthDate
            target.merged += [from.hex] + source.merged
            // The measurements are the person's: they move with the record, as the prescriptions do.
            target.measurements = Self.ordered(target.measurements + source.measurements)
            try Self.checkBirthDate(of: target)
            let moving = try prescriptions(of: [from.hex], in: write)
            try deletePatientRow(from, in: write)
            try writePatient(target, in: write)
            try refreshPrescriptions(of: [into.hex], in: write)
            for indexed in moving {
                guard let row = try store.latestVersion(of: indexed.id) else { continue }
                try touch(indexed.id.hex, in: write)
                let current = try open(row, in: write)
                var next = PrescriptionRecord(
                    id: current.id, version: current.version + 1, recorded: clock.timestamp(),
                    prescription: current.prescription)
                next.change = "patient \(from.short) merged into \(into.short)"
                try storeVersion(next, in: write)
                try resealGrants(of: indexed.id, previousVersion: current.version, in: write)
            }
            return (target, moving.count)
        }
    }

    /// A birth date after one of the patient's measurements is refused, as `measurement add`
    /// refuses a measurement before the birth date.
    static func checkBirthDate(of summary: PatientSummary) throws(VaultError) {
        guard let dob = summary.birthDate,
            let early = summary.measurements.first(where: { $0.date < dob })
        else { return }
        throw VaultError.invalidInput(
            "date of birth \(dob) is after measurement \(early.short)'s date \(early.date)")
    }
}
