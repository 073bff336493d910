/// Which visual acuity of a measurement: one eye or both, with the patient's correction (glasses
/// or contacts worn) or without it.
public enum AcuitySlot: String, Sendable, Hashable, CaseIterable {
    case od
    case os
    case ou
    case odUncorrected = "od-uncorrected"
    case osUncorrected = "os-uncorrected"
    case ouUncorrected = "ou-uncorrected"

    /// The eye measured, nil for both eyes together (binocular).
    public var eye: Eye? {
        switch self {
        case .od, .odUncorrected: .right
        case .os, .osUncorrected: .left
        case .ou, .ouUncorrected: nil
        }
    }
    public var corrected: Bool { self == .od || self == .os || self == .ou }
    /// `OD`, `OS`, `OU`.
    public var eyeLabel: String { eye?.label ?? "OU" }
    /// `VA OD cc`, `VA OU sc` (cum / sine correctione, as clinic cards write it).
    public var label: String { "VA \(eyeLabel) \(corrected ? "cc" : "sc")" }
    /// The command-line option that sets it: `--va-od`, `--va-od-uncorrected`.
    public var option: String { "--va-\(rawValue)" }
}

/// One visit's myopia-management measurements of a patient (issue 26): axial length per eye (the
/// International Myopia Institute's primary outcome for myopia control) and visual acuity, per
/// eye and both eyes, with and without correction. Stored inside the patient's sealed record
/// (DESIGN.md, "Measurements").
public struct EyeMeasurement: Sendable, Hashable {
    /// 128 random bits as 32 hex digits, like a prescription's id.
    public var id: String
    public var date: CalendarDate
    /// Axial length in millimetres, to 0.01 mm (what optical biometers print).
    public var axialLengthRight: Hundredths?
    public var axialLengthLeft: Hundredths?
    /// The biometer or chart used (e.g. "IOLMaster 700"): readings of different devices differ
    /// by a few hundredths of a millimetre, which matters beside a yearly growth of 0.1-0.3 mm.
    public var device: String?
    /// Measured under cycloplegia (accommodation paralysed by drops).
    public var cycloplegic: Bool
    public var acuity: [AcuitySlot: VisualAcuity]

    public init(
        id: String, date: CalendarDate, axialLengthRight: Hundredths? = nil, axialLengthLeft: Hundredths? = nil,
        device: String? = nil, cycloplegic: Bool = false, acuity: [AcuitySlot: VisualAcuity] = [:]
    ) {
        self.id = id
        self.date = date
        self.axialLengthRight = axialLengthRight
        self.axialLengthLeft = axialLengthLeft
        self.device = device
        self.cycloplegic = cycloplegic
        self.acuity = acuity
    }

    public func axialLength(_ eye: Eye) -> Hundredths? { eye == .right ? axialLengthRight : axialLengthLeft }

    /// The first 8 hex digits, as lists show ids.
    public var short: String { String(id.prefix(8)) }

    public var isEmpty: Bool { axialLengthRight == nil && axialLengthLeft == nil && acuity.isEmpty }
}

/// The rules a measurement must meet; each problem names the field, the value and the range.
public enum MeasurementRules {
    /// Plausible human axial lengths: about 17 mm in a newborn, 22-25 mm in adults, past 30 mm
    /// only in high myopia; below 15 or above 35 mm is a typing slip (a missing digit, cm for mm).
    public static let axialLengthRange = Hundredths(15)...Hundredths(35)

    /// Every problem of `m` (empty when it may be stored). `birthDate`: the patient's, if known.
    public static func problems(_ m: EyeMeasurement, today: CalendarDate, birthDate: CalendarDate?) -> [String] {
        var problems: [String] = []
        if m.isEmpty {
            problems.append("a measurement needs an axial length or a visual acuity (--axial-length-od, --va-od, ...)")
        }
        for eye in Eye.allCases {
            guard let value = m.axialLength(eye) else { continue }
            if !axialLengthRange.contains(value) {
                problems.append(
                    "\(eye.label) axial length \(value.twoDecimals) mm is outside \(axialLengthRange.lowerBound.twoDecimals)-\(axialLengthRange.upperBound.twoDecimals) mm"
                )
            }
        }
        if m.date > today { problems.append("measurement date \(m.date) is in the future") }
        if let birthDate, m.date < birthDate {
            problems.append("measurement date \(m.date) is before the patient's birth date \(birthDate)")
        }
        if let device = m.device {
            if device.isEmpty {
                problems.append("device: empty (leave --device out)")
            } else if let problem = TextField.name.problem(with: device) {
                problems.append("device: \(problem)")
            }
        }
        return problems
    }
}

extension Hundredths {
    /// `23.45`, `15.00`: always two decimals, as biometers print a length in mm.
    public var twoDecimals: String {
        let magnitude = abs(raw)
        let fraction = magnitude % 100
        return (raw < 0 ? "-" : "") + "\(magnitude / 100)." + (fraction < 10 ? "0" : "") + String(fraction)
    }
}
