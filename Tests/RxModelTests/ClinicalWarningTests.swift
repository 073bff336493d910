import Testing

@testable import RxModel

/// Slips between the eyes, and the US Contact Lens Rule (16 CFR 315) read as warnings.
@Suite struct EyeSlipTests {
    func glasses(_ od: String, _ os: String) throws -> Prescription {
        Fixture.glasses(right: try LensNotation.parse(od), left: try LensNotation.parse(os))
    }

    @Test func cylinderFormsThatDifferBetweenTheEyesWarn() throws {
        let advisories = try #require(accepted(try glasses("-2.00 -0.75 x180", "-1.50 +0.50 x090"))).advisories
        #expect(
            advisories == [
                "OD cylinder -0.75 is minus-cyl and OS cylinder +0.50 is plus-cyl: a prescription writes both eyes in one form; check the signs"
            ])
        #expect(try #require(accepted(try glasses("-2.00 +0.75 x180", "-1.50 +0.50 x090"))).advisories.isEmpty)
        #expect(try #require(accepted(try glasses("-2.00 -0.75 x180", "-1.50 DS"))).advisories.isEmpty)
    }

    @Test func anAddOnOneEyeOnlyWarnsNamingBoth() throws {
        let advisories = try #require(accepted(try glasses("+1.00 add +2.00", "+1.25"))).advisories
        #expect(
            advisories == ["OD has add +2.00 and OS has none: an add is usually on both eyes; check the prescription"])
        let left = try #require(accepted(try glasses("+1.00", "+1.25 add +2.00"))).advisories
        #expect(left == ["OS has add +2.00 and OD has none: an add is usually on both eyes; check the prescription"])
        // A balance lens has no power of any kind: no add expected on it.
        #expect(try #require(accepted(try glasses("+1.00 add +2.00", "BAL"))).advisories.isEmpty)
        // One eye only (a one-lens prescription): nothing to compare.
        #expect(
            try #require(accepted(Fixture.glasses(right: try LensNotation.parse("+1.00 add +2.00"), left: nil)))
                .advisories.isEmpty)
    }

    @Test func spheresOfOppositeSignsFarApartWarn() throws {
        let advisories = try #require(accepted(try glasses("+2.00", "-2.25"))).advisories
        #expect(
            advisories == [
                "OD sphere +2.00 and OS sphere -2.25 have opposite signs, 4.25 D apart: check for a dropped or added minus sign"
            ])
        // Exactly 2.00 apart still warns; 1.75 apart does not (small antimetropia is common).
        #expect(try #require(accepted(try glasses("+1.00", "-1.00"))).advisories.count == 1)
        #expect(try #require(accepted(try glasses("+0.75", "-1.00"))).advisories.isEmpty)
        // Plano has no sign.
        #expect(try #require(accepted(try glasses("plano", "-3.00"))).advisories.isEmpty)
    }
}

@Suite struct ContactLensRuleTests {
    @Test func lessThanAYearWarnsUnlessAReasonIsKept() throws {
        let short = Fixture.contacts(expires: date("2026-09-01"))
        #expect(
            try #require(accepted(short)).advisories == [
                "valid from 2026-03-01 to 2026-09-01, less than a year: the US Contact Lens Rule (16 CFR 315.6) requires at least one year unless the prescriber records a medical reason (keep it with --short-expiry-reason TEXT)"
            ])
        var reasoned = short
        reasoned.shortExpiryReason = "  corneal neovascularisation: review in 6 months "
        let checked = try #require(accepted(reasoned))
        #expect(checked.advisories.isEmpty)
        #expect(checked.prescription.shortExpiryReason == "corneal neovascularisation: review in 6 months")
        // A year to the day is what the Rule asks: no warning.
        #expect(try #require(accepted(Fixture.contacts(expires: date("2027-03-01")))).advisories.isEmpty)
        // Glasses have no such rule; a reason on them is a field of the wrong kind.
        var glasses = Fixture.glasses()
        glasses.shortExpiryReason = "review"
        #expect(violations(of: glasses).map(\.field) == ["short-expiry reason"])
    }

    @Test func whatTheRuleListsIsStoredAndWhatIsMissingIsNamed() throws {
        var rx = Fixture.contacts()
        rx.examDate = nil
        rx.prescriber.fax = nil
        rx.prescriber.phone = nil
        rx.left!.manufacturer = nil
        rx.left!.baseCurve = nil
        #expect(
            try #require(accepted(rx)).advisories == [
                "missing what the US Contact Lens Rule (16 CFR 315.2) lists on a contact-lens prescription: exam date (--exam-date); prescriber phone, fax (--prescriber-phone, --prescriber-fax); OS material or manufacturer (--manufacturer, --material); OS base curve (a seller may ask for them)"
            ])
        rx.left!.material = "senofilcon A"
        rx.left!.baseCurve = h("8.4")
        rx.examDate = date("2026-02-20")
        rx.prescriber.phone = "+1 555 0100"
        rx.prescriber.fax = "+1 555 0101"
        #expect(try #require(accepted(rx)).advisories.isEmpty)
        // Glasses are not under the Contact Lens Rule.
        var glasses = Fixture.glasses()
        glasses.prescriber = Prescriber(name: "Dr. Iris Hale")
        #expect(try #require(accepted(glasses)).advisories.isEmpty)
    }

    @Test func theExamComesBeforeTheIssueAndNotAfterToday() {
        var rx = Fixture.contacts()
        rx.examDate = date("2026-03-02")
        #expect(
            violations(of: rx).map(\.description) == [
                "exam date 2026-03-02: must be on or before the issue date 2026-03-01 (a prescription follows its exam)"
            ])
        rx.issued = today
        rx.examDate = today.adding(days: 1)!
        #expect(violations(of: rx).map(\.field) == ["exam date"])
    }

    @Test func manufacturerMaterialAndEquivalentBrandBelongToContacts() {
        var glasses = Fixture.glasses()
        glasses.right!.manufacturer = "Zeiss"
        glasses.right!.equivalentBrand = "Acuvue Oasys"
        #expect(
            violations(of: glasses).map(\.description) == [
                "OD manufacturer: applies to contact lenses only", "OD equivalent brand: applies to contact lenses only"
            ])
    }

    @Test func softLensValuesThatCannotBeOrderedNameTheNearest() throws {
        func advisories(_ od: String, type: ContactLensType? = .soft) throws -> [String] {
            var rx = Fixture.contacts(left: nil)
            rx.contactLensType = type
            var lens = try LensNotation.parse(od)
            lens.brand = "Biofinity"
            lens.manufacturer = "CooperVision"
            rx.right = lens
            return try #require(accepted(rx)).advisories
        }
        #expect(
            try advisories("-6.25 bc 8.6 dia 14.0") == [
                "OD sphere -6.25 is not made in soft lenses: beyond +-6.00 they come in 0.50 steps; nearest -6.50 or -6.00"
            ])
        #expect(try advisories("-6.00 bc 8.6 dia 14.0").isEmpty)
        #expect(try advisories("-6.50 bc 8.6 dia 14.0").isEmpty)
        #expect(try advisories("+6.75 bc 8.6 dia 14.0").count == 1)
        #expect(
            try advisories("-2.00 -1.00 x175 bc 8.6 dia 14.5") == [
                "OD cylinder -1.00 is not made in soft lenses: toric lenses come in -0.75 to -2.25 (to -5.75 in extended ranges) in 0.50 steps; nearest -0.75 or -1.25",
                "OD axis 175 is not made in soft lenses: toric axes come in 10-degree steps; nearest 170 or 180"
            ])
        #expect(try advisories("-2.00 -1.25 x180 bc 8.6 dia 14.5").isEmpty)
        #expect(try advisories("-2.00 -0.50 x005 bc 8.6 dia 14.5").count == 2)
        #expect(
            try advisories("-2.00 -0.50 x180 bc 8.6 dia 14.5").first?.hasSuffix("nearest -0.75, or a spherical lens")
                == true)
        // Plus cylinder is read as the minus-cyl lens it is.
        #expect(
            try advisories("-3.00 +1.25 x085 bc 8.6 dia 14.5") == [
                "OD axis 175 (minus-cyl) is not made in soft lenses: toric axes come in 10-degree steps; nearest 170 or 180"
            ])
        // Without a type the warning says what it assumes; rigid lenses are made to order.
        #expect(
            try advisories("-6.25 bc 8.6 dia 14.0", type: nil).first?.contains(
                "if these are not soft, give --lens-type") == true)
        #expect(try advisories("-6.25 -1.00 x175 bc 7.8 dia 9.6", type: .rgp).isEmpty)
    }
}

/// What contact-lens boxes and manufacturers print, read as written.
@Suite struct LensBoxNotationTests {
    @Test func theOrderPrintedOnLensBoxesIsRead() throws {
        let cases: [(String, String)] = [
            ("BC 8.6 DIA 14.2 PWR -3.00", "-3.00 bc 8.6 dia 14.2"),
            ("bc 8.6 dia 14.2 pwr -3.00", "-3.00 bc 8.6 dia 14.2"),
            ("BC8.6 DIA14.2 PWR-3.00", "-3.00 bc 8.6 dia 14.2"),
            ("BC 8.7 DIA 14.5 PWR -2.75 CYL -1.25 AX 170", "-2.75 -1.25 x170 bc 8.7 dia 14.5"),
            ("BC 8.6 DIA 14.2 SPH -3.00", "-3.00 bc 8.6 dia 14.2"),
            ("PWR -3.00 BC 8.6 DIA 14.2", "-3.00 bc 8.6 dia 14.2"),
            ("BC 8.4 DIA 14.3 POWER +1.25 ADD MID", "+1.25 add MID bc 8.4 dia 14.3"),
            ("BC: 8.6, DIA: 14.2, PWR: -3.00", "-3.00 bc 8.6 dia 14.2")
        ]
        for (box, canonical) in cases {
            #expect(LensNotation.format(try LensNotation.parse(box)) == canonical, "\(box)")
        }
        // Without its power the box label is still refused, saying what is missing.
        #expect(throws: LensNotation.Unreadable.self) { try LensNotation.parse("BC 8.6 DIA 14.2") }
    }

    @Test func manufacturersAddCodesAreKeptAsWritten() throws {
        for code in ["LOW", "LO", "MED", "MID", "HIGH", "HI", "HGH"] {
            let lens = try LensNotation.parse("-1.25 add \(code.lowercased()) bc 8.6 dia 14.2")
            #expect(lens.addDesignation?.rawValue == code)
            #expect(LensNotation.format(lens) == "-1.25 add \(code) bc 8.6 dia 14.2")
        }
        let refused = #expect(throws: LensNotation.Unreadable.self) { try LensNotation.parse("-1.25 add MAX") }
        #expect(refused?.problem.contains("LOW, LO, MED, MID, HIGH, HI or HGH") == true)
    }
}

extension ContactLensRuleTests {
    /// A plus-cylinder lens is the minus-cylinder lens S + C, -C, axis +-90: its sphere is checked
    /// in that form (review of issue 26).
    @Test func aPlusCylinderLensIsCheckedAsItsMinusCylinderForm() throws {
        func advisories(_ od: String) throws -> [String] {
            var rx = Fixture.contacts(left: nil)
            rx.contactLensType = .soft
            var lens = try LensNotation.parse(od)
            lens.brand = "Biofinity Toric"
            lens.manufacturer = "CooperVision"
            rx.right = lens
            return try #require(accepted(rx)).advisories
        }
        // +5.50 +1.25 x090 is +6.75 -1.25 x180: not made.
        #expect(
            try advisories("+5.50 +1.25 x090 bc 8.7 dia 14.5") == [
                "OD sphere +6.75 (as minus-cyl) is not made in soft lenses: beyond +-6.00 they come in 0.50 steps; nearest +6.50 or +7.00"
            ])
        // -6.25 +0.75 x090 is -5.50 -0.75 x180: made.
        #expect(try advisories("-6.25 +0.75 x090 bc 8.7 dia 14.5").isEmpty)
    }
}
