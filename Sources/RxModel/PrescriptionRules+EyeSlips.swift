/// Warnings for slips between the two eyes: values each valid on its own that, side by side, look
/// like a transcription error. Never refusals: each has a rare real case (mixed anisometropia, a
/// one-eyed add for monovision, an infant's PD), and the person holding the paper decides. Every
/// message names both eyes and both values, so the slip can be found on the paper.
extension PrescriptionRules {
    /// Spheres of opposite signs this far apart (or more) warn: antimetropia this large is rare,
    /// a dropped minus sign is not.
    static let oppositeSphereGap = Hundredths(2)
    /// A binocular PD below this is almost certainly one eye's: even a newborn's is about 40 mm.
    static let lowestBinocularPD = Hundredths(40)

    static func eyeSlips(_ rx: Prescription) -> [String] {
        var warnings: [String] = []
        guard let right = rx.right, let left = rx.left, !right.balance, !left.balance else {
            return warnings + pupillaryDistanceSlips(rx)
        }
        if let r = right.cylinder, let l = left.cylinder, !r.isZero, !l.isZero, (r.raw < 0) != (l.raw < 0) {
            warnings.append(
                "OD cylinder \(r.signedPower) is \(r.raw < 0 ? "minus" : "plus")-cyl and OS cylinder \(l.signedPower) is "
                    + "\(l.raw < 0 ? "minus" : "plus")-cyl: a prescription writes both eyes in one form; check the signs"
            )
        }
        let rightAdd = right.add != nil || right.addDesignation != nil
        let leftAdd = left.add != nil || left.addDesignation != nil
        if rightAdd != leftAdd {
            let (with, without) = rightAdd ? (Eye.right, Eye.left) : (Eye.left, Eye.right)
            let lens = rightAdd ? right : left
            let written = [lens.add?.signedPower, lens.addDesignation?.rawValue].compactMap { $0 }.joined(
                separator: " ")
            warnings.append(
                "\(with.label) has add \(written) and \(without.label) has none: an add is usually on both eyes; check the prescription"
            )
        }
        let (r, l) = (right.sphere, left.sphere)
        if r.raw != 0, l.raw != 0, (r.raw < 0) != (l.raw < 0), abs(r.raw - l.raw) >= oppositeSphereGap.raw {
            warnings.append(
                "OD sphere \(r.signedPower) and OS sphere \(l.signedPower) have opposite signs, "
                    + "\(Hundredths(raw: abs(r.raw - l.raw)).plain) D apart: check for a dropped or added minus sign")
        }
        return warnings + pupillaryDistanceSlips(rx)
    }

    /// A binocular PD under 40 mm is one eye's PD written where both eyes' belongs.
    static func pupillaryDistanceSlips(_ rx: Prescription) -> [String] {
        guard rx.kind == .glasses, let pd = rx.pupillaryDistance, pd.far < lowestBinocularPD else { return [] }
        return [
            "PD \(pd.far.short) mm is almost certainly one eye's (monocular) PD, not both eyes': "
                + "give it per eye (--pd-od, --pd-os), or check it (even a newborn's binocular PD is about 40 mm)"
        ]
    }
}
