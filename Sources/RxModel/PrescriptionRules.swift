/// One reason a prescription is refused. The message names the eye (when there is one), the field,
/// the value given and what is accepted, so the person can fix it without reading documentation.
public struct RuleViolation: Hashable, Sendable, CustomStringConvertible {
    public let eye: Eye?
    public let field: String
    public let value: String?
    public let accepted: String

    public init(eye: Eye?, field: String, value: String?, accepted: String) {
        self.eye = eye
        self.field = field
        self.value = value
        self.accepted = accepted
    }

    public var description: String {
        let subject = [eye?.label, field].compactMap { $0 }.joined(separator: " ")
        if let value { return "\(subject) \(value): \(accepted)" }
        return "\(subject): \(accepted)"
    }
}

/// A prescription that breaks one or more rules. Lists every violation, not just the first.
public struct PrescriptionInvalid: Error, Sendable, CustomStringConvertible {
    public let violations: [RuleViolation]
    public var description: String { violations.map(\.description).joined(separator: "; ") }
}

/// The outcome of a successful check: the prescription as it will be stored, and advisories
/// (things allowed but worth a second look, such as a differing add or an axis written as 0).
public struct CheckedPrescription: Sendable {
    public let prescription: Prescription
    public let advisories: [String]
}

/// rxvault's clinical rules (DESIGN.md, "Prescription rules").
///
/// Clinical ranges rather than HealthKit's narrow ones: a vault must accept every real
/// prescription and refuse only what cannot be one (a typo, a wrong sign of magnitude, a field
/// of the wrong kind).
public enum PrescriptionRules {
    public static let sphereRange = Hundredths(-30)...Hundredths(30)
    public static let cylinderRange = Hundredths(-10)...Hundredths(10)
    public static let axisRange = 1...180
    public static let addRange = Hundredths(raw: 25)...Hundredths(4)
    public static let prismRange = Hundredths(raw: 25)...Hundredths(20)
    /// 360 is the same direction as 0; both are accepted as written.
    public static let prismAngleRange = 0...360
    /// Infants' PDs are in the 30s: the range is every person's, the adult one only warns.
    public static let binocularPDRange = Hundredths(30)...Hundredths(85)
    public static let monocularPDRange = Hundredths(15)...Hundredths(45)
    public static let vertexRange = Hundredths(5)...Hundredths(25)
    /// Every lens type's: keratoconus RGP fits go below 6.5 mm, flat soft lenses above 9.5.
    public static let baseCurveRange = Hundredths(5)...Hundredths(raw: 1050)
    /// From small corneal RGPs to large sclerals.
    public static let diameterRange = Hundredths(7)...Hundredths(25)
    /// Longest accepted free text (names, brand, note), in characters; `TextField` also bounds
    /// the bytes and refuses invisible and control characters.
    public static let maxTextLength = TextField.name.maxCharacters
    public static let maxNoteLength = TextField.note.maxCharacters
    /// Dioptric powers come in quarter-dioptre steps.
    static let quarterStep = 25

    /// Checks `prescription` as of `today`, returns it normalised (axis 0 read as 180, a zero
    /// cylinder dropped, text trimmed) with advisories, or throws every violation found.
    public static func check(_ prescription: Prescription, today: CalendarDate) throws(PrescriptionInvalid)
        -> CheckedPrescription
    {
        var rx = prescription
        var problems: [RuleViolation] = []
        var advisories: [String] = []

        normaliseText(&rx)
        checkPeople(rx, today: today, into: &problems)
        checkDates(rx, today: today, into: &problems, advisories: &advisories)

        if rx.right == nil && rx.left == nil {
            problems.append(
                RuleViolation(
                    eye: nil, field: "lens", value: nil,
                    accepted: "give at least one eye (--od and/or --os)"))
        }
        for eye in Eye.allCases {
            guard var lens = rx[eye] else { continue }
            checkRefraction(&lens, eye: eye, into: &problems, advisories: &advisories)
            switch rx.kind {
            case .glasses: checkGlassesFields(lens, eye: eye, into: &problems)
            case .contacts: checkContactsFields(&lens, eye: eye, into: &problems)
            }
            rx[eye] = lens
        }
        checkPupillaryDistance(rx, into: &problems)
        if let r = rx.right?.add, let l = rx.left?.add, r != l {
            advisories.append("OD add \(r.signedPower) and OS add \(l.signedPower) differ: check the prescription")
        }
        checkLensKinds(rx, into: &problems)
        advisories += eyeSlips(rx)
        advisories += unusualValues(rx)
        advisories += contactLensRule(rx)

        guard problems.isEmpty else { throw PrescriptionInvalid(violations: problems) }
        return CheckedPrescription(prescription: rx, advisories: advisories)
    }

    // MARK: - Parts

    private static func normaliseText(_ rx: inout Prescription) {
        func clean(_ s: String?) -> String? {
            guard let t = s?.trimmingWhitespace(), !t.isEmpty else { return nil }
            return t
        }
        rx.patient.name = rx.patient.name.trimmingWhitespace()
        rx.prescriber.name = rx.prescriber.name.trimmingWhitespace()
        rx.prescriber.licence = clean(rx.prescriber.licence)
        rx.prescriber.contact = clean(rx.prescriber.contact)
        rx.prescriber.address = clean(rx.prescriber.address)
        rx.prescriber.phone = clean(rx.prescriber.phone)
        rx.prescriber.fax = clean(rx.prescriber.fax)
        rx.note = clean(rx.note)
        rx.shortExpiryReason = clean(rx.shortExpiryReason)
        for eye in Eye.allCases where rx[eye] != nil {
            rx[eye]!.brand = clean(rx[eye]!.brand)
            rx[eye]!.manufacturer = clean(rx[eye]!.manufacturer)
            rx[eye]!.material = clean(rx[eye]!.material)
            rx[eye]!.equivalentBrand = clean(rx[eye]!.equivalentBrand)
        }
    }

    private static func checkPeople(_ rx: Prescription, today: CalendarDate, into problems: inout [RuleViolation]) {
        func text(_ value: String?, field: String, required: Bool, rule: TextField = .name) {
            guard let value, !value.isEmpty else {
                if required { problems.append(RuleViolation(eye: nil, field: field, value: nil, accepted: "required")) }
                return
            }
            if let problem = rule.problem(with: value) {
                problems.append(RuleViolation(eye: nil, field: field, value: nil, accepted: problem))
            }
        }
        text(rx.patient.name, field: "patient name", required: true)
        text(rx.prescriber.name, field: "prescriber name", required: true)
        text(rx.prescriber.licence, field: "prescriber licence", required: false)
        text(rx.prescriber.contact, field: "prescriber contact", required: false)
        text(rx.prescriber.address, field: "prescriber address", required: false)
        text(rx.prescriber.phone, field: "prescriber phone", required: false)
        text(rx.prescriber.fax, field: "prescriber fax", required: false)
        text(rx.note, field: "note", required: false, rule: .note)
        text(rx.shortExpiryReason, field: "short-expiry reason", required: false, rule: .note)
        if let dob = rx.patient.birthDate {
            if dob > today {
                problems.append(
                    RuleViolation(
                        eye: nil, field: "date of birth", value: dob.description, accepted: "must not be in the future")
                )
            } else if dob > rx.issued {
                problems.append(
                    RuleViolation(
                        eye: nil, field: "date of birth", value: dob.description,
                        accepted: "must be on or before the issue date"))
            }
        }
    }

    private static func checkDates(
        _ rx: Prescription, today: CalendarDate,
        into problems: inout [RuleViolation], advisories: inout [String]
    ) {
        if rx.issued > today {
            problems.append(
                RuleViolation(
                    eye: nil, field: "issue date", value: rx.issued.description,
                    accepted: "must not be in the future (today is \(today))"))
        }
        if let exam = rx.examDate {
            if exam > today {
                problems.append(
                    RuleViolation(
                        eye: nil, field: "exam date", value: exam.description,
                        accepted: "must not be in the future (today is \(today))"))
            } else if exam > rx.issued {
                problems.append(
                    RuleViolation(
                        eye: nil, field: "exam date", value: exam.description,
                        accepted: "must be on or before the issue date \(rx.issued) (a prescription follows its exam)"))
            }
        }
        if rx.shortExpiryReason != nil && rx.kind != .contacts {
            problems.append(
                RuleViolation(
                    eye: nil, field: "short-expiry reason", value: nil,
                    accepted: "applies to contact lenses only (the Contact Lens Rule's one-year minimum)"))
        }
        if let assumed = rx.assumedExpiry {
            if rx.expires != nil {
                problems.append(
                    RuleViolation(
                        eye: nil, field: "assumed expiry date", value: assumed.description,
                        accepted: "only for a prescription with no expiry date written"))
            } else if assumed <= rx.issued {
                problems.append(
                    RuleViolation(
                        eye: nil, field: "assumed expiry date", value: assumed.description,
                        accepted: "must be after the issue date \(rx.issued)"))
            }
        }
        if let expires = rx.expires {
            if expires <= rx.issued {
                problems.append(
                    RuleViolation(
                        eye: nil, field: "expiry date", value: expires.description,
                        accepted: "must be after the issue date \(rx.issued)"))
            }
        } else if rx.assumedExpiry != nil {
            // Assumed at import (`import --assume-expiry contacts=1y`): kept as assumed, shown so.
        } else if rx.kind == .contacts {
            problems.append(
                RuleViolation(
                    eye: nil, field: "expiry date", value: nil,
                    accepted: "required for contact lenses (--expires YYYY-MM-DD)"))
        } else {
            advisories.append("no expiry date: most glasses prescriptions are valid for 1-2 years")
        }
    }

    private static func checkRefraction(
        _ lens: inout LensSpecification, eye: Eye,
        into problems: inout [RuleViolation], advisories: inout [String]
    ) {
        func power(_ value: Hundredths?, _ field: String, _ range: ClosedRange<Hundredths>) {
            guard let value else { return }
            if !range.contains(value) || !value.isMultiple(of: quarterStep) {
                problems.append(
                    RuleViolation(
                        eye: eye, field: field, value: value.signedPower,
                        accepted:
                            "accepted \(range.lowerBound.signedPower) to \(range.upperBound.signedPower) in 0.25 steps")
                )
            }
        }
        power(lens.sphere, "sphere", sphereRange)
        if let cylinder = lens.cylinder, cylinder.isZero {
            // "-2.00 0.00 x180": no astigmatism, whatever axis was written with it.
            if let axis = lens.axis {
                advisories.append(
                    "\(eye.label) cylinder 0.00 with axis \(axis): no astigmatism, stored as spherical (axis dropped)")
                lens.axis = nil
            }
            lens.cylinder = nil
        }
        power(lens.cylinder, "cylinder", cylinderRange)
        if let add = lens.add, add.raw <= 0 {
            problems.append(
                RuleViolation(
                    eye: eye, field: "add", value: add.signedPower,
                    accepted: "accepted +0.25 to +4.00 in 0.25 steps (an add is always positive)"))
        } else {
            power(lens.add, "add", addRange)
        }

        switch (lens.hasCylinder, lens.axis) {
        case (true, nil):
            problems.append(
                RuleViolation(
                    eye: eye, field: "axis", value: nil,
                    accepted: "required with a cylinder (whole degrees 1 to 180, e.g. x180)"))
        case (false, let axis?):
            problems.append(
                RuleViolation(
                    eye: eye, field: "axis", value: String(axis),
                    accepted: "only allowed with a non-zero cylinder"))
        case (true, 0?):
            lens.axis = 180
            advisories.append("\(eye.label) axis 0 read as 180")
        case (true, let axis?) where !axisRange.contains(axis):
            problems.append(
                RuleViolation(
                    eye: eye, field: "axis", value: String(axis),
                    accepted: "accepted whole degrees 1 to 180"))
        default:
            break
        }
    }

    private static func checkGlassesFields(_ lens: LensSpecification, eye: Eye, into problems: inout [RuleViolation]) {
        func length(_ value: Hundredths?, _ field: String, _ range: ClosedRange<Hundredths>, unit: String = "mm") {
            guard let value, !range.contains(value) else { return }
            problems.append(
                RuleViolation(
                    eye: eye, field: field, value: value.short,
                    accepted: "accepted \(range.lowerBound.short) to \(range.upperBound.short) \(unit)"))
        }
        if let prism = lens.prism {
            // Every written amount, rectangular parts and a polar amount alike, comes in 0.25
            // steps; the parts derived from a polar prism are never stored, so never checked.
            for amount in prism.amounts where !prismRange.contains(amount) || !amount.isMultiple(of: quarterStep) {
                problems.append(
                    RuleViolation(
                        eye: eye, field: "prism", value: amount.short,
                        accepted: "accepted 0.25 to 20 prism dioptres in 0.25 steps"))
            }
            if case .polar(_, let angle) = prism, !prismAngleRange.contains(angle) {
                problems.append(
                    RuleViolation(
                        eye: eye, field: "prism base angle", value: String(angle),
                        accepted: "accepted whole degrees 0 to 360"))
            }
            if case .rectangular(nil, nil) = prism {
                problems.append(
                    RuleViolation(eye: eye, field: "prism", value: nil, accepted: "give an amount and a base"))
            }
        }
        length(lens.vertexDistance, "vertex distance", vertexRange)
        length(lens.farPD, "PD", monocularPDRange)
        length(lens.nearPD, "near PD", monocularPDRange)
        if let far = lens.farPD, let near = lens.nearPD, near >= far {
            problems.append(
                RuleViolation(
                    eye: eye, field: "near PD", value: near.short,
                    accepted: "must be less than the far PD \(far.short) mm"))
        }
        let wrongKind: [(String, Bool)] = [
            ("base curve", lens.baseCurve != nil), ("diameter", lens.diameter != nil), ("brand", lens.brand != nil),
            ("manufacturer", lens.manufacturer != nil), ("material", lens.material != nil),
            ("equivalent brand", lens.equivalentBrand != nil)
        ]
        for (field, present) in wrongKind where present {
            problems.append(
                RuleViolation(eye: eye, field: field, value: nil, accepted: "applies to contact lenses only"))
        }
    }

    private static func checkContactsFields(
        _ lens: inout LensSpecification, eye: Eye, into problems: inout [RuleViolation]
    ) {
        func length(_ value: Hundredths?, _ field: String, _ range: ClosedRange<Hundredths>) {
            guard let value, !range.contains(value) else { return }
            problems.append(
                RuleViolation(
                    eye: eye, field: field, value: value.short,
                    accepted: "accepted \(range.lowerBound.plain) to \(range.upperBound.plain) mm"))
        }
        length(lens.baseCurve, "base curve", baseCurveRange)
        length(lens.diameter, "diameter", diameterRange)
        if lens.brand == nil {
            problems.append(
                RuleViolation(
                    eye: eye, field: "brand", value: nil,
                    accepted: "required for contact lenses (--brand, or --\(eye == .right ? "od" : "os")-brand)"))
        } else if let brand = lens.brand, let problem = TextField.name.problem(with: brand) {
            problems.append(RuleViolation(eye: eye, field: "brand", value: nil, accepted: problem))
        }
        for (field, value) in [
            ("manufacturer", lens.manufacturer), ("material", lens.material), ("equivalent brand", lens.equivalentBrand)
        ] {
            if let value, let problem = TextField.name.problem(with: value) {
                problems.append(RuleViolation(eye: eye, field: field, value: nil, accepted: problem))
            }
        }
        let wrongKind: [(String, Bool)] = [
            ("prism", lens.prism != nil), ("vertex distance", lens.vertexDistance != nil),
            ("PD", lens.farPD != nil || lens.nearPD != nil)
        ]
        for (field, present) in wrongKind where present {
            problems.append(RuleViolation(eye: eye, field: field, value: nil, accepted: "applies to glasses only"))
        }
    }

    private static func checkPupillaryDistance(_ rx: Prescription, into problems: inout [RuleViolation]) {
        guard let pd = rx.pupillaryDistance else { return }
        if rx.kind == .contacts {
            problems.append(RuleViolation(eye: nil, field: "PD", value: nil, accepted: "applies to glasses only"))
            return
        }
        let accepted =
            "accepted \(binocularPDRange.lowerBound.short) to \(binocularPDRange.upperBound.short) mm for a binocular PD"
        if !binocularPDRange.contains(pd.far) {
            problems.append(RuleViolation(eye: nil, field: "PD", value: pd.far.short, accepted: accepted))
        }
        if let near = pd.near {
            if !binocularPDRange.contains(near) {
                problems.append(RuleViolation(eye: nil, field: "near PD", value: near.short, accepted: accepted))
            } else if near >= pd.far {
                problems.append(
                    RuleViolation(
                        eye: nil, field: "near PD", value: near.short,
                        accepted: "must be less than the far PD \(pd.far.short) mm"))
            }
        }
        if rx.eyes.contains(where: { $0.1.farPD != nil || $0.1.nearPD != nil }) {
            problems.append(
                RuleViolation(
                    eye: nil, field: "PD", value: nil,
                    accepted: "give either one binocular PD (--pd) or one per eye (--pd-od/--pd-os), not both"))
        }
    }
}

extension String {
    func trimmingWhitespace() -> String {
        let scalars = unicodeScalars
        guard let start = scalars.firstIndex(where: { !$0.properties.isWhitespace }),
            let end = scalars.lastIndex(where: { !$0.properties.isWhitespace })
        else { return "" }
        return String(scalars[start...end])
    }
}
