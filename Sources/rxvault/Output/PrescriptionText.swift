import RxModel
import RxVault

/// The readable forms: the per-eye table of `show` and the rows of `list`.
enum PrescriptionText {
    /// `show`: the people and dates, then one row per eye (OD first).
    static func detail(_ view: PrescriptionView, shortID: String) -> String {
        let rx = view.prescription
        var pairs: [(String, String)] = [
            ("prescription", "\(shortID)  \(rx.kind.rawValue), version \(view.record.version)"),
            // What a client app sees: the FHIR id its requests and responses use.
            ("API id", "VisionPrescription/\(FHIR.prescriptionResourceID(view.record.id))"),
            ("patient", rx.patient.name + (rx.patient.birthDate.map { " (born \($0))" } ?? "")),
            (
                "prescriber",
                ([rx.prescriber.name]
                    + [rx.prescriber.licence.map { "licence \($0)" }, rx.prescriber.contact].compactMap { $0 }).joined(
                        separator: ", ")
            )
        ]
        pairs += practice(rx.prescriber)
        if let exam = rx.examDate { pairs.append(("exam date", exam.description)) }
        pairs += [
            ("issued", rx.issued.description),
            (
                "expires",
                view.status == .noExpiryWritten || (rx.expires == nil && view.assumedExpiry != nil)
                    ? view.statusText : (rx.expires?.description ?? "no expiry date") + "  (\(view.statusText))"
            )
        ]
        if let reason = rx.shortExpiryReason { pairs.append(("short expiry", reason)) }
        if view.isInConflict { pairs.append(("conflict", conflictText(shortID))) }
        if view.status == .superseded, let newer = view.supersededBy {
            pairs.append(("superseded by", newer.short))
        }
        if let pd = rx.pupillaryDistance {
            pairs.append(("PD", pd.far.plain + " mm" + (pd.near.map { " far, \($0.plain) mm near" } ?? "")))
        }
        if let type = rx.contactLensType { pairs.append(("lens type", type.label)) }
        pairs += lensMakers(view)
        if let note = rx.note { pairs.append(("note", note)) }
        if let form = view.cylinderForm { pairs.append(("cylinder", "shown in \(form.rawValue)-cyl form")) }
        // What an imported FHIR prescription carried beyond rxvault's fields, kept for export.
        // Long values (a narrative's XHTML) are cut to a line; `show --format json` has them whole.
        if let kept = rx.fhir {
            pairs += kept.lines.map { key, value in
                (Table.displayable(key), value.count > 100 ? String(value.prefix(99)) + "…" : value)
            }
        }
        let (headers, rows) = eyeGrid(view)
        return Table.keyValue(pairs) + "\n\n" + Table.render(headers: headers, rows: rows)
    }

    /// The practice's address, phone and fax, a line each (16 CFR 315.2 lists them).
    static func practice(_ prescriber: Prescriber) -> [(String, String)] {
        [("address", prescriber.address), ("phone", prescriber.phone), ("fax", prescriber.fax)]
            .compactMap { key, value in value.map { (key, $0) } }
    }

    /// Manufacturer, material and a private label's equivalent brand: one line for both eyes
    /// when they agree (the usual case), else a line per eye.
    static func lensMakers(_ view: PrescriptionView) -> [(String, String)] {
        let fields: [(String, KeyPath<LensSpecification, String?>)] = [
            ("manufacturer", \.manufacturer), ("material", \.material), ("equivalent brand", \.equivalentBrand)
        ]
        var pairs: [(String, String)] = []
        for (name, field) in fields {
            let values = view.eyes.map { ($0.0, $0.1[keyPath: field]) }
            guard values.contains(where: { $0.1 != nil }) else { continue }
            if values.count == 2, values[0].1 == values[1].1 {
                pairs.append((name, values[0].1!))
            } else {
                pairs += values.compactMap { eye, value in value.map { ("\(eye.label) \(name)", $0) } }
            }
        }
        return pairs
    }

    /// One row per eye (OD first) with every value the kind has; `show` and the printed copy.
    static func eyeGrid(_ view: PrescriptionView) -> (headers: [String], rows: [[String]]) {
        let rx = view.prescription
        let headers: [String]
        let rows: [[String]]
        switch rx.kind {
        case .glasses:
            headers = ["EYE", "SPH", "CYL", "AXIS", "ADD", "PRISM", "VERTEX", "PD", "NEAR PD", "SE"]
            rows = view.eyes.map { eye, lens in
                [
                    eye.label, sphere(lens), cylinder(lens), axis(lens), add(lens),
                    lens.prism?.notation ?? "-", lens.vertexDistance.map { $0.plain } ?? "-",
                    lens.farPD?.plain ?? "-", lens.nearPD?.plain ?? "-", equivalent(lens)
                ]
            }
        case .contacts:
            headers = ["EYE", "SPH", "CYL", "AXIS", "ADD", "BC", "DIA", "BRAND", "SE"]
            rows = view.eyes.map { eye, lens in
                [
                    eye.label, sphere(lens), cylinder(lens), axis(lens), add(lens),
                    lens.baseCurve?.plain ?? "-", lens.diameter?.plain ?? "-", lens.brand ?? "-", equivalent(lens)
                ]
            }
        }
        return (headers, rows)
    }

    static let listHeaders = ["ID", "KIND", "PATIENT", "ISSUED", "EXPIRES", "STATUS", "OD", "OS"]
    /// EXPIRES and STATUS take the row's colour. On a narrow terminal the eyes go beneath the
    /// row, one line each, then the dates, then the status (in its colour): names stay whole.
    static let listTinted: Set<Int> = [4, 5]
    static let listOverflow: [Table.Overflow] = [
        .init(columns: [6, 7], stacked: true), .init(columns: [3, 4]), .init(columns: [5])
    ]

    static func tone(_ status: PrescriptionStatus) -> Tone? {
        switch status {
        case .expired, .cancelled, .draft, .enteredInError: return .expired
        // Not known to stand: a second look, not an alarm.
        case .expiring, .noExpiryWritten: return .expiring
        // Superseded is not red: the newer one is the one to watch, not this.
        case .valid, .superseded: return nil
        }
    }

    /// The table of `list`, `query` and `patient show`: a row per prescription, coloured by its
    /// status, fitted to `style`'s width.
    static func listTable(_ views: [PrescriptionView], style: TableStyle) -> String {
        let short = PrescriptionID.shortForms(views.map(\.record.id))
        return Table.render(
            headers: listHeaders, rows: views.map { listRow($0, shortID: short[$0.record.id]!) },
            tones: views.map { tone($0.status) }, tinted: listTinted, overflow: listOverflow, style: style)
    }

    static func listRow(_ view: PrescriptionView, shortID: String) -> [String] {
        let rx = view.prescription
        return [
            shortID, rx.kind.rawValue, rx.patient.name, rx.issued.description, rx.expires?.description ?? "-",
            view.statusText + (view.isInConflict ? ", in conflict" : ""), view.notation(.right), view.notation(.left)
        ]
    }

    /// What `show` says of a prescription in conflict.
    static func conflictText(_ shortID: String) -> String {
        "in conflict: both copies of the vault changed it ('rxvault conflicts' shows both, 'rxvault resolve \(shortID)' ends it)"
    }

    static func sphere(_ lens: LensSpecification) -> String {
        lens.balance ? "BAL" : lens.sphere.isZero ? "plano" : lens.sphere.signedPower
    }
    /// `+2.00`, `+1.50 HIGH D`, `MED N`: the add as written, designation and design included.
    static func add(_ lens: LensSpecification) -> String {
        let parts = [lens.add?.signedPower, lens.addDesignation?.rawValue, lens.dominance?.rawValue].compactMap { $0 }
        return parts.isEmpty ? "-" : parts.joined(separator: " ")
    }
    /// A balance lens has no power, so no spherical equivalent.
    static func equivalent(_ lens: LensSpecification) -> String { lens.balance ? "-" : lens.sphericalEquivalentText }
    static func cylinder(_ lens: LensSpecification) -> String { lens.hasCylinder ? lens.cylinder!.signedPower : "-" }
    static func axis(_ lens: LensSpecification) -> String { lens.axis.map { String($0) } ?? "-" }
}

/// `list --format csv`: one row per prescription and eye (docs/format.md, "CSV").
enum PrescriptionCSV {
    static let headers = [
        "id", "version", "kind", "status", "patient", "birth_date", "prescriber", "prescriber_licence",
        "issued", "expires", "eye", "sphere", "cylinder", "axis", "add", "prism", "vertex_mm",
        "pd_mm", "near_pd_mm", "binocular_pd_mm", "binocular_near_pd_mm", "base_curve_mm",
        "diameter_mm", "brand", "spherical_equivalent", "note",
        "contact_lens_type", "add_designation", "dominance", "balance",
        "exam_date", "short_expiry_reason", "prescriber_address", "prescriber_phone", "prescriber_fax",
        "manufacturer", "material", "equivalent_brand",
        "tint", "wear_duration", "lens_note", "assumed_expiry"
    ]

    static func rows(_ view: PrescriptionView) -> [[String]] {
        let rx = view.prescription
        // A balance lens has no power: its sphere and spherical equivalent cells are empty.
        func sphere(_ lens: LensSpecification) -> String { lens.balance ? "" : lens.sphere.signedPower }
        func equivalent(_ lens: LensSpecification) -> String { lens.balance ? "" : lens.sphericalEquivalentText }
        return view.eyes.map { eye, lens -> [String] in
            let row: [String] = [
                view.record.id.hex, String(view.record.version), rx.kind.rawValue, view.status.rawValue,
                CSV.text(rx.patient.name), rx.patient.birthDate?.description ?? "", CSV.text(rx.prescriber.name),
                CSV.text(rx.prescriber.licence), rx.issued.description, rx.expires?.description ?? "",
                eye.rawValue, sphere(lens), lens.cylinder?.signedPower ?? "", lens.axis.map { String($0) } ?? "",
                lens.add?.signedPower ?? "", lens.prism?.notation ?? "", lens.vertexDistance?.plain ?? "",
                lens.farPD?.plain ?? "", lens.nearPD?.plain ?? "", rx.pupillaryDistance?.far.plain ?? "",
                rx.pupillaryDistance?.near?.plain ?? "", lens.baseCurve?.plain ?? "", lens.diameter?.plain ?? "",
                CSV.text(lens.brand), equivalent(lens), CSV.text(rx.note)
            ]
            // Last, so the columns before keep their places: never in `expires` (not written).
            return row + details(rx, lens) + kept(rx, eye) + [view.assumedExpiry?.description ?? ""]
        }
    }

    /// The last columns, after the Contact Lens Rule's: the eye's clinical elements kept from FHIR
    /// (`KeptFHIR.clinical`: tint, wear duration, the lensSpecification's notes), as `show` words them.
    static func kept(_ rx: Prescription, _ eye: Eye) -> [String] {
        let clinical = rx.fhir?.clinical(eye) ?? []
        return KeptFHIR.clinicalLensElements.map { element in
            CSV.text(clinical.first { $0.member == element.member }?.text)
        }
    }

    /// The columns added after `note`: contact-lens type, add designation, dominance, balance.
    static func details(_ rx: Prescription, _ lens: LensSpecification) -> [String] {
        let type: String = rx.contactLensType?.rawValue ?? ""
        let designation: String = lens.addDesignation?.rawValue ?? ""
        let dominance: String = lens.dominance?.word ?? ""
        return [type, designation, dominance, lens.balance ? "yes" : ""] + clinicalRecord(rx, lens)
    }

    /// The Contact Lens Rule's fields (16 CFR 315.2), after the lens details.
    static func clinicalRecord(_ rx: Prescription, _ lens: LensSpecification) -> [String] {
        [
            rx.examDate?.description ?? "", CSV.text(rx.shortExpiryReason), CSV.text(rx.prescriber.address),
            CSV.text(rx.prescriber.phone), CSV.text(rx.prescriber.fax), CSV.text(lens.manufacturer),
            CSV.text(lens.material), CSV.text(lens.equivalentBrand)
        ]
    }
}

extension PrescriptionView {
    /// The eyes present (OD first), in the requested cylinder form.
    var eyes: [(Eye, LensSpecification)] { Eye.allCases.compactMap { eye in lens(eye).map { (eye, $0) } } }
}
