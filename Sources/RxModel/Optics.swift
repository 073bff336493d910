/// The optics rxvault computes from a lens specification. Pure arithmetic on what was written.

/// Minus-cylinder (optometry) or plus-cylinder (ophthalmology) form. Both describe the same lens.
public enum CylinderForm: String, Sendable, CaseIterable {
    case minus
    case plus
}

extension LensSpecification {
    /// The same lens written with its cylinder in `form`: S' = S + C, C' = -C, axis' = axis ± 90
    /// kept in 1...180. A lens without cylinder, or already in that form, is returned unchanged.
    public func transposed(to form: CylinderForm) -> LensSpecification {
        guard let cylinder, !cylinder.isZero, let axis else { return self }
        let isMinus = cylinder.raw < 0
        guard (form == .minus) != isMinus else { return self }
        var lens = self
        lens.sphere = sphere + cylinder
        lens.cylinder = cylinder.negated
        lens.axis = axis > 90 ? axis - 90 : axis + 90
        return lens
    }

    /// Spherical equivalent, S + C/2, in dioptres. May fall on an eighth (−2.625).
    public var sphericalEquivalent: Double {
        Double(sphere.raw * 2 + (cylinder?.raw ?? 0)) / 200
    }

    /// The spherical equivalent as printed: two decimals, three when it falls on an eighth.
    public var sphericalEquivalentText: String {
        // Work in thousandths so eighths (x.125) print exactly.
        let thousandths = sphere.raw * 10 + (cylinder?.raw ?? 0) * 5
        let sign = thousandths > 0 ? "+" : thousandths < 0 ? "-" : ""
        let magnitude = abs(thousandths)
        let whole = magnitude / 1000
        var fraction = String(magnitude % 1000).padding(toLength: 3, leftPadding: true)
        if fraction.hasSuffix("0") { fraction.removeLast() }
        return "\(sign)\(whole).\(fraction)"
    }
}

/// Effective power of a lens moved along the visual axis, per principal meridian.
public enum VertexConversion {
    /// Power at the cornea of a spectacle lens of power `power` (D) worn `distance` mm in front of it:
    /// Fc = F / (1 − d·F), d in metres. Matters above about ±4 D.
    public static func powerAtCornea(_ power: Double, vertexDistance distance: Double) -> Double {
        power / (1 - distance / 1000 * power)
    }

    /// Inverse of `powerAtCornea`: the spectacle power that has `cornealPower` at the cornea.
    public static func spectaclePower(_ cornealPower: Double, vertexDistance distance: Double) -> Double {
        cornealPower / (1 + distance / 1000 * cornealPower)
    }

    /// Both principal meridians of `lens` at the cornea: (sphere meridian, sphere + cylinder meridian).
    public static func meridiansAtCornea(_ lens: LensSpecification, vertexDistance distance: Double) -> (Double, Double)
    {
        let s = lens.sphere.doubleValue
        let c = lens.cylinder?.doubleValue ?? 0
        return (powerAtCornea(s, vertexDistance: distance), powerAtCornea(s + c, vertexDistance: distance))
    }
}
