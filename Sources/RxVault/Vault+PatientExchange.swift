import Foundation
import RxCrypto
import RxModel

/// Patient records in the owner's rxvault export and import (docs/format.md, "Export JSON v1",
/// revision 1.2): what no prescription carries, the myopia-management measurements first, so
/// that `export --format json` then `import` into another vault (how an owner moves a vault, or
/// merges a family member's) keeps them, as a backup and restore does.
extension Vault {
    /// The patient records an owner's JSON export carries: those with measurements, of the whole
    /// vault, or (ids or filters) of the selected prescriptions' patients. A record with neither
    /// measurements nor prescriptions (a name and a birth date) is not carried: finding those
    /// takes every index entry decoded, a tenth of a large export, for a record `patient remove`
    /// exists to clean up. Read from the verified patient rows (the directory then answers the
    /// export's own patient lookups); empty before format 4.
    public func exportPatients(ids: [PrescriptionID]?, filter: PrescriptionFilter) throws(VaultError)
        -> [ExportPatient]
    {
        guard header.formatVersion >= 4 else { return [] }
        var everything = filter
        (everything.sort, everything.reverse) = (PrescriptionFilter().sort, PrescriptionFilter().reverse)
        do {
            // Filtered before sorting: the directory of a large vault is one record per prescription.
            let directory: PatientDirectory = try reading { read in try patientDirectory(in: read) }
            let measured = PatientDirectory.ordered(directory.records.values.filter { !$0.measurements.isEmpty })
            guard !measured.isEmpty else { return [] }
            if ids == nil && everything == PrescriptionFilter() { return measured.map(ExportPatient.init) }
            let selected = Set(try ids ?? matchingIDs(filter))
            let snapshot = try indexSnapshot()
            var named: Set<String> = []
            for row in snapshot.rows where selected.contains(SearchIndex.id(row)) {
                if let id = try snapshot.record(row).prescription.patient.id { named.insert(id) }
            }
            let recordIDs = Set(named.compactMap { directory.summary($0)?.id.hex })
            return measured.filter { recordIDs.contains($0.id.hex) }.map(ExportPatient.init)
        } catch let error as VaultError {
            throw error
        } catch {
            throw VaultError.wrap(error)
        }
    }

    /// The owner's MAC over an export's patient records (`vault.patientsMac`; `Stream`'s
    /// `bindPatients`): without it, a file could change a stored measurement through `--update`.
    public func exportPatientsBinding(_ content: [UInt8]) throws -> [UInt8] {
        try MAC.authenticate(bindingMessage(content, purpose: .exportPatients), key: exportMACKey)
    }

    /// One measurement of an import file's patient records and what happens to it.
    public struct MeasurementOutcome: Sendable {
        public let position: String
        public let id: String
        /// The patient's name as the vault shows it.
        public let patient: String
        public let date: CalendarDate
        public let action: ImportOutcome.Action
        /// What the file changes in the stored measurement (`axial length OD 23.80 → 23.90`).
        public let changes: [String]
        public let refusal: ImportOutcome.Refusal?

        /// `patients[0].measurements[1]: 3f9a2c1e of Mia Chen exists in this vault with other content (...)`.
        var problem: String {
            let text =
                "\(position): measurement \(id.prefix(8)) of \(patient) exists in this vault with other content (\(changes.joined(separator: "; ")))"
            if case .notBound(let origin)? = refusal { return text + "; this file cannot update it: \(origin.reason)" }
            return text
        }
    }

    /// The file's patient records, inside the import's write, after its prescriptions (whose
    /// linking decided which record a patient of another vault is here): each is linked (the
    /// record with its id, else the one its prescriptions were linked to, else by name as a
    /// prescription's patient is, else made; a file record without measurements is passed over)
    /// and its measurements added; one already here with
    /// other content is an update, allowed as a prescription's is (`ImportPolicy`, with the
    /// patients' own binding). Problems are added to `problems` by position.
    func importPatients(
        _ patients: [ImportPatient], origin: ImportOrigin, policy: ImportPolicy, today: CalendarDate,
        nearMisses: (Patient, String) -> String?, problems: inout [String], report: inout ImportReport,
        in write: OwnerWrite
    ) throws {
        guard !patients.isEmpty else { return }
        guard header.formatVersion >= 4 else {
            problems.append(
                "patients: this vault is in format \(header.formatVersion), where patients are free text; run 'rxvault upgrade' first"
            )
            return
        }
        var owners: [String: PatientID] = [:]
        for summary in try patientDirectory(in: write).records.values {
            for m in summary.measurements { owners[m.id] = summary.id }
        }
        var seen: Set<String> = []
        var measured: Set<String> = []
        // A record without measurements carries nothing its prescriptions do not (no export
        // writes one; an edited file can): it makes no record here.
        for file in patients where !file.record.measurements.isEmpty {
            let record = file.record
            guard
                var summary = try patientRecord(
                    for: file, owners: owners, policy: policy, nearMisses: nearMisses, problems: &problems, in: write)
            else { continue }
            // By id, so a patient with very many measurements is not quadratic.
            var stored: [String: Int] = [:]
            for (index, m) in summary.measurements.enumerated() { stored[m.id] = index }
            for (j, m) in record.measurements.enumerated() {
                let position = "\(file.position).measurements[\(j)]"
                guard seen.insert(m.id).inserted else {
                    problems.append("\(position): the same measurement appears twice")
                    continue
                }
                let rules = MeasurementRules.problems(m, today: today, birthDate: summary.birthDate)
                if let owner = owners[m.id], owner != summary.id {
                    problems.append(
                        "\(position): measurement \(m.short) belongs to another patient here (\(owner.short)), not to \(summary.name)"
                    )
                    continue
                }
                guard rules.isEmpty else {
                    problems += rules.map { "\(position): \($0)" }
                    continue
                }
                let outcome: MeasurementOutcome
                if let index = stored[m.id] {
                    let stored = summary.measurements[index]
                    let changes = Self.measurementChanges(from: stored, to: m)
                    var action: ImportOutcome.Action = changes.isEmpty ? .unchanged : .update
                    var refusal: ImportOutcome.Refusal?
                    if action == .update && !policy.update {
                        (action, refusal) = (.refused, .needsUpdate)
                    } else if action == .update && origin != .thisVault && !policy.unverified {
                        (action, refusal) = (.refused, .notBound(origin))
                    }
                    if action == .update { summary.measurements[index] = m }
                    outcome = MeasurementOutcome(
                        position: position, id: m.id, patient: summary.name, date: m.date, action: action,
                        changes: changes, refusal: refusal)
                } else {
                    stored[m.id] = summary.measurements.count
                    summary.measurements.append(m)
                    owners[m.id] = summary.id
                    outcome = MeasurementOutcome(
                        position: position, id: m.id, patient: summary.name, date: m.date, action: .new, changes: [],
                        refusal: nil)
                }
                report.measurements.append(outcome)
            }
            summary.measurements = Self.ordered(summary.measurements)
            let current = try patientDirectory(in: write).records[summary.id.hex]
            guard summary != current else { continue }
            do { try Self.checkBirthDate(of: summary) } catch {
                problems.append("\(file.position): \(error)")
                continue
            }
            try writePatient(summary, in: write)
            // A birth date set on a record its prescriptions' index entries and grants carry (as
            // an import's prescription sets one: `linkPatient`).
            if let current, current.birthDate != summary.birthDate {
                try refreshPrescriptions(of: [summary.id.hex], in: write)
            } else if let current, current.measurements != summary.measurements {
                measured.insert(summary.id.hex)
            }
        }
        // Grants that carry the measurements carry them as they now are (once for all the
        // records changed; a record made by this import has no grant yet).
        try resealMeasurementGrants(ofPatients: measured, in: write)
    }

    /// The record a file's patient is here, or nil with a problem said: the record with its id;
    /// the one this import's prescriptions naming that id were linked to; the one that already
    /// holds its measurements (the file imported before, the record renamed since); the one of
    /// its name; else a new one (noted, as an import's new patients are). A record matched by
    /// name gets the birth date it lacks.
    private func patientRecord(
        for file: ImportPatient, owners: [String: PatientID], policy: ImportPolicy,
        nearMisses: (Patient, String) -> String?, problems: inout [String], in write: OwnerWrite
    ) throws -> PatientSummary? {
        let record = file.record
        let directory = try patientDirectory(in: write)
        if let held = directory.summary(record.id) { return held }
        if let linked = write.linkedPatients[record.id], let held = directory.summary(linked.hex) {
            return held
        }
        let holders = Set(record.measurements.compactMap { owners[$0.id] })
        if holders.count == 1, let holder = holders.first, let held = directory.records[holder.hex] { return held }
        let matches = directory.matching(record.patient)
        if matches.count > 1 {
            problems.append(
                "\(file.position): patient '\(record.name)' is \(matches.count) patients here ("
                    + matches.map(\.line).joined(separator: "; ") + "): merge them first ('rxvault patient merge')")
            return nil
        }
        if var match = matches.first {
            if match.birthDate == nil, let birthDate = record.birthDate {
                match.birthDate = birthDate
                write.patientNotes.append(
                    "patient \(match.id.short) \(match.name): birth date set to \(birthDate)")
            }
            return match
        }
        if !policy.newPatients, let problem = nearMisses(record.patient, file.position) {
            problems.append(problem)
            return nil
        }
        let made = PatientSummary(
            id: PatientID.random(), name: record.name.trimmingCharacters(in: .whitespacesAndNewlines),
            birthDate: record.birthDate, merged: [], family: record.family,
            given: record.given)
        write.patientNotes.append("new patient \(made.line)")
        return made
    }

    /// What differs between a stored measurement and a file's, field by field.
    static func measurementChanges(from old: EyeMeasurement, to new: EyeMeasurement) -> [String] {
        var changes: [String] = []
        func change(_ field: String, _ before: String?, _ after: String?) {
            if before != after { changes.append("\(field) \(before ?? "none") → \(after ?? "none")") }
        }
        change("date", old.date.description, new.date.description)
        change("axial length OD", old.axialLengthRight?.twoDecimals, new.axialLengthRight?.twoDecimals)
        change("axial length OS", old.axialLengthLeft?.twoDecimals, new.axialLengthLeft?.twoDecimals)
        for slot in AcuitySlot.allCases {
            change(slot.label, old.acuity[slot]?.written, new.acuity[slot]?.written)
        }
        change("device", old.device, new.device)
        change("cycloplegic", old.cycloplegic ? "yes" : "no", new.cycloplegic ? "yes" : "no")
        return changes
    }
}
