import Foundation
import RxModel
import RxVault

/// How a prescription is shown: as written, or with its cylinder transposed on request.
struct PrescriptionView {
    let record: PrescriptionRecord
    let today: CalendarDate
    let cylinderForm: CylinderForm?

    var prescription: Prescription { record.prescription }
    var status: PrescriptionStatus { prescription.status(on: today) }

    func lens(_ eye: Eye) -> LensSpecification? {
        guard let lens = prescription[eye] else { return nil }
        return cylinderForm.map { lens.transposed(to: $0) } ?? lens
    }

    /// `valid`, `expiring in 12 days`, `expires today`, `expired`.
    var statusText: String {
        switch status {
        case .valid: return "valid"
        case .expired: return "expired"
        case .expiring:
            let days = today.days(until: prescription.expires!)
            return days == 0 ? "expires today" : days == 1 ? "expires tomorrow" : "expiring in \(days) days"
        }
    }

    func notation(_ eye: Eye) -> String { lens(eye).map(LensNotation.format) ?? "-" }
}

// MARK: - JSON

/// The JSON output of one prescription (docs/format.md, "Prescription JSON v1"): the stored fields
/// plus `id`, `version`, `recorded`, `status`, and per eye the derived `notation` and
/// `sphericalEquivalent` (ignored when read back).
struct PrescriptionJSON: Encodable {
    let view: PrescriptionView

    enum Keys: String, CodingKey { case id, version, recorded, status }
    enum EyeKeys: String, CodingKey { case right, left }

    func encode(to encoder: Encoder) throws {
        var rx = view.prescription
        rx.right = view.lens(.right)
        rx.left = view.lens(.left)
        try rx.encode(to: encoder)
        var c = encoder.container(keyedBy: Keys.self)
        try c.encode(view.record.id.hex, forKey: .id)
        try c.encode(view.record.version, forKey: .version)
        try c.encode(view.record.recorded, forKey: .recorded)
        try c.encode(view.status.rawValue, forKey: .status)
        var eyes = encoder.container(keyedBy: EyeKeys.self)
        for eye in Eye.allCases {
            guard let lens = rx[eye] else { continue }
            try eyes.encode(LensJSON(lens: lens), forKey: eye == .right ? .right : .left)
        }
    }

    struct LensJSON: Encodable {
        let lens: LensSpecification
        enum Keys: String, CodingKey { case notation, sphericalEquivalent }
        func encode(to encoder: Encoder) throws {
            try lens.encode(to: encoder)
            var c = encoder.container(keyedBy: Keys.self)
            try c.encode(LensNotation.format(lens), forKey: .notation)
            try c.encode(lens.sphericalEquivalent, forKey: .sphericalEquivalent)
        }
    }

    static func encoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
        return encoder
    }
}

/// `list --format json`: `{"schema": "rxvault/prescriptions/v1", "prescriptions": [...]}`.
struct PrescriptionListJSON: Encodable {
    static let schema = "rxvault/prescriptions/v1"
    let prescriptions: [PrescriptionJSON]
    enum Keys: String, CodingKey { case schema, prescriptions }
    func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: Keys.self)
        try c.encode(Self.schema, forKey: .schema)
        try c.encode(prescriptions, forKey: .prescriptions)
    }
}
