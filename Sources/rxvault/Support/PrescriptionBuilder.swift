import Foundation
import RxModel
import RxVault

/// Applies `PrescriptionOptions` to a prescription: a blank one for `add`, the current version
/// for `edit`. Reading values is done here (with messages naming eye, field and value); judging
/// them is left to `PrescriptionRules`, so every entry path is refused the same way.
///
/// Order: the parts named for removal (`--no-od-prism`); then the notation (`--od SPEC`),
/// which replaces only the parts it writes (`LensNotation.Reading.applied(to:)`); then the
/// per-field flags; then the flags for both eyes. A part both removed and given is refused.
struct PrescriptionBuilder {
    let options: PrescriptionOptions
    var removeEyes: Set<Eye> = []
    var removeFields: [LensRemovalFlag] = []
    var removeExpiry = false
    var removePD = false
    var removeLensType = false

    /// Reads every value once, on a probe, so a typo is refused before a passphrase is asked
    /// for (`edit`, `add --from`: their prescription is read only once the vault is open). The
    /// probe has both eyes and the kind of PD the flags give (binocular unless only per-eye PDs
    /// are given), so only unreadable or contradictory values can fail here.
    /// Returns the probe the values were applied to (its patient is the flags' name and birth date).
    @discardableResult
    func readValues() throws -> Prescription {
        let o = options
        let perEyePD = o.pd == nil && [o.pdRight, o.pdLeft, o.nearPdRight, o.nearPdLeft].contains { $0 != nil }
        var probe = Prescription(
            kind: .glasses, patient: Patient(name: ""), prescriber: Prescriber(name: ""),
            issued: CalendarDate(year: 2000, month: 1, day: 1)!,
            right: LensSpecification(sphere: .zero), left: LensSpecification(sphere: .zero),
            pupillaryDistance: perEyePD ? nil : PupillaryDistance(far: Hundredths(60)))
        try apply(to: &probe)
        return probe
    }

    func apply(to rx: inout Prescription) throws {
        let o = options
        if let name = o.patient { rx.patient.name = name }
        if let dob = o.dob { rx.patient.birthDate = dob.isEmpty ? nil : try date(dob, "date of birth") }
        if let name = o.prescriber { rx.prescriber.name = name }
        if let licence = o.prescriberLicence, licence != rx.prescriber.licence {
            rx.prescriber.licence = licence
            rx.prescriber.licenceSystem = nil // the system was the old number's
        }
        if let contact = o.prescriberContact { rx.prescriber.contact = contact }
        if let address = o.prescriberAddress { rx.prescriber.address = address }
        if let phone = o.prescriberPhone { rx.prescriber.phone = phone }
        if let fax = o.prescriberFax { rx.prescriber.fax = fax }
        if let exam = o.examDate { rx.examDate = exam.isEmpty ? nil : try date(exam, "exam date") }
        if let issued = o.issued { rx.issued = try date(issued, "issue date") }
        if let expires = o.expires {
            rx.expires = try expiry(expires, issued: rx.issued)
            // A written expiry replaces one assumed at import.
            rx.assumedExpiry = nil
        }
        if removeExpiry { rx.expires = nil }
        if let reason = o.shortExpiryReason { rx.shortExpiryReason = reason }
        if let note = o.note { rx.note = note }
        if let text = o.lensType {
            if removeLensType { throw CLIError(.usage, "--lens-type cannot be combined with --no-lens-type") }
            guard let type = ContactLensType(text: text.trimmingCharacters(in: .whitespaces)) else {
                throw CLIError(.invalidInput, "contact-lens type '\(text)': expected \(ContactLensType.acceptedText)")
            }
            rx.contactLensType = type
        }
        if removeLensType { rx.contactLensType = nil }

        for eye in Eye.allCases {
            if removeEyes.contains(eye) {
                guard o.notation(eye) == nil, o.fieldFlags(eye).isEmpty else {
                    throw CLIError(
                        .usage, "--no-\(eye == .right ? "od" : "os") cannot be combined with values for that eye")
                }
                rx[eye] = nil
                continue
            }
            rx[eye] = try lens(eye, current: rx[eye])
        }

        let bothEyes:
            [(String?, WritableKeyPath<LensSpecification, String?>, KeyPath<PrescriptionOptions.EyeFields, String?>)] =
                [
                    (o.brand, \.brand, \.brand), (o.manufacturer, \.manufacturer, \.manufacturer),
                    (o.material, \.material, \.material), (o.equivalentBrand, \.equivalentBrand, \.equivalentBrand)
                ]
        for (value, field, perEye) in bothEyes {
            guard let value else { continue }
            for eye in Eye.allCases where rx[eye] != nil && o.fieldFlags(eye)[keyPath: perEye] == nil {
                rx[eye]![keyPath: field] = value
            }
        }
        if let vertex = o.vertex {
            let value = try number(vertex, nil, "vertex distance")
            for eye in Eye.allCases where rx[eye] != nil && o.fieldFlags(eye).vertex == nil {
                rx[eye]!.vertexDistance = value
            }
        }
        try applyPupillaryDistance(&rx)
    }

    private func lens(_ eye: Eye, current: LensSpecification?) throws -> LensSpecification? {
        var reading: LensNotation.Reading?
        if let text = options.notation(eye) {
            do { reading = try LensNotation.read(text) } catch {
                throw CLIError(
                    .invalidInput, "\(eye.label) notation: \(error.problem)",
                    hint:
                        "write it as on the paper, e.g. \"-2.25 -0.75 x180 add +2.00\", \"plano\" or \"-3.00 bc 8.6 dia 14.2\""
                )
            }
        }
        var lens = current
        for removal in removeFields where removal.eye == eye {
            if let given = givenElsewhere(removal, reading: reading) {
                throw CLIError(
                    .usage, "\(removal.flag) cannot be combined with \(given)",
                    hint: "remove a part, or give its new value, not both")
            }
            if lens != nil { removal.field.remove(from: &lens!) }
        }
        if let reading {
            do { lens = try reading.applied(to: lens) } catch {
                let prefix = eye == .right ? "od" : "os"
                throw CLIError(
                    .invalidInput, "\(eye.label) notation: \(error.problem)",
                    hint: "--\(prefix)-sphere D changes the sphere alone; --no-\(prefix)-cyl removes the cylinder")
            }
        }
        let f = options.fieldFlags(eye)
        if f.isEmpty { return lens }
        if lens == nil {
            guard let sphere = f.sphere else {
                throw CLIError(
                    .invalidInput, "\(eye.label) sphere: required to add that eye",
                    hint: "give --\(eye == .right ? "od" : "os") SPEC or --\(eye == .right ? "od" : "os")-sphere D")
            }
            lens = LensSpecification(sphere: try power(sphere, eye, "sphere"))
        }
        if let v = f.sphere { lens!.sphere = try power(v, eye, "sphere") }
        if let v = f.cylinder { lens!.cylinder = try power(v, eye, "cylinder") }
        if let v = f.axis { lens!.axis = try axis(v, eye) }
        if let v = f.add { lens!.add = try number(v, eye, "add") }
        if let v = f.prism {
            do { lens!.prism = v.isEmpty ? nil : try Prism.parse(v) } catch {
                throw CLIError(
                    .invalidInput, "\(eye.label) prism: \(error.problem)",
                    hint: "e.g. \"1.5 BI\", \"1 BU 2 BO\" or \"2 @ 45\"")
            }
        }
        if let v = f.vertex { lens!.vertexDistance = try number(v, eye, "vertex distance") }
        if let v = f.baseCurve { lens!.baseCurve = try number(v, eye, "base curve") }
        if let v = f.diameter { lens!.diameter = try number(v, eye, "diameter") }
        if let v = f.brand { lens!.brand = v }
        if let v = f.manufacturer { lens!.manufacturer = v }
        if let v = f.material { lens!.material = v }
        if let v = f.equivalentBrand { lens!.equivalentBrand = v }
        return lens
    }

    /// Where the part `removal` names is also given a value, if anywhere.
    private func givenElsewhere(_ removal: LensRemovalFlag, reading: LensNotation.Reading?) -> String? {
        let eye = removal.eye
        let prefix = eye == .right ? "--od" : "--os"
        let f = options.fieldFlags(eye)
        let field = removal.field
        if let reading, reading.given.contains(field) || (field == .cylinder && reading.given.contains(.axis)) {
            return "a \(field.label) in \(prefix) \"\(options.notation(eye)!)\""
        }
        let flags: [(LensField, String, String?)] = [
            (.cylinder, "-cyl", f.cylinder), (.cylinder, "-axis", f.axis), (.add, "-add", f.add),
            (.prism, "-prism", f.prism),
            (.vertexDistance, "-vertex", f.vertex), (.baseCurve, "-bc", f.baseCurve), (.diameter, "-dia", f.diameter),
            (.brand, "-brand", f.brand)
        ]
        if let (_, suffix, _) = flags.first(where: { $0.0 == field && $0.2 != nil }) { return prefix + suffix }
        if field == .vertexDistance, options.vertex != nil { return "--vertex" }
        if field == .brand, options.brand != nil { return "--brand" }
        return nil
    }

    private func applyPupillaryDistance(_ rx: inout Prescription) throws {
        let o = options
        if removePD {
            rx.pupillaryDistance = nil
            for eye in Eye.allCases where rx[eye] != nil {
                rx[eye]!.farPD = nil
                rx[eye]!.nearPD = nil
            }
        }
        // Switching between one binocular PD and one PD per eye drops the other kind, near PDs
        // included: it happens only when the person also says --no-pd.
        let monocularGiven = [o.pdRight, o.pdLeft, o.nearPdRight, o.nearPdLeft].contains { $0 != nil }
        if o.pd != nil, rx.eyes.contains(where: { $0.1.farPD != nil || $0.1.nearPD != nil }) {
            throw CLIError(
                .usage, "--pd would drop the PDs stored per eye",
                hint: "add --no-pd to replace them with one binocular PD")
        }
        if monocularGiven, o.pd == nil, rx.pupillaryDistance != nil {
            throw CLIError(
                .usage, "a PD per eye would drop the binocular PD stored",
                hint: "add --no-pd to replace it with one PD per eye (--pd-od, --pd-os, --near-pd-od, --near-pd-os)")
        }
        if let pd = o.pd {
            guard let far = try number(pd, nil, "PD") else {
                throw CLIError(.usage, "--pd needs a value", hint: "use --no-pd to remove pupillary distances")
            }
            rx.pupillaryDistance = PupillaryDistance(far: far, near: rx.pupillaryDistance?.near)
            // A binocular PD replaces monocular ones.
            for eye in Eye.allCases where rx[eye] != nil {
                rx[eye]!.farPD = nil
                rx[eye]!.nearPD = nil
            }
        }
        if let near = o.nearPd {
            guard rx.pupillaryDistance != nil else {
                throw CLIError(
                    .usage, "--near-pd needs a far PD (--pd)",
                    hint: "for one value per eye use --near-pd-od and --near-pd-os")
            }
            rx.pupillaryDistance!.near = try number(near, nil, "near PD")
        }
        let monocular: [(Eye, String?, String?)] = [(.right, o.pdRight, o.nearPdRight), (.left, o.pdLeft, o.nearPdLeft)]
        for (eye, far, near) in monocular where far != nil || near != nil {
            guard rx[eye] != nil else {
                throw CLIError(.usage, "\(eye.label) PD given but there is no \(eye.label) lens")
            }
            if let far { rx[eye]!.farPD = try number(far, eye, "PD") }
            if let near { rx[eye]!.nearPD = try number(near, eye, "near PD") }
            if o.pd == nil { rx.pupillaryDistance = nil }
        }
    }

    // MARK: - Reading values

    private func label(_ eye: Eye?, _ field: String) -> String {
        [eye?.label, field].compactMap { $0 }.joined(separator: " ")
    }

    private func number(_ text: String, _ eye: Eye?, _ field: String) throws -> Hundredths? {
        if text.isEmpty { return nil }
        if let comma = LensNotation.decimalComma(in: text) {
            throw CLIError(.invalidInput, "\(label(eye, field)) \(comma.problem)")
        }
        guard let value = Hundredths(parsing: text.trimmingCharacters(in: .whitespaces)) else {
            throw CLIError(.invalidInput, "\(label(eye, field)) '\(text)': not a number with at most two decimals")
        }
        return value
    }

    private func power(_ text: String, _ eye: Eye, _ field: String) throws -> Hundredths {
        let lowered = text.lowercased().trimmingCharacters(in: .whitespaces)
        if field == "sphere", ["plano", "pl"].contains(lowered) { return .zero }
        guard let value = try number(text, eye, field) else {
            throw CLIError(.invalidInput, "\(label(eye, field)): empty value")
        }
        return value
    }

    private func axis(_ text: String, _ eye: Eye) throws -> Int? {
        if text.isEmpty { return nil }
        var digits = Substring(text.lowercased().trimmingCharacters(in: .whitespaces))
        if digits.hasPrefix("x") { digits = digits.dropFirst() }
        guard !digits.isEmpty, digits.count <= 3, digits.allSatisfy(\.isNumber), let value = Int(digits) else {
            throw CLIError(.invalidInput, "\(eye.label) axis '\(text)': not whole degrees (accepted 1 to 180)")
        }
        return value
    }

    /// `--expires`: a date, or a duration from the issue date (`2y`, `18m`, `26w`, `90d`; years
    /// and months by the calendar, as `import --assume-expiry` counts them), which is then
    /// written as that date: the prescriber's validity, said the way it is said on the paper.
    private func expiry(_ text: String, issued: CalendarDate) throws -> CalendarDate {
        if CalendarDate(iso: text) == nil, let duration = FHIR.ExpiryAssumption(text) {
            guard let day = duration.after(issued) else {
                throw CLIError(
                    .invalidInput, "expiry date '\(text)': \(duration) after \(issued) is past \(CalendarDate.latest)")
            }
            return day
        }
        guard let day = CalendarDate(iso: text) else {
            throw CLIError(
                .invalidInput, "expiry date '\(text)': \(CalendarDate.problem(iso: text)!)",
                hint: "give a date YYYY-MM-DD, or how long from the issue date: 2y, 18m, 26w, 90d")
        }
        return day
    }

    private func date(_ text: String, _ field: String) throws -> CalendarDate {
        guard let date = CalendarDate(iso: text) else {
            throw CLIError(.invalidInput, "\(field) '\(text)': \(CalendarDate.problem(iso: text)!)")
        }
        return date
    }
}
