import Foundation
import RxModel

/// A patient record as the owner's rxvault export carries it (docs/format.md, "Export JSON v1",
/// revision 1.2, `patients`). A prescription's patient says a name and a birth date; the record
/// also holds what no prescription says: the myopia-management measurements, also of a patient
/// whose prescriptions were all removed. Without these an export imported
/// into a new vault, the way an owner moves a vault, silently lost every measurement.
public struct ExportPatient: Sendable, Equatable {
    /// The record's id in the vault that wrote the file: the importing vault links it to the
    /// record it holds under that id, else to the one its prescriptions were linked to.
    public var id: String
    public var name: String
    public var birthDate: CalendarDate?
    /// A FHIR source's name parts, kept by the record (`PatientSummary.family`, `.given`).
    public var family: String?
    public var given: [String]?
    /// Oldest first, as the record keeps them.
    public var measurements: [EyeMeasurement]

    public init(_ summary: PatientSummary) {
        id = summary.id.hex
        name = summary.name
        birthDate = summary.birthDate
        family = summary.family
        given = summary.given
        measurements = summary.measurements
    }

    /// The patient as a prescription names it (for matching by name).
    var patient: Patient { Patient(name: name, birthDate: birthDate, family: family, given: given) }

    /// Keys sorted by bytes, as every rxvault export is written; each measurement in the form the
    /// sealed record keeps it (`StoredMeasurement`: lengths as two-decimal text, acuities as written),
    /// so what was measured comes back exactly.
    func write(to w: inout JSONWriter) {
        w.beginObject()
        if let birthDate {
            w.key("birthDate")
            w.string(birthDate.description)
        }
        w.nameParts(family: family, given: given)
        w.key("id")
        w.string(id)
        if !measurements.isEmpty {
            w.key("measurements")
            w.beginArray()
            for m in measurements {
                w.element()
                StoredMeasurement(m).write(to: &w)
            }
            w.endArray()
        }
        w.key("name")
        w.string(name)
        w.endObject()
    }

    /// What the patients binding covers (`patientsMac`): the array as compact JSON, recomputed from
    /// what was read, so whitespace and key order do not matter and a changed value does.
    static func boundContent(_ patients: [ExportPatient]) -> [UInt8] {
        var w = JSONWriter(style: .compact, capacity: 256)
        w.beginArray()
        for p in patients {
            w.element()
            p.write(to: &w)
        }
        w.endArray()
        return w.bytes
    }
}

extension [ExportPatient] {
    /// `2 patient record(s) with 3 measurement(s)`: what an export says it carried, on the owner's
    /// stderr and in the log entry alike.
    public var carriedText: String {
        "\(count) patient record(s) with \(reduce(0) { $0 + $1.measurements.count }) measurement(s)"
    }
}

/// A patient record read from an import file, with where it was found.
public struct ImportPatient: Sendable {
    /// `patients[2]`.
    public let position: String
    public let record: ExportPatient
}

extension ExportPatient {
    /// Reads one element of `patients`; every problem is added to `problems` by position (nil
    /// when there is one). Measurements are read as strictly as a stored record is opened, with
    /// messages for a person who edited the file rather than an integrity error.
    static func read(_ bytes: ArraySlice<UInt8>, position: String, problems: inout [String]) -> ExportPatient? {
        let c: JSONObjectReader
        let stored: [StoredMeasurement]
        var record: ExportPatient
        do {
            c = try JSONValueReader(try JSONTree(parsing: bytes)).object()
            // As written: the binding covers the name as the export wrote it (a stored name may hold
            // a run of spaces), and matching by name already ignores case and runs of white space.
            let name = try c.required("name").string()
            record = ExportPatient(
                id: try c.required("id").string(), name: name, birthDate: try c.optional("birthDate")?.date(),
                family: try c.optional("family")?.string(),
                given: try c.optional("given")?.array().map { v throws(DecodingError) in try v.string() },
                measurements: [])
            stored =
                try c.optional("measurements")?.array().map { v throws(DecodingError) in
                    try StoredMeasurement(v.object())
                } ?? []
        } catch let error as DecodingError {
            problems.append("\(position): \(ImportError.describe(error))")
            return nil
        } catch {
            problems.append("\(position): is not valid JSON")
            return nil
        }
        let before = problems.count
        if PatientID(hex: record.id) == nil { problems.append("\(position): id '\(record.id)' is not 32 hex digits") }
        if record.name.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty {
            problems.append("\(position): name is empty")
        } else if let problem = TextField.name.problem(with: record.name) {
            problems.append("\(position): name: \(problem)")
        }
        for (j, s) in stored.enumerated() {
            let at = "\(position).measurements[\(j)]"
            let (measurement, found) = s.imported()
            problems += found.map { "\(at): \($0)" }
            if let measurement { record.measurements.append(measurement) }
        }
        return problems.count == before ? record : nil
    }

    init(
        id: String, name: String, birthDate: CalendarDate?, family: String?, given: [String]?,
        measurements: [EyeMeasurement]
    ) {
        self.id = id
        self.name = name
        self.birthDate = birthDate
        self.family = family
        self.given = given
        self.measurements = measurements
    }
}

extension StoredMeasurement {
    /// The measurement a file's entry says, or what is wrong with it (each problem in words).
    func imported() -> (EyeMeasurement?, [String]) {
        var problems: [String] = []
        // Measurement ids are made as a patient's are: 128 random bits as 32 lower-case hex digits.
        if PatientID(hex: id) == nil { problems.append("id '\(id)' is not 32 hex digits") }
        func length(_ text: String?, _ key: String) -> Hundredths? {
            guard let text else { return nil }
            guard let value = Hundredths(parsing: text) else {
                problems.append("\(key) '\(text)' is not millimetres with at most two decimals")
                return nil
            }
            return value
        }
        let right = length(axialLengthOD, "axialLengthOD")
        let left = length(axialLengthOS, "axialLengthOS")
        var readings: [AcuitySlot: VisualAcuity] = [:]
        for slot in (acuity ?? [:]).keys.sorted() {
            guard let key = AcuitySlot(rawValue: slot) else {
                problems.append(
                    "acuity '\(slot)' is not a slot (\(AcuitySlot.allCases.map(\.rawValue).joined(separator: ", ")))")
                continue
            }
            do { readings[key] = try VisualAcuity(parsing: acuity![slot]!) } catch {
                problems.append("acuity \(slot): \(error)")
            }
        }
        guard problems.isEmpty else { return (nil, problems) }
        return (
            EyeMeasurement(
                id: id, date: date, axialLengthRight: right, axialLengthLeft: left, device: device,
                cycloplegic: cycloplegic ?? false, acuity: readings), []
        )
    }
}
