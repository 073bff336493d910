import Foundation
import RxModel
import Testing

/// "Lenses people are actually prescribed": the ranges of domain.md section 0, the
/// warnings for values unusual for the lens type, balance lenses, multifocal contact-lens adds,
/// the zero cylinder written with an axis, implausible dates.
@Suite struct LensKindRulesTests {
    func contacts(_ type: ContactLensType?, bc: String?, dia: String?) -> Prescription {
        var rx = Fixture.contacts()
        rx.contactLensType = type
        rx.right!.baseCurve = bc.map { h($0) }
        rx.right!.diameter = dia.map { h($0) }
        rx.left = nil
        return rx
    }

    @Test func rigidAndScleralLensesAreAcceptedAndWarnedOnlyWhenUnusualForTheirType() throws {
        // RGP 6.5/9.6: usual for an RGP, no warning; unusual for a soft lens.
        #expect(try #require(accepted(contacts(.rgp, bc: "6.5", dia: "9.6"))).advisories.isEmpty)
        let soft = try #require(accepted(contacts(.soft, bc: "6.5", dia: "9.6"))).advisories
        #expect(
            soft == [
                "OD base curve 6.5 mm is unusual for soft lenses (usually 8.0 to 9.5 mm): check it",
                "OD diameter 9.6 mm is unusual for soft lenses (usually 13.0 to 15.0 mm): check it"
            ])
        // Scleral 7.8/18.0 fine; 18 mm without a type is usual for some lens (a scleral).
        #expect(try #require(accepted(contacts(.scleral, bc: "7.8", dia: "18"))).advisories.isEmpty)
        #expect(try #require(accepted(contacts(nil, bc: "7.8", dia: "18"))).advisories.isEmpty)
        #expect(
            try #require(accepted(contacts(.scleral, bc: "7.8", dia: "14.2"))).advisories
                == ["OD diameter 14.2 mm is unusual for scleral lenses (usually 15.0 to 24.0 mm): check it"])
        // A keratoconus fit (5.8) is accepted: a warning for any type.
        #expect(
            try #require(accepted(contacts(.rgp, bc: "5.8", dia: "9.0"))).advisories
                == ["OD base curve 5.8 mm is unusual for rgp lenses (usually 6.5 to 8.5 mm): check it"])
        #expect(
            try #require(accepted(contacts(nil, bc: "5.8", dia: "9.0"))).advisories
                == [
                    "OD base curve 5.8 mm is unusual for any common contact lens (usually 6.5 to 9.5 mm): check it, or give --lens-type"
                ])
        #expect(try #require(accepted(contacts(.hybrid, bc: "7.5", dia: "14.5"))).advisories.isEmpty)
        #expect(try #require(accepted(contacts(.orthoK, bc: "8.2", dia: "10.6"))).advisories.isEmpty)
        #expect(
            try #require(accepted(contacts(.hybrid, bc: "7.5", dia: "16"))).advisories
                == ["OD diameter 16.0 mm is unusual for hybrid lenses (usually 14.0 to 14.5 mm): check it"])
    }

    @Test func everyTypeHasUsualRangesInsideTheAcceptedOnes() {
        for type in ContactLensType.allCases {
            #expect(PrescriptionRules.baseCurveRange.contains(type.usualBaseCurve.lowerBound))
            #expect(PrescriptionRules.baseCurveRange.contains(type.usualBaseCurve.upperBound))
            #expect(PrescriptionRules.diameterRange.contains(type.usualDiameter.lowerBound))
            #expect(PrescriptionRules.diameterRange.contains(type.usualDiameter.upperBound))
            #expect(ContactLensType(text: type.rawValue) == type)
        }
        #expect(ContactLensType(text: "RGP") == .rgp && ContactLensType(text: "orthok") == .orthoK)
        #expect(ContactLensType(text: "hard") == nil)
    }

    @Test func aContactLensTypeOnGlassesIsRefused() {
        var rx = Fixture.glasses()
        rx.contactLensType = .soft
        #expect(
            violations(of: rx) == [
                RuleViolation(
                    eye: nil, field: "contact-lens type", value: "soft", accepted: "applies to contact lenses only")
            ])
    }

    @Test func childrensPDsAreAcceptedWithAWarning() throws {
        let child = try #require(accepted(Fixture.glasses(pd: PupillaryDistance(far: h("48")))))
        #expect(
            child.advisories == ["PD 48 mm is outside the usual adult range 54 to 74 mm (usual for a child): check it"]
        )
        #expect(
            try #require(accepted(Fixture.glasses(pd: PupillaryDistance(far: h("76"))))).advisories == [
                "PD 76 mm is outside the usual adult range 54 to 74 mm: check it"
            ])
        // Under 40 mm is one eye's PD, even for an infant: the slip, not the child, is named.
        let monocular = try #require(accepted(Fixture.glasses(pd: PupillaryDistance(far: h("31")))))
        #expect(
            monocular.advisories == [
                "PD 31 mm is almost certainly one eye's (monocular) PD, not both eyes': give it per eye (--pd-od, --pd-os), or check it (even a newborn's binocular PD is about 40 mm)"
            ])
        #expect(try #require(accepted(Fixture.glasses(pd: PupillaryDistance(far: h("63"))))).advisories.isEmpty)
        var mono = Fixture.glasses()
        mono.right!.farPD = h("19")
        mono.left!.farPD = h("19.5")
        #expect(
            try #require(accepted(mono)).advisories == [
                "PD 19/19.5 mm (38.5 in all) is outside the usual adult range 54 to 74 mm (usual for a child): check it"
            ])
        mono.right!.farPD = h("32")
        mono.left!.farPD = h("31")
        #expect(try #require(accepted(mono)).advisories.isEmpty)
    }

    @Test func implausibleDatesAreWarnedAbout() throws {
        let longContacts = Fixture.contacts(expires: date("2028-03-02"))
        #expect(
            try #require(accepted(longContacts)).advisories
                == [
                    "valid from 2026-03-01 to 2028-03-02, more than 2 years: unusual for a contact-lens prescription; check the expiry date"
                ])
        #expect(try #require(accepted(Fixture.contacts(expires: date("2028-03-01")))).advisories.isEmpty)
        #expect(try #require(accepted(Fixture.glasses(expires: date("2031-03-01")))).advisories.isEmpty)
        #expect(
            try #require(accepted(Fixture.glasses(expires: date("2031-03-02")))).advisories
                == [
                    "valid from 2026-03-01 to 2031-03-02, more than 5 years: unusual for a glasses prescription; check the expiry date"
                ])
        let old = Fixture.glasses(issued: date("1949-12-31"), expires: date("1951-12-31"))
        var oldRx = old
        oldRx.patient.birthDate = date("1940-01-01")
        #expect(try #require(accepted(oldRx)).advisories == ["issue date 1949-12-31 is before 1950: check the year"])
        var from1950 = Fixture.glasses(issued: date("1950-01-01"), expires: date("1951-01-01"))
        from1950.patient.birthDate = nil
        #expect(try #require(accepted(from1950)).advisories.isEmpty)
        // 29 February plus two years is 28 February.
        let leap = Fixture.contacts(issued: date("2024-02-29"), expires: date("2026-02-28"))
        #expect(try #require(accepted(leap)).advisories.isEmpty)
        #expect(
            try #require(accepted(Fixture.contacts(issued: date("2024-02-29"), expires: date("2026-03-01")))).advisories
                .count == 1)
    }

    @Test(arguments: Eye.allCases)
    func aZeroCylinderWithAnAxisIsStoredAsSpherical(eye: Eye) throws {
        var rx = Fixture.glasses()
        rx[eye] = LensSpecification(sphere: h("-2.00"), cylinder: .zero, axis: 180)
        let checked = try #require(accepted(rx))
        #expect(checked.prescription[eye] == LensSpecification(sphere: h("-2.00")))
        #expect(
            checked.advisories == [
                "\(eye.label) cylinder 0.00 with axis 180: no astigmatism, stored as spherical (axis dropped)"
            ])
        // Through the notation as well.
        rx[eye] = try LensNotation.parse("-2.00 0.00 x180")
        #expect(try #require(accepted(rx)).prescription[eye] == LensSpecification(sphere: h("-2.00")))
        // An axis without any cylinder is still refused: nothing says it was a zero cylinder.
        rx[eye] = LensSpecification(sphere: h("-2.00"), axis: 180)
        #expect(
            violations(of: rx) == [
                RuleViolation(eye: eye, field: "axis", value: "180", accepted: "only allowed with a non-zero cylinder")
            ])
    }

    @Test(arguments: Eye.allCases)
    func aBalanceLensIsOneEyeOfGlassesWithoutPower(eye: Eye) throws {
        var rx = Fixture.glasses()
        rx[eye] = try LensNotation.parse("BAL")
        let checked = try #require(accepted(rx))
        #expect(checked.prescription[eye]?.balance == true)
        #expect(LensNotation.format(checked.prescription[eye]!) == "BAL")
        // With a PD it is fine (the frame still needs centring).
        rx[eye]!.farPD = h("31")
        rx[eye == .right ? .left : .right]!.farPD = h("32")
        #expect(violations(of: rx).isEmpty)

        var both = Fixture.glasses(right: .balanceLens, left: .balanceLens)
        #expect(
            violations(of: both) == [
                RuleViolation(
                    eye: nil, field: "balance lens", value: nil,
                    accepted: "one eye only (the other eye carries the prescription)")
            ])
        both[eye] = LensSpecification.balanceLens
        both[eye]!.cylinder = h("-0.50")
        both[eye]!.axis = 90
        both[eye]!.add = h("2")
        both[eye == .right ? .left : .right] = Fixture.glassesLeft
        let text = "a balance lens (BAL) has no prescribed power: give one or the other"
        #expect(
            Set(violations(of: both)) == [
                RuleViolation(eye: eye, field: "cylinder", value: nil, accepted: text),
                RuleViolation(eye: eye, field: "add", value: nil, accepted: text)
            ])
        var contacts = Fixture.contacts()
        contacts[eye] = .balanceLens
        contacts[eye]!.brand = "Acuvue Oasys"
        #expect(
            violations(of: contacts) == [
                RuleViolation(
                    eye: eye, field: "balance lens", value: nil,
                    accepted: "applies to glasses only (leave the eye out for a one-lens contact fit)")
            ])
    }

    @Test func multifocalContactAddsAreRecordedAsWritten() throws {
        var rx = Fixture.contacts()
        rx.right = try LensNotation.parse("-1.25 add HIGH D bc 8.6 dia 14.2")
        rx.left = try LensNotation.parse("-1.50 add +1.50 N bc 8.6 dia 14.2")
        rx.right!.brand = "Air Optix Multifocal"
        rx.left!.brand = "Biofinity Multifocal"
        rx.right!.manufacturer = "Alcon"
        rx.left!.manufacturer = "CooperVision"
        let checked = try #require(accepted(rx))
        #expect(checked.advisories.isEmpty)
        #expect(
            checked.prescription.right!.addDesignation == .high && checked.prescription.right!.dominance == .dominant)
        #expect(checked.prescription.right!.add == nil)
        #expect(checked.prescription.left!.add == h("1.5") && checked.prescription.left!.dominance == .nonDominant)
        #expect(LensNotation.format(checked.prescription.right!) == "-1.25 add HIGH D bc 8.6 dia 14.2")

        // Glasses take no designation or D/N; D/N needs an add.
        var glasses = Fixture.glasses()
        glasses.right = try LensNotation.parse("-1.00 add +2.00 D")
        #expect(violations(of: glasses).map(\.field) == ["add"])
        #expect(violations(of: glasses).first?.description.contains("apply to multifocal contact lenses only") == true)
        glasses.right = try LensNotation.parse("-1.00 add MED")
        #expect(
            violations(of: glasses).first?.description
                == "OD add MED: add codes (LOW, LO, MED, MID, HIGH, HI or HGH) apply to multifocal contact lenses only: give glasses an add in dioptres (add +2.00)"
        )
        rx.left!.add = nil
        #expect(
            violations(of: rx) == [
                RuleViolation(
                    eye: .left, field: "dominance", value: "N", accepted: "only with an add (add +1.50 N, add HIGH N)")
            ])
    }

    @Test func anAddIsOneUnitInAnEditAndNoOdAddRemovesAllOfIt() throws {
        let current = try LensNotation.parse("-1.25 add +1.50 HIGH D bc 8.6 dia 14.2")
        // A new add replaces number, designation and design together.
        #expect(
            try LensNotation.read("-1.25 add MED").applied(to: current)
                == LensNotation.parse("-1.25 add MED bc 8.6 dia 14.2"))
        // No add written: all of it kept.
        #expect(
            try LensNotation.read("-1.50").applied(to: current)
                == LensNotation.parse("-1.50 add +1.50 HIGH D bc 8.6 dia 14.2"))
        var removed = current
        LensField.add.remove(from: &removed)
        #expect(removed == (try LensNotation.parse("-1.25 bc 8.6 dia 14.2")))
    }

    @Test func balanceInAnEditReplacesThePowersAndASphereEndsIt() throws {
        let current = try LensNotation.parse("-2.25 -0.75 x180 add +2.00 prism 1 BI pd 32")
        let balance = try LensNotation.read("BAL").applied(to: current)
        var expected = LensSpecification.balanceLens
        expected.farPD = h("32")
        #expect(balance == expected)
        let powered = try LensNotation.read("-1.00 DS").applied(to: balance)
        #expect(powered == LensSpecification(sphere: h("-1.00"), farPD: h("32")))
    }

    @Test func historyNamesTheNewFields() throws {
        var before = Fixture.contacts()
        var after = before
        after.right!.addDesignation = .low
        after.right!.dominance = .dominant
        after.contactLensType = .soft
        before.left = nil
        after.left = nil
        #expect(
            after.changes(since: before).map(\.description) == [
                "contact-lens type none → soft", "OD add designation none → LOW", "OD dominance none → D"
            ])
    }

    @Test func newFieldsRoundTripThroughJSONAndOlderJSONStillReads() throws {
        var rx = Fixture.contacts()
        rx.contactLensType = .orthoK
        rx.right!.addDesignation = .medium
        rx.right!.dominance = .nonDominant
        var glasses = Fixture.glasses()
        glasses.left = .balanceLens
        for value in [rx, glasses] {
            let data = try JSONEncoder().encode(value)
            #expect(try JSONDecoder().decode(Prescription.self, from: data) == value)
        }
        let text = String(decoding: try JSONEncoder().encode(rx), as: UTF8.self)
        #expect(
            text.contains("\"contactLensType\":\"ortho-k\"") && text.contains("\"addDesignation\":\"MED\"")
                && text.contains("\"dominance\":\"non-dominant\""))
        #expect(String(decoding: try JSONEncoder().encode(glasses), as: UTF8.self).contains("\"balance\":true"))
        // A record written before these fields existed (rxvault 0.3.0's shape) reads with them absent.
        let old =
            #"{"kind":"contacts","patient":{"name":"A"},"prescriber":{"name":"D"},"issued":"2026-03-01","expires":"2027-03-01","right":{"sphere":-3,"baseCurve":8.6,"diameter":14.2,"brand":"X"}}"#
        let decoded = try JSONDecoder().decode(Prescription.self, from: Data(old.utf8))
        #expect(
            decoded.contactLensType == nil && decoded.right?.addDesignation == nil && decoded.right?.dominance == nil
                && decoded.right?.balance == false)
        // An unknown designation or dominance is refused, not dropped.
        let bad = old.replacingOccurrences(of: "\"brand\":\"X\"", with: "\"brand\":\"X\",\"dominance\":\"left\"")
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(Prescription.self, from: Data(bad.utf8)) }
    }
}
