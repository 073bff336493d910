import RxModel

/// Measurements as FHIR R4 Observations (issue 26): one Observation per axial length and per
/// visual acuity, in a collection Bundle with the Patient each belongs to (the same Patient id as
/// the prescription export's, `patientResourceID`).
///
/// Codes (LOINC, http://loinc.org):
/// - axial length: 64742-0 "Right eye Axial length" and 66067-0 "Left eye Axial length", in mm
///   (the PhenX contact biometry panel 62679-6, https://loinc.org/62679-6/);
/// - visual acuity without correction: 98505-1 "Visual acuity far uncorrected Right eye" and
///   98506-9 "Visual acuity.binocular far uncorrected Eye". For the left eye without correction
///   and for the three acuities with correction no LOINC term matching "with the patient's own
///   correction" was confirmed (the "by Phoropter" terms mean a refraction at the phoropter), so
///   those Observations carry `code.text` alone rather than a guessed code (docs/format.md).
/// An acuity's value is the text as written (`valueString`, e.g. "6/6"), with its logMAR value as
/// a component (UCUM `{logMAR}`), so a reader gets both the record and a number to chart.
extension FHIR {
    static let loinc = "http://loinc.org"

    /// LOINC (code, display) of each axial length.
    public static func axialLengthCode(_ eye: Eye) -> (code: String, display: String) {
        eye == .right ? ("64742-0", "Right eye Axial length") : ("66067-0", "Left eye Axial length")
    }

    /// LOINC (code, display) of an acuity, nil where none was confirmed (see above).
    public static func acuityCode(_ slot: AcuitySlot) -> (code: String, display: String)? {
        switch slot {
        case .odUncorrected: ("98505-1", "Visual acuity far uncorrected Right eye")
        case .ouUncorrected: ("98506-9", "Visual acuity.binocular far uncorrected Eye")
        default: nil
        }
    }

    /// `Visual acuity OD with correction`: the text every acuity Observation's code carries.
    public static func acuityText(_ slot: AcuitySlot) -> String {
        "Visual acuity \(slot.eyeLabel) \(slot.corrected ? "with" : "without") correction"
    }

    /// The Bundle (pretty JSON) of these measurements' Observations and their Patients.
    public static func measurementBundle(_ records: [MeasurementRecord]) -> [UInt8] {
        var entries: [JSONValue] = []
        var patients = Set<String>()
        func entry(_ id: String, _ resource: JSONValue) -> JSONValue {
            .fields(["fullUrl": .string("urn:uuid:" + id), "resource": resource])
        }
        for record in records {
            let patient = record.patient.patient
            let patientID = patientResourceID(patient)
            if patients.insert(patientID).inserted { entries.append(entry(patientID, patientResource(patient))) }
            for (id, resource) in observations(record.measurement, patientReference: "urn:uuid:" + patientID) {
                entries.append(entry(id, resource))
            }
        }
        return JSONWriter.bytes(
            .fields(["entry": .array(entries), "resourceType": .string("Bundle"), "type": .string("collection")]),
            style: .pretty)
    }

    /// The Observations of one measurement, each with its stable id (`uuid` of the measurement's
    /// id and the value's name, so an export repeated gives the same ids).
    public static func observations(_ m: EyeMeasurement, patientReference: String) -> [(String, JSONValue)] {
        var out: [(String, JSONValue)] = []
        for eye in Eye.allCases {
            guard let value = m.axialLength(eye) else { continue }
            let (code, display) = axialLengthCode(eye)
            let id = uuid("measurement|\(m.id)|axial-length-\(eye.rawValue)")
            out.append(
                (
                    id,
                    observation(
                        id: id, m, patientReference: patientReference,
                        code: codeable(code: code, display: display, text: "Axial length \(eye.label)"),
                        value: ("valueQuantity", mm(value)), components: nil)
                ))
        }
        for slot in AcuitySlot.allCases {
            guard let acuity = m.acuity[slot] else { continue }
            let id = uuid("measurement|\(m.id)|acuity-\(slot.rawValue)")
            let coded = acuityCode(slot)
            let logMAR: JSONValue = .fields([
                "code": .fields(["text": .string("logMAR")]),
                "valueQuantity": .fields([
                    "code": .string("{logMAR}"), "system": .string("http://unitsofmeasure.org"),
                    "unit": .string("logMAR"), "value": .number(acuity.logMARText)
                ])
            ])
            out.append(
                (
                    id,
                    observation(
                        id: id, m, patientReference: patientReference,
                        code: codeable(code: coded?.code, display: coded?.display, text: acuityText(slot)),
                        value: ("valueString", .string(acuity.written)), components: .array([logMAR]))
                ))
        }
        return out
    }

    static func codeable(code: String?, display: String?, text: String) -> JSONValue {
        let coding: JSONValue? = code.map {
            .array([.fields(["code": .string($0), "display": display.map { .string($0) }, "system": .string(loinc)])])
        }
        return .fields(["coding": coding, "text": .string(text)])
    }

    static func observation(
        id: String, _ m: EyeMeasurement, patientReference: String, code: JSONValue, value: (String, JSONValue),
        components: JSONValue?
    ) -> JSONValue {
        let category: JSONValue = .array([
            .fields([
                "coding": .array([
                    .fields([
                        "code": .string("exam"),
                        "system": .string("http://terminology.hl7.org/CodeSystem/observation-category")
                    ])
                ])
            ])
        ])
        let note: JSONValue? = m.cycloplegic ? .array([.fields(["text": .string("measured under cycloplegia")])]) : nil
        let identifier: JSONValue = .array([
            .fields(["system": .string("urn:rxvault:measurement"), "value": .string(m.id)])
        ])
        var pairs: [(String, JSONValue)] = [
            ("resourceType", .string("Observation")), ("id", .string(id)), ("identifier", identifier),
            ("status", .string("final")), ("category", category), ("code", code),
            ("subject", reference(patientReference)), ("effectiveDateTime", .string(m.date.description))
        ]
        if let device = m.device { pairs.append(("device", .fields(["display": .string(device)]))) }
        pairs.append(value)
        if let note { pairs.append(("note", note)) }
        if let components { pairs.append(("component", components)) }
        return .object(pairs)
    }
}
