import RxModel
import RxTestSupport
import Testing

// Shared helpers for the RxModel tests (SeededGenerator itself is RxTestSupport's). Literals
// passed here are written by the tests themselves; a typo is a test bug, so the helpers record an
// issue and fall back to a value that makes the test fail instead of crashing the whole run.

/// A Hundredths from its decimal text (`"-2.25"`).
func h(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) -> Hundredths {
    guard let value = Hundredths(parsing: text) else {
        Issue.record("test literal '\(text)' is not a Hundredths", sourceLocation: sourceLocation)
        return Hundredths(raw: Int.min / 2)
    }
    return value
}

/// A CalendarDate from `YYYY-MM-DD`.
func date(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) -> CalendarDate {
    guard let value = CalendarDate(iso: text) else {
        Issue.record("test literal '\(text)' is not a date", sourceLocation: sourceLocation)
        return CalendarDate(dayNumber: 0)
    }
    return value
}

/// The fixed "today" every rules test runs against.
let today = CalendarDate(year: 2026, month: 3, day: 14)!

enum Fixture {
    static let patient = Patient(name: "Ada Lovelace", birthDate: CalendarDate(year: 1990, month: 5, day: 1))
    /// Everything the Contact Lens Rule (16 CFR 315.2) lists of a prescriber.
    static let prescriber = Prescriber(
        name: "Dr. Iris Hale", licence: "OPT-1234", contact: "+1 555 0100", address: "1 Main St, Springfield",
        phone: "+1 555 0100", fax: "+1 555 0101")
    static let issued = CalendarDate(year: 2026, month: 3, day: 1)!

    /// OD -2.25 -0.75 x180, OS -2.00 DS.
    static let glassesRight = LensSpecification(
        sphere: Hundredths(raw: -225), cylinder: Hundredths(raw: -75), axis: 180)
    static let glassesLeft = LensSpecification(sphere: Hundredths(raw: -200))

    /// OD -3.00 bc 8.6 dia 14.2, OS -2.75 -1.25 x170 bc 8.7 dia 14.5.
    static let contactsRight = LensSpecification(
        sphere: Hundredths(raw: -300), baseCurve: Hundredths(raw: 860),
        diameter: Hundredths(raw: 1420), brand: "Acuvue Oasys"
    ).manufactured(by: "Johnson & Johnson")
    static let contactsLeft = LensSpecification(
        sphere: Hundredths(raw: -275), cylinder: Hundredths(raw: -125), axis: 170,
        baseCurve: Hundredths(raw: 870), diameter: Hundredths(raw: 1450),
        brand: "Acuvue Oasys for Astigmatism"
    ).manufactured(by: "Johnson & Johnson")

    /// A valid glasses prescription (issued 2026-03-01, expires 2028-03-01).
    static func glasses(
        right: LensSpecification? = glassesRight, left: LensSpecification? = glassesLeft,
        issued: CalendarDate = issued, expires: CalendarDate? = CalendarDate(year: 2028, month: 3, day: 1),
        pd: PupillaryDistance? = nil
    ) -> Prescription {
        Prescription(
            kind: .glasses, patient: patient, prescriber: prescriber, issued: issued, expires: expires,
            right: right, left: left, pupillaryDistance: pd)
    }

    /// A valid contact-lens prescription (issued 2026-03-01, expires 2027-03-01).
    static func contacts(
        right: LensSpecification? = contactsRight, left: LensSpecification? = contactsLeft,
        issued: CalendarDate = issued, expires: CalendarDate? = CalendarDate(year: 2027, month: 3, day: 1)
    ) -> Prescription {
        var rx = Prescription(
            kind: .contacts, patient: patient, prescriber: prescriber, issued: issued, expires: expires,
            right: right, left: left)
        rx.examDate = issued
        return rx
    }
}

/// The violations `PrescriptionRules.check` reports for `rx` (empty when it is accepted).
func violations(of rx: Prescription, on day: CalendarDate = today) -> [RuleViolation] {
    do {
        _ = try PrescriptionRules.check(rx, today: day)
        return []
    } catch {
        return error.violations
    }
}

/// Checks `rx`, recording an issue (with every violation) when it is refused.
func accepted(
    _ rx: Prescription, on day: CalendarDate = today,
    sourceLocation: SourceLocation = #_sourceLocation
) -> CheckedPrescription? {
    do {
        return try PrescriptionRules.check(rx, today: day)
    } catch {
        Issue.record("expected the prescription to be accepted, got: \(error)", sourceLocation: sourceLocation)
        return nil
    }
}

extension SeededGenerator {
    /// A multiple of `step` hundredths in `range` (given in hundredths).
    mutating func hundredths(_ range: ClosedRange<Int>, step: Int = 1) -> Hundredths {
        let low = (range.lowerBound + step - 1).floorDiv(step)
        let high = range.upperBound.floorDiv(step)
        return Hundredths(raw: Int.random(in: low...high, using: &self) * step)
    }

    /// A lens that passes `PrescriptionRules` for `kind` (glasses: prism, vertex and PD; contacts: bc, dia, brand).
    mutating func validLens(for kind: PrescriptionKind) -> LensSpecification {
        var lens = LensSpecification(sphere: hundredths(-3000...3000, step: 25))
        if chance(70) {
            var cylinder = Hundredths.zero
            while cylinder.isZero { cylinder = hundredths(-1000...1000, step: 25) }
            lens.cylinder = cylinder
            lens.axis = Int.random(in: 1...180, using: &self)
        }
        if chance(40) { lens.add = hundredths(25...400, step: 25) }
        switch kind {
        case .glasses:
            if chance(40) {
                switch Int.random(in: 0..<4, using: &self) {
                case 0:
                    lens.prism = .rectangular(
                        vertical: .init(amount: hundredths(25...2000, step: 25), base: chance(50) ? .up : .down),
                        horizontal: nil)
                case 1:
                    lens.prism = .rectangular(
                        vertical: nil,
                        horizontal: .init(amount: hundredths(25...2000, step: 25), base: chance(50) ? .in : .out))
                case 2:
                    lens.prism = .rectangular(
                        vertical: .init(amount: hundredths(25...2000, step: 25), base: chance(50) ? .up : .down),
                        horizontal: .init(amount: hundredths(25...2000, step: 25), base: chance(50) ? .in : .out))
                default:
                    lens.prism = .polar(
                        amount: hundredths(25...2000, step: 25), angle: Int.random(in: 0...359, using: &self))
                }
            }
            if chance(30) { lens.vertexDistance = hundredths(500...2500, step: 10) }
            if chance(30) {
                let far = hundredths(2050...4000, step: 50)
                lens.farPD = far
                if chance(50) {
                    lens.nearPD = Hundredths(
                        raw: far.raw - 50 * Int.random(in: 1...((far.raw - 2000) / 50), using: &self))
                }
            }
        case .contacts:
            if chance(80) { lens.baseCurve = hundredths(700...1000) }
            if chance(80) { lens.diameter = hundredths(800...1650, step: 10) }
            lens.brand =
                ["Acuvue Oasys", "Biofinity", "Dailies Total1", "Air Optix"][Int.random(in: 0..<4, using: &self)]
        }
        return lens
    }
}

extension Int {
    func floorDiv(_ d: Int) -> Int { (self >= 0 ? self : self - d + 1) / d }
}

extension LensSpecification {
    /// Only the fields the notation carries (sphere, cylinder, axis, add, prism, bc, dia).
    var notationFields: LensSpecification {
        LensSpecification(
            sphere: sphere, cylinder: cylinder, axis: axis, add: add, prism: prism,
            baseCurve: baseCurve, diameter: diameter)
    }
}

extension LensSpecification {
    func manufactured(by manufacturer: String) -> LensSpecification {
        var lens = self
        lens.manufacturer = manufacturer
        return lens
    }
}
