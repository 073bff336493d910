/// The rules for lenses as they are actually prescribed: balance lenses, multifocal
/// contact-lens adds written as LOW/MED/HIGH with a D/N design, the contact-lens type, and the
/// warnings (never refusals) for values that are possible but unusual: a base curve or diameter
/// unusual for the lens type, a PD outside the adult range, implausible dates.
extension PrescriptionRules {
    /// The usual adult binocular PD; outside it (children, infants, typos) is a warning.
    public static let adultPDRange = Hundredths(54)...Hundredths(74)
    /// Without a lens type, base curves and diameters outside every type's usual range warn.
    static let anyTypeBaseCurve = Hundredths(raw: 650)...Hundredths(raw: 950)
    static let anyTypeDiameter = Hundredths(8)...Hundredths(24)
    /// Longest plausible validity, in years: contacts 2, glasses 5 (domain.md section 0).
    static let longestValidity: [PrescriptionKind: Int] = [.contacts: 2, .glasses: 5]
    /// Issue dates before this are almost certainly a typo.
    static let earliestPlausibleIssue = CalendarDate(year: 1950, month: 1, day: 1)!

    /// Fields that belong to one kind of lens: a balance lens (glasses, one eye, no power), the
    /// add designation and D/N design (multifocal contacts), the contact-lens type (contacts).
    static func checkLensKinds(_ rx: Prescription, into problems: inout [RuleViolation]) {
        if rx.contactLensType != nil && rx.kind != .contacts {
            problems.append(
                RuleViolation(
                    eye: nil, field: "contact-lens type", value: rx.contactLensType!.rawValue,
                    accepted: "applies to contact lenses only"))
        }
        if rx.right?.balance == true && rx.left?.balance == true {
            problems.append(
                RuleViolation(
                    eye: nil, field: "balance lens", value: nil,
                    accepted: "one eye only (the other eye carries the prescription)"))
        }
        for (eye, lens) in rx.eyes {
            if lens.balance {
                if rx.kind == .contacts {
                    problems.append(
                        RuleViolation(
                            eye: eye, field: "balance lens", value: nil,
                            accepted: "applies to glasses only (leave the eye out for a one-lens contact fit)"))
                }
                let powers: [(String, Bool)] = [
                    ("sphere", !lens.sphere.isZero), ("cylinder", lens.cylinder != nil || lens.axis != nil),
                    ("add", lens.add != nil || lens.addDesignation != nil || lens.dominance != nil),
                    ("prism", lens.prism != nil)
                ]
                for (field, present) in powers where present {
                    problems.append(
                        RuleViolation(
                            eye: eye, field: field, value: nil,
                            accepted: "a balance lens (BAL) has no prescribed power: give one or the other"))
                }
            }
            if rx.kind == .glasses {
                if let designation = lens.addDesignation {
                    problems.append(
                        RuleViolation(
                            eye: eye, field: "add", value: designation.rawValue,
                            accepted:
                                "add codes (\(AddDesignation.acceptedText)) apply to multifocal contact lenses only: give glasses an add in dioptres (add +2.00)"
                        ))
                }
                if let dominance = lens.dominance {
                    problems.append(
                        RuleViolation(
                            eye: eye, field: "add", value: dominance.rawValue,
                            accepted:
                                "D and N (dominant, non-dominant design) apply to multifocal contact lenses only; an add is always in dioptres, without a unit"
                        ))
                }
            } else if let dominance = lens.dominance, lens.add == nil && lens.addDesignation == nil {
                problems.append(
                    RuleViolation(
                        eye: eye, field: "dominance", value: dominance.rawValue,
                        accepted: "only with an add (add +1.50 \(dominance.rawValue), add HIGH \(dominance.rawValue))"))
            }
        }
    }

    /// Warnings for values that are accepted but unusual: worth a second look, never a refusal.
    static func unusualValues(_ rx: Prescription) -> [String] {
        var warnings: [String] = []
        if rx.issued < earliestPlausibleIssue {
            warnings.append("issue date \(rx.issued) is before 1950: check the year")
        }
        if let expires = rx.expires, let years = longestValidity[rx.kind], expires > rx.issued.addingYears(years) {
            let what = rx.kind == .contacts ? "a contact-lens prescription" : "a glasses prescription"
            warnings.append(
                "valid from \(rx.issued) to \(expires), more than \(years) years: unusual for \(what); check the expiry date"
            )
        }
        if rx.kind == .glasses {
            // Under 40 mm is `eyeSlips`' (one eye's PD); between 40 and 54 a child's; above 74 rare.
            if let pd = rx.pupillaryDistance, pd.far >= lowestBinocularPD, !adultPDRange.contains(pd.far) {
                warnings.append(
                    "PD \(pd.far.short) mm is outside the usual adult range 54 to 74 mm\(childNote(pd.far)): check it")
            }
            if let r = rx.right?.farPD, let l = rx.left?.farPD, !adultPDRange.contains(r + l) {
                warnings.append(
                    "PD \(r.short)/\(l.short) mm (\((r + l).short) in all) is outside the usual adult range 54 to 74 mm\(childNote(r + l)): check it"
                )
            }
        }
        if rx.kind == .contacts {
            let type = rx.contactLensType
            for (eye, lens) in rx.eyes {
                func unusual(
                    _ value: Hundredths?, _ field: String, typed: ClosedRange<Hundredths>?,
                    untyped: ClosedRange<Hundredths>
                ) {
                    guard let value else { return }
                    let usual = typed ?? untyped
                    guard !usual.contains(value) else { return }
                    let range = "\(usual.lowerBound.plain) to \(usual.upperBound.plain) mm"
                    if let type {
                        warnings.append(
                            "\(eye.label) \(field) \(value.plain) mm is unusual for \(type.rawValue) lenses (usually \(range)): check it"
                        )
                    } else {
                        warnings.append(
                            "\(eye.label) \(field) \(value.plain) mm is unusual for any common contact lens (usually \(range)): check it, or give --lens-type"
                        )
                    }
                }
                unusual(lens.baseCurve, "base curve", typed: type?.usualBaseCurve, untyped: anyTypeBaseCurve)
                unusual(lens.diameter, "diameter", typed: type?.usualDiameter, untyped: anyTypeDiameter)
            }
        }
        return warnings
    }

    /// Below the adult range, a child's PD is usual (about 43 to 58 mm); above it nobody's is.
    private static func childNote(_ pd: Hundredths) -> String {
        pd < adultPDRange.lowerBound ? " (usual for a child)" : ""
    }
}

extension CalendarDate {
    /// The same day `years` later; 29 February becomes 28 February in a year without it. Clamped
    /// to `latest`.
    func addingYears(_ years: Int) -> CalendarDate {
        let year = min(self.year + years, 9999)
        return CalendarDate(year: year, month: month, day: day)
            ?? CalendarDate(year: year, month: month, day: 28)!
    }
}
