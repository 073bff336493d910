/// The US Contact Lens Rule (16 CFR part 315, under the Fairness to Contact Lens Consumers Act,
/// 15 USC 7601-7610) read as warnings: what a contact-lens prescription must contain (315.2),
/// how long it must be valid (315.6), and whether a soft lens can be ordered in the values
/// written. A seller may refuse a prescription that lacks what 315.2 lists, so rxvault says what
/// is missing when the prescription is recorded, while the paper is still at hand; it never
/// refuses one (the paper is what the prescriber wrote; rxvault keeps it as written).
///
/// docs/guide.md ("The Contact Lens Rule") lists each requirement and how rxvault checks it.
extension PrescriptionRules {
    /// 16 CFR 315.6(a): a contact-lens prescription expires no sooner than one year after it is
    /// issued, unless a medical reason for a shorter time is documented (315.6(b)).
    static let contactLensRuleYears = 1

    /// Soft lenses are made in 0.25 D steps to +-6.00 D and in 0.50 D steps beyond (the ranges
    /// of the main brands: Acuvue Oasys, Air Optix, Biofinity, Dailies, clariti, MyDay).
    static let softQuarterStepLimit = Hundredths(6)
    /// Soft toric cylinders (minus form): -0.75 to -2.25 for most brands, to -5.75 in extended
    /// ranges, in 0.50 steps (-0.75, -1.25, -1.75, ...); axes in 10-degree steps.
    static let softToricCylinders = stride(from: -75, through: -575, by: -50).map { Hundredths(raw: $0) }
    static let softToricAxisStep = 10

    static func contactLensRule(_ rx: Prescription) -> [String] {
        guard rx.kind == .contacts else { return [] }
        var warnings: [String] = []
        if let expires = rx.expires, expires > rx.issued,
            expires < rx.issued.addingYears(contactLensRuleYears), rx.shortExpiryReason == nil
        {
            warnings.append(
                "valid from \(rx.issued) to \(expires), less than a year: the US Contact Lens Rule (16 CFR 315.6) "
                    + "requires at least one year unless the prescriber records a medical reason "
                    + "(keep it with --short-expiry-reason TEXT)")
        }
        if let missing = missingContents(rx) {
            warnings.append(
                "missing what the US Contact Lens Rule (16 CFR 315.2) lists on a contact-lens prescription: "
                    + missing + " (a seller may ask for them)")
        }
        if rx.contactLensType == nil || rx.contactLensType == .soft {
            let soft =
                rx.contactLensType == .soft ? "soft lenses" : "soft lenses (if these are not soft, give --lens-type)"
            for (eye, lens) in rx.eyes { warnings += unorderable(lens, eye: eye, soft: soft) }
        }
        return warnings
    }

    /// What 16 CFR 315.2 lists that `rx` lacks, in the Rule's order, or nil when nothing is.
    static func missingContents(_ rx: Prescription) -> String? {
        var missing: [String] = []
        if rx.examDate == nil { missing.append("exam date (--exam-date)") }
        let practice: [(String, String, String?)] = [
            ("postal address", "address", rx.prescriber.address), ("phone", "phone", rx.prescriber.phone),
            ("fax", "fax", rx.prescriber.fax)
        ]
        let absent = practice.filter { $0.2 == nil }
        if !absent.isEmpty {
            let flags = absent.map { "--prescriber-\($0.1)" }.joined(separator: ", ")
            missing.append("prescriber \(absent.map(\.0).joined(separator: ", ")) (\(flags))")
        }
        func eyes(_ lacking: (LensSpecification) -> Bool) -> String? {
            let labels = rx.eyes.filter { lacking($0.1) }.map(\.0.label)
            return labels.isEmpty ? nil : labels.joined(separator: " and ")
        }
        if let labels = eyes({ $0.manufacturer == nil && $0.material == nil }) {
            missing.append("\(labels) material or manufacturer (--manufacturer, --material)")
        }
        if let labels = eyes({ $0.baseCurve == nil }) { missing.append("\(labels) base curve") }
        return missing.isEmpty ? nil : missing.joined(separator: "; ")
    }

    /// Values a soft lens is not made in, each with the nearest ones that are. Toric lenses are
    /// made in minus cylinder: a plus-cyl prescription is checked as the minus-cyl lens it is
    /// (sphere S + C, cylinder -C, axis +-90) and the messages name that form.
    static func unorderable(_ lens: LensSpecification, eye: Eye, soft: String) -> [String] {
        var warnings: [String] = []
        let plus = (lens.cylinder?.raw ?? 0) > 0 && lens.axis != nil
        let sphere = plus ? lens.sphere + lens.cylinder! : lens.sphere
        let asMinus = plus ? " (as minus-cyl)" : ""
        if abs(sphere.raw) > softQuarterStepLimit.raw, !sphere.isMultiple(of: 50) {
            let low = Hundredths(raw: sphere.raw.flooredDivision(by: 50) * 50)
            let high = Hundredths(raw: low.raw + 50)
            warnings.append(
                "\(eye.label) sphere \(sphere.signedPower)\(asMinus) is not made in \(soft): beyond +-6.00 they come in "
                    + "0.50 steps; nearest \(low.signedPower) or \(high.signedPower)")
        }
        guard let cylinder = lens.cylinder, !cylinder.isZero, let axis = lens.axis else { return warnings }
        let minus = plus ? cylinder.negated : cylinder
        let minusAxis = plus ? (axis + 90 - 1) % 180 + 1 : axis
        let form = plus ? " (written plus-cyl; as minus-cyl \(minus.signedPower) x\(minusAxis))" : ""
        if !softToricCylinders.contains(minus) {
            let nearest: String
            if minus > softToricCylinders.first! {
                nearest = "nearest \(softToricCylinders.first!.signedPower), or a spherical lens"
            } else if minus < softToricCylinders.last! {
                nearest = "beyond the extended ranges: a custom toric lens"
            } else {
                let high = softToricCylinders.last { $0 > minus }!
                let low = softToricCylinders.first { $0 < minus }!
                nearest = "nearest \(high.signedPower) or \(low.signedPower)"
            }
            warnings.append(
                "\(eye.label) cylinder \(cylinder.signedPower)\(form) is not made in \(soft): toric lenses come in "
                    + "-0.75 to -2.25 (to -5.75 in extended ranges) in 0.50 steps; \(nearest)")
        }
        if minusAxis % softToricAxisStep != 0 {
            let low = minusAxis / softToricAxisStep * softToricAxisStep
            let high = low + softToricAxisStep
            warnings.append(
                "\(eye.label) axis \(minusAxis)\(form.isEmpty ? "" : " (minus-cyl)") is not made in \(soft): toric axes come in "
                    + "10-degree steps; nearest \(low == 0 ? 180 : low) or \(high)")
        }
        return warnings
    }
}

extension Int {
    /// Division rounding toward minus infinity (-625 / 50 is -13, not -12).
    func flooredDivision(by d: Int) -> Int {
        let q = self / d
        return (self % d != 0 && (self < 0) != (d < 0)) ? q - 1 : q
    }
}
