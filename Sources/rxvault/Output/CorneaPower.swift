import Foundation
import RxModel

/// `show --at-cornea`: the power a glasses prescription has at the cornea, per principal meridian
/// (Fc = F / (1 - d·F), d the vertex distance in metres; `VertexConversion`). It matters above
/// about 4 D, so an eye is worked out only when a meridian is stronger than that; below, the
/// power at the cornea is within a quarter dioptre of the glasses'.
///
/// A calculation, not a contact-lens prescription: a contact lens is fitted (base curve, diameter,
/// brand, tear lens, over-refraction), and every output says so.
struct CorneaPower {
    static let threshold = 4.0
    /// The vertex distance used when the prescription gives none (domain.md: usually 12-14 mm).
    static let assumedVertex = Hundredths(12)
    static let disclaimer = "a calculation from the glasses prescription, not a contact-lens prescription or fitting"

    struct Meridian {
        /// The meridian in degrees (1-180), nil for a spherical lens (every meridian).
        let degrees: Int?
        let glasses: Hundredths
        let cornea: Double
    }

    struct EyeResult {
        let eye: Eye
        let vertex: Hundredths
        let vertexAssumed: Bool
        /// Whether any meridian is stronger than 4 D (otherwise `meridians` is empty).
        let matters: Bool
        let meridians: [Meridian]
    }

    let eyes: [EyeResult]

    /// The eyes of a glasses prescription, balance lenses left out.
    init(_ view: PrescriptionView) {
        eyes = view.eyes.filter { !$0.1.balance }.map { eye, lens in
            let vertex = lens.vertexDistance ?? Self.assumedVertex
            // Principal meridians: the sphere acts along the axis, sphere + cylinder across it.
            var powers: [(Int?, Hundredths)] = [(nil, lens.sphere)]
            if let cylinder = lens.cylinder, !cylinder.isZero, let axis = lens.axis {
                powers = [(axis, lens.sphere), (axis > 90 ? axis - 90 : axis + 90, lens.sphere + cylinder)]
            }
            let matters = powers.contains { abs($0.1.doubleValue) > Self.threshold }
            let meridians =
                !matters
                ? []
                : powers.map { degrees, power in
                    Meridian(
                        degrees: degrees, glasses: power,
                        cornea: VertexConversion.powerAtCornea(power.doubleValue, vertexDistance: vertex.doubleValue))
                }
            return EyeResult(
                eye: eye, vertex: vertex, vertexAssumed: lens.vertexDistance == nil, matters: matters,
                meridians: meridians)
        }
    }

    /// `-5.58`, `+6.52`: two decimals, signed (not rounded to a lens step: it is not a lens).
    static func text(_ power: Double) -> String {
        let rounded = (power * 100).rounded() / 100
        return (rounded > 0 ? "+" : rounded < 0 ? "" : "") + String(format: "%.2f", rounded == 0 ? 0 : rounded)
    }

    /// The table of the eyes where it matters, then a line for each eye where it does not.
    var text: String {
        var lines = ["power at the cornea: \(Self.disclaimer)"]
        let rows: [[String]] = eyes.filter(\.matters).flatMap { result in
            result.meridians.map { m in
                [
                    result.eye.label, m.degrees.map { String(format: "%03d", $0) } ?? "all", m.glasses.signedPower,
                    Self.text(m.cornea),
                    result.vertex.plain + (result.vertexAssumed ? " (assumed)" : "")
                ]
            }
        }
        if !rows.isEmpty {
            lines += ["", Table.render(headers: ["EYE", "MERIDIAN", "GLASSES", "AT CORNEA", "VERTEX"], rows: rows)]
        }
        for result in eyes where !result.matters {
            lines.append("\(result.eye.label): 4 D or less in every meridian: about the same at the cornea")
        }
        return lines.joined(separator: "\n")
    }

    var json: JSONValue {
        var pairs: [(String, JSONValue)] = [("calculation", .string(Self.disclaimer))]
        for result in eyes {
            var eye: [(String, JSONValue)] = [
                ("vertexDistance", .number(result.vertex.short)),
                ("vertexDistanceAssumed", .bool(result.vertexAssumed)),
                ("matters", .bool(result.matters))
            ]
            if result.matters {
                eye.append(
                    (
                        "meridians",
                        .array(
                            result.meridians.map { m in
                                var item: [(String, JSONValue)] = [
                                    ("glasses", .number(m.glasses.short)),
                                    ("cornea", .number(Hundredths(raw: Int((m.cornea * 100).rounded())).short))
                                ]
                                if let degrees = m.degrees { item.append(("meridian", .int(degrees))) }
                                return .object(item)
                            })
                    ))
            }
            pairs.append((result.eye == .right ? "right" : "left", .object(eye)))
        }
        return .object(pairs)
    }
}
