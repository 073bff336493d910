import Foundation
import RxModel
import RxVault

/// How a prescription is shown: as written, or with its cylinder transposed on request.
struct PrescriptionView {
    let record: PrescriptionRecord
    let today: CalendarDate
    let cylinderForm: CylinderForm?
    /// The newer prescription that replaces this one, when the command worked it out
    /// (`VaultReader.supersession`): its status is then `superseded` instead of its dates'.
    var supersededBy: PrescriptionID? = nil
    /// The vault's `assumed-validity` setting (`VaultReader.assumedValidity`): a prescription with
    /// no expiry written is judged, and shown, by the date it gives.
    var assumedValidity: AssumedValidity? = nil
    /// Whether to mark it in conflict (issue 48), when the caller knows better than the record
    /// (`history` marks only the newest version); nil: as the record says.
    var inConflict: Bool? = nil

    /// Both copies of the vault changed it and it is not resolved yet (`rxvault conflicts`).
    var isInConflict: Bool { inConflict ?? record.isInConflict }

    var prescription: Prescription { record.prescription }
    var status: PrescriptionStatus {
        prescription.status(on: today, superseded: supersededBy != nil, assuming: assumedValidity)
    }
    /// The expiry assumed for it (kept at import, or from the setting); nil when one is written.
    var assumedExpiry: CalendarDate? { prescription.assumedExpiry(assuming: assumedValidity) }

    func lens(_ eye: Eye) -> LensSpecification? {
        guard let lens = prescription[eye] else { return nil }
        return cylinderForm.map { lens.transposed(to: $0) } ?? lens
    }

    /// `valid`, `expiring in 12 days`, `expires today`, `expired`, `no expiry written (issued
    /// 2014-06-15)`; a withdrawn prescription by its FHIR status (`cancelled`, `draft`,
    /// `entered-in-error`), whatever its dates. With an assumed expiry: `no expiry written
    /// (assumed to 2027-06-15)`, then `, expiring in 12 days` or `, expired` when so.
    var statusText: String {
        let assumed = assumedExpiry
        let text: String
        switch status {
        case .valid: text = "valid"
        case .noExpiryWritten: return "no expiry written (issued \(prescription.issued))"
        case .cancelled, .draft, .enteredInError, .superseded: return status.rawValue
        case .expired: text = status.rawValue
        case .expiring:
            let days = today.days(until: (prescription.expires ?? assumed)!)
            text = days == 0 ? "expires today" : days == 1 ? "expires tomorrow" : "expiring in \(days) days"
        }
        guard let assumed else { return text }
        return "no expiry written (assumed to \(assumed))" + (status == .valid ? "" : ", \(text)")
    }

    func notation(_ eye: Eye) -> String { lens(eye).map(LensNotation.format) ?? "-" }
}

// MARK: - JSON

/// The JSON output of one prescription (docs/format.md, "Prescription JSON v1"): the stored fields
/// plus `id`, `version`, `recorded`, `status`, and per eye the derived `notation` and
/// `sphericalEquivalent` (ignored when read back).
struct PrescriptionJSON {
    let view: PrescriptionView

    var value: JSONValue {
        let rx = view.prescription
        var pairs: [(String, JSONValue)] = [
            ("id", .string(view.record.id.hex)), ("version", .int(view.record.version)),
            ("recorded", .string(view.record.recorded)),
            ("status", .string(view.status.rawValue)), ("kind", .string(rx.kind.rawValue)),
            ("issued", .string(rx.issued.description))
        ]
        if view.status == .superseded, let newer = view.supersededBy {
            pairs.append(("supersededBy", .string(newer.hex)))
        }
        if view.isInConflict { pairs.append(("inConflict", .bool(true))) }
        var patient: [(String, JSONValue)] = [("name", .string(rx.patient.name))]
        if let dob = rx.patient.birthDate { patient.append(("birthDate", .string(dob.description))) }
        if let id = rx.patient.id { patient.append(("id", .string(id))) }
        if let family = rx.patient.family { patient.append(("family", .string(family))) }
        if let given = rx.patient.given { patient.append(("given", .array(given.map { .string($0) }))) }
        pairs.append(("patient", .object(patient)))
        var prescriber: [(String, JSONValue)] = [("name", .string(rx.prescriber.name))]
        if let licence = rx.prescriber.licence { prescriber.append(("licence", .string(licence))) }
        if let system = rx.prescriber.licenceSystem { prescriber.append(("licenceSystem", .string(system))) }
        if let contact = rx.prescriber.contact { prescriber.append(("contact", .string(contact))) }
        if let address = rx.prescriber.address { prescriber.append(("address", .string(address))) }
        if let phone = rx.prescriber.phone { prescriber.append(("phone", .string(phone))) }
        if let fax = rx.prescriber.fax { prescriber.append(("fax", .string(fax))) }
        pairs.append(("prescriber", .object(prescriber)))
        if let exam = rx.examDate { pairs.append(("examDate", .string(exam.description))) }
        if let expires = rx.expires { pairs.append(("expires", .string(expires.description))) }
        // Assumed, never passed off as written: `"expires": null, "assumedExpiry": ...`.
        if let assumed = view.assumedExpiry {
            pairs.append(("expires", .null))
            pairs.append(("assumedExpiry", .string(assumed.description)))
        }
        if let reason = rx.shortExpiryReason { pairs.append(("shortExpiryReason", .string(reason))) }
        if let note = rx.note { pairs.append(("note", .string(note))) }
        if let type = rx.contactLensType { pairs.append(("contactLensType", .string(type.rawValue))) }
        if let pd = rx.pupillaryDistance {
            var pdPairs: [(String, JSONValue)] = [("far", .number(pd.far.short))]
            if let near = pd.near { pdPairs.append(("near", .number(near.short))) }
            pairs.append(("pupillaryDistance", .object(pdPairs)))
        }
        for eye in Eye.allCases {
            guard let lens = view.lens(eye) else { continue }
            pairs.append((eye == .right ? "right" : "left", Self.lens(lens)))
        }
        if let kept = rx.fhir { pairs.append(("fhir", Self.kept(kept))) }
        return .object(pairs)
    }

    static func lens(_ lens: LensSpecification) -> JSONValue {
        var pairs: [(String, JSONValue)] = [
            ("sphere", .number(lens.sphere.short)), ("notation", .string(LensNotation.format(lens)))
        ]
        // A balance lens has no power, so no spherical equivalent.
        if lens.balance {
            pairs.append(("balance", .bool(true)))
        } else {
            pairs.append(("sphericalEquivalent", .number(String(lens.sphericalEquivalentText.drop { $0 == "+" }))))
        }
        if let c = lens.cylinder { pairs.append(("cylinder", .number(c.short))) }
        if let a = lens.axis { pairs.append(("axis", .int(a))) }
        if let add = lens.add { pairs.append(("add", .number(add.short))) }
        if let designation = lens.addDesignation { pairs.append(("addDesignation", .string(designation.rawValue))) }
        if let dominance = lens.dominance { pairs.append(("dominance", .string(dominance.word))) }
        if let prism = lens.prism {
            switch prism {
            case .rectangular(let vertical, let horizontal):
                var parts: [(String, JSONValue)] = []
                if let v = vertical {
                    parts.append(
                        ("vertical", .object([("amount", .number(v.amount.short)), ("base", .string(v.base.rawValue))]))
                    )
                }
                if let h = horizontal {
                    parts.append(
                        (
                            "horizontal",
                            .object([("amount", .number(h.amount.short)), ("base", .string(h.base.rawValue))])
                        ))
                }
                pairs.append(("prism", .object(parts)))
            case .polar(let amount, let angle):
                pairs.append(("prism", .object([("amount", .number(amount.short)), ("angle", .int(angle))])))
            }
        }
        if let v = lens.vertexDistance { pairs.append(("vertexDistance", .number(v.short))) }
        if lens.farPD != nil || lens.nearPD != nil {
            var pd: [(String, JSONValue)] = []
            if let far = lens.farPD { pd.append(("far", .number(far.short))) }
            if let near = lens.nearPD { pd.append(("near", .number(near.short))) }
            pairs.append(("pupillaryDistance", .object(pd)))
        }
        if let bc = lens.baseCurve { pairs.append(("baseCurve", .number(bc.short))) }
        if let dia = lens.diameter { pairs.append(("diameter", .number(dia.short))) }
        if let brand = lens.brand { pairs.append(("brand", .string(brand))) }
        if let manufacturer = lens.manufacturer { pairs.append(("manufacturer", .string(manufacturer))) }
        if let material = lens.material { pairs.append(("material", .string(material))) }
        if let equivalent = lens.equivalentBrand { pairs.append(("equivalentBrand", .string(equivalent))) }
        return .object(pairs)
    }

    func text(pretty: Bool = true) -> String { value.write(pretty: pretty) }

    /// The kept FHIR elements (docs/format.md, "Kept FHIR elements"), as stored.
    static func kept(_ kept: KeptFHIR) -> JSONValue {
        func object(_ o: [String: FHIRValue]) -> JSONValue { .object(o.map { ($0.key, value($0.value)) }) }
        func value(_ v: FHIRValue) -> JSONValue {
            switch v {
            case .null: return .number("null")
            case .bool(let b): return .bool(b)
            case .integer(let i): return .int(i)
            case .number(let d): return .number(String(d))
            case .string(let s): return .string(s)
            case .array(let a): return .array(a.map(value))
            case .object(let o): return object(o)
            }
        }
        var pairs: [(String, JSONValue)] = [("resource", object(kept.resource))]
        if let right = kept.right { pairs.append(("right", object(right))) }
        if let left = kept.left { pairs.append(("left", object(left))) }
        if let prescriber = kept.prescriber { pairs.append(("prescriber", object(prescriber))) }
        if let practitioner = kept.practitioner { pairs.append(("practitioner", object(practitioner))) }
        return .object(pairs)
    }
}

/// `list --format json`: `{"schema": "rxvault/prescriptions/v1", "prescriptions": [...]}`.
struct PrescriptionListJSON {
    static let schema = "rxvault/prescriptions/v1"
    let values: [JSONValue]

    init(prescriptions: [PrescriptionJSON]) { values = prescriptions.map(\.value) }

    /// `history`: each version with what changed since the one before (docs/format.md).
    init(history views: [PrescriptionView], changes: [[FieldChange]]) {
        values = zip(views, changes).map { view, changes in
            let value = PrescriptionJSON(view: view).value
            guard case .object(var pairs) = value else { return value }
            pairs.append(
                (
                    "changes",
                    .array(
                        changes.map { change in
                            var item: [(String, JSONValue)] = [("field", .string(change.field))]
                            if let before = change.before { item.append(("from", .string(before))) }
                            if let after = change.after { item.append(("to", .string(after))) }
                            return .object(item)
                        })
                ))
            if let reason = view.record.change { pairs.append(("reason", .string(reason))) }
            return .object(pairs)
        }
    }

    func text() -> String {
        // {"prescriptions": [...], "schema": ...} with the array built in parallel.
        var out: [UInt8] = Array("{\n  \"prescriptions\" : ".utf8)
        JSONValue.writeArray(values, pretty: true, level: 1, into: &out)
        out += Array(",\n  \"schema\" : \"\(Self.schema)\"\n}".utf8)
        return String(decoding: out, as: UTF8.self)
    }
}
