import RxModel
import Testing

/// Checks that setting one lens field to each of `good` is accepted and to each of `bad` is refused
/// with exactly one violation naming `eye`, `field`, the value as `valueText` prints it and `accepted`.
private func expectEdges(
    kind: PrescriptionKind = .glasses, eye: Eye, field: String, accepted expectedAccepted: String,
    good: [String], bad: [String], valueText: (Hundredths) -> String = \.signedPower,
    set: (inout LensSpecification, Hundredths) -> Void,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    let base = kind == .glasses ? Fixture.glasses() : Fixture.contacts()
    for text in good {
        var rx = base
        set(&rx[eye]!, h(text))
        let found = violations(of: rx)
        #expect(
            found.isEmpty, "\(eye.label) \(field) \(text) should be accepted: \(found)", sourceLocation: sourceLocation)
    }
    for text in bad {
        var rx = base
        let value = h(text)
        set(&rx[eye]!, value)
        let expected = RuleViolation(eye: eye, field: field, value: valueText(value), accepted: expectedAccepted)
        let found = violations(of: rx)
        #expect(found == [expected], "\(eye.label) \(field) \(text)", sourceLocation: sourceLocation)
        // The message names the eye, the field, the value and the accepted range.
        let message = found.first?.description ?? ""
        #expect(
            message == "\(eye.label) \(field) \(valueText(value)): \(expectedAccepted)", sourceLocation: sourceLocation)
    }
}

@Suite struct PrescriptionRulesRangeTests {
    @Test func fixturesAreValid() throws {
        let glasses = try #require(accepted(Fixture.glasses()))
        #expect(glasses.prescription == Fixture.glasses())
        #expect(glasses.advisories.isEmpty)
        let contacts = try #require(accepted(Fixture.contacts()))
        #expect(contacts.prescription == Fixture.contacts())
        #expect(contacts.advisories.isEmpty)
    }

    @Test(arguments: Eye.allCases)
    func sphere(eye: Eye) {
        expectEdges(
            eye: eye, field: "sphere", accepted: "accepted -30.00 to +30.00 in 0.25 steps",
            good: ["-30.00", "+30.00", "0", "-0.25", "+0.25", "-29.75", "+29.75"],
            bad: ["-30.25", "+30.25", "-30.01", "+30.01", "-2.10", "+0.01", "-0.13", "+1.12"],
            set: { $0.sphere = $1 })
    }

    @Test(arguments: Eye.allCases)
    func sphereOnContacts(eye: Eye) {
        expectEdges(
            kind: .contacts, eye: eye, field: "sphere", accepted: "accepted -30.00 to +30.00 in 0.25 steps",
            good: ["-30.00", "+30.00"], bad: ["-30.25", "+30.25", "-3.05"], set: { $0.sphere = $1 })
    }

    @Test(arguments: Eye.allCases)
    func cylinder(eye: Eye) {
        expectEdges(
            eye: eye, field: "cylinder", accepted: "accepted -10.00 to +10.00 in 0.25 steps",
            good: ["-10.00", "+10.00", "-0.25", "+0.25", "-9.75"],
            bad: ["-10.25", "+10.25", "-10.01", "+10.01", "-0.80", "+0.10", "-0.01"],
            set: {
                $0.cylinder = $1
                $0.axis = 90
            })
    }

    @Test(arguments: Eye.allCases)
    func add(eye: Eye) {
        expectEdges(
            eye: eye, field: "add", accepted: "accepted +0.25 to +4.00 in 0.25 steps",
            good: ["+0.25", "+4.00", "+2.00"],
            bad: ["+4.25", "+4.01", "+0.10", "+2.10", "+0.24"],
            set: { $0.add = $1 })
        // Zero and negative adds get the same range plus the reason.
        expectEdges(
            eye: eye, field: "add", accepted: "accepted +0.25 to +4.00 in 0.25 steps (an add is always positive)",
            good: [], bad: ["0", "-0.25", "-1.00", "-2.10"],
            set: { $0.add = $1 })
    }

    @Test func addOnContactsIsAccepted() {
        var rx = Fixture.contacts()
        rx.right!.add = h("+1.50")
        rx.left!.add = h("+1.50")
        #expect(violations(of: rx).isEmpty)
        rx.right!.add = h("+4.25")
        #expect(
            violations(of: rx) == [
                RuleViolation(
                    eye: .right, field: "add", value: "+4.25",
                    accepted: "accepted +0.25 to +4.00 in 0.25 steps")
            ])
    }

    @Test(arguments: Eye.allCases)
    func axisRange(eye: Eye) throws {
        for axis in [1, 90, 180] {
            var rx = Fixture.glasses()
            rx[eye] = LensSpecification(sphere: h("-1.00"), cylinder: h("-0.50"), axis: axis)
            let checked = try #require(accepted(rx))
            #expect(checked.prescription[eye]?.axis == axis)
            #expect(checked.advisories.isEmpty)
        }
        for axis in [181, 270, 360, -1, -180] {
            var rx = Fixture.glasses()
            rx[eye] = LensSpecification(sphere: h("-1.00"), cylinder: h("-0.50"), axis: axis)
            let expected = RuleViolation(
                eye: eye, field: "axis", value: String(axis), accepted: "accepted whole degrees 1 to 180")
            #expect(violations(of: rx) == [expected])
            #expect(expected.description == "\(eye.label) axis \(axis): accepted whole degrees 1 to 180")
        }
    }

    @Test(arguments: Eye.allCases)
    func axisZeroIsReadAs180WithAnAdvisory(eye: Eye) throws {
        var rx = Fixture.glasses()
        rx[eye] = LensSpecification(sphere: h("-1.00"), cylinder: h("-0.50"), axis: 0)
        let checked = try #require(accepted(rx))
        #expect(checked.prescription[eye]?.axis == 180)
        #expect(checked.advisories == ["\(eye.label) axis 0 read as 180"])
    }

    @Test(arguments: Eye.allCases)
    func axisIsRequiredWithACylinder(eye: Eye) {
        var rx = Fixture.glasses()
        rx[eye] = LensSpecification(sphere: h("-1.00"), cylinder: h("-0.50"))
        let expected = RuleViolation(
            eye: eye, field: "axis", value: nil,
            accepted: "required with a cylinder (whole degrees 1 to 180, e.g. x180)")
        #expect(violations(of: rx) == [expected])
        #expect(
            expected.description == "\(eye.label) axis: required with a cylinder (whole degrees 1 to 180, e.g. x180)")
    }

    @Test(arguments: Eye.allCases)
    func axisIsForbiddenWithoutACylinder(eye: Eye) {
        var rx = Fixture.glasses()
        rx[eye] = LensSpecification(sphere: h("-1.00"), axis: 90)
        #expect(
            violations(of: rx) == [
                RuleViolation(
                    eye: eye, field: "axis", value: "90",
                    accepted: "only allowed with a non-zero cylinder")
            ])
        // A zero cylinder written with the axis is a spherical lens: stored as one, with a
        // warning (LensKindRulesTests).
        rx[eye] = LensSpecification(sphere: h("-1.00"), cylinder: .zero, axis: 90)
        #expect(violations(of: rx).isEmpty)
    }

    @Test(arguments: Eye.allCases)
    func zeroCylinderIsDropped(eye: Eye) throws {
        var rx = Fixture.glasses()
        rx[eye] = LensSpecification(sphere: h("-1.00"), cylinder: .zero)
        let checked = try #require(accepted(rx))
        #expect(checked.prescription[eye] == LensSpecification(sphere: h("-1.00")))
        #expect(checked.prescription[eye]?.cylinder == nil)
        #expect(checked.advisories.isEmpty)
    }

    @Test(arguments: Eye.allCases)
    func prismAmount(eye: Eye) {
        let accepted = "accepted 0.25 to 20 prism dioptres in 0.25 steps"
        expectEdges(
            eye: eye, field: "prism", accepted: accepted, good: ["0.25", "20", "1.5", "0.75"],
            bad: ["0.24", "20.01", "0", "-1", "1.37", "0.33"],
            valueText: \.short,
            set: { $0.prism = .rectangular(vertical: nil, horizontal: .init(amount: $1, base: .in)) })
        expectEdges(
            eye: eye, field: "prism", accepted: accepted, good: ["0.25", "20"], bad: ["0.24", "20.01", "0.33"],
            valueText: \.short,
            set: { $0.prism = .rectangular(vertical: .init(amount: $1, base: .down), horizontal: nil) })
        // A polar amount is written, so stepped; the parts derived from it (2 @ 45 is 1.41 BU
        // 1.41 BI) are never stored, so never checked.
        expectEdges(
            eye: eye, field: "prism", accepted: accepted, good: ["0.25", "20", "2"], bad: ["0.24", "20.01", "1.33"],
            valueText: \.short, set: { $0.prism = .polar(amount: $1, angle: 45) })
    }

    @Test func bothPrismPartsAreChecked() {
        var rx = Fixture.glasses()
        rx.left!.prism = .rectangular(
            vertical: .init(amount: h("20.5"), base: .up), horizontal: .init(amount: h("0.1"), base: .out))
        #expect(
            violations(of: rx) == [
                RuleViolation(
                    eye: .left, field: "prism", value: "20.5",
                    accepted: "accepted 0.25 to 20 prism dioptres in 0.25 steps"),
                RuleViolation(
                    eye: .left, field: "prism", value: "0.1",
                    accepted: "accepted 0.25 to 20 prism dioptres in 0.25 steps")
            ])
        rx.left!.prism = .rectangular(
            vertical: .init(amount: h("20"), base: .up), horizontal: .init(amount: h("0.25"), base: .out))
        #expect(violations(of: rx).isEmpty)
    }

    @Test func prismWithoutAnyPartIsRefused() {
        var rx = Fixture.glasses()
        rx.right!.prism = .rectangular(vertical: nil, horizontal: nil)
        #expect(
            violations(of: rx) == [
                RuleViolation(eye: .right, field: "prism", value: nil, accepted: "give an amount and a base")
            ])
    }

    @Test(arguments: Eye.allCases)
    func prismBaseAngle(eye: Eye) {
        for angle in [0, 90, 180, 270, 359, 360] {
            var rx = Fixture.glasses()
            rx[eye]!.prism = .polar(amount: h("2"), angle: angle)
            #expect(violations(of: rx).isEmpty, "angle \(angle)")
        }
        for angle in [361, -1, 720] {
            var rx = Fixture.glasses()
            rx[eye]!.prism = .polar(amount: h("2"), angle: angle)
            let expected = RuleViolation(
                eye: eye, field: "prism base angle", value: String(angle), accepted: "accepted whole degrees 0 to 360")
            #expect(violations(of: rx) == [expected])
            #expect(expected.description == "\(eye.label) prism base angle \(angle): accepted whole degrees 0 to 360")
        }
    }

    @Test(arguments: Eye.allCases)
    func vertexDistance(eye: Eye) {
        expectEdges(
            eye: eye, field: "vertex distance", accepted: "accepted 5 to 25 mm",
            good: ["5", "25", "12", "13.5"], bad: ["4.99", "4.5", "25.01", "25.5", "0"],
            valueText: \.short, set: { $0.vertexDistance = $1 })
    }

    @Test(arguments: Eye.allCases)
    func monocularFarPD(eye: Eye) {
        expectEdges(
            eye: eye, field: "PD", accepted: "accepted 15 to 45 mm",
            good: ["15", "45", "32", "31.5"], bad: ["14.99", "14.5", "45.01", "45.5"],
            valueText: \.short, set: { $0.farPD = $1 })
    }

    @Test(arguments: Eye.allCases)
    func monocularNearPD(eye: Eye) {
        // Without a far PD only the range applies.
        expectEdges(
            eye: eye, field: "near PD", accepted: "accepted 15 to 45 mm",
            good: ["15", "45"], bad: ["14.5", "45.5"],
            valueText: \.short, set: { $0.nearPD = $1 })
        // With far 40: near 20 and 39.5 are fine.
        expectEdges(
            eye: eye, field: "near PD", accepted: "must be less than the far PD 40 mm",
            good: ["20", "39.5", "39.99"], bad: ["40"],
            valueText: \.short,
            set: {
                $0.farPD = h("40")
                $0.nearPD = $1
            })
    }

    @Test(arguments: Eye.allCases)
    func monocularNearPDMustBeBelowFar(eye: Eye) {
        for near in ["32", "32.5"] {
            var rx = Fixture.glasses()
            rx[eye]!.farPD = h("32")
            rx[eye]!.nearPD = h(near)
            let expected = RuleViolation(
                eye: eye, field: "near PD", value: near, accepted: "must be less than the far PD 32 mm")
            #expect(violations(of: rx) == [expected])
            #expect(expected.description == "\(eye.label) near PD \(near): must be less than the far PD 32 mm")
        }
        var rx = Fixture.glasses()
        rx[eye]!.farPD = h("32")
        rx[eye]!.nearPD = h("31.5")
        #expect(violations(of: rx).isEmpty)
    }

    @Test func binocularPD() {
        for (far, near) in [
            ("30", nil), ("38", nil), ("85", nil), ("63", "60"), ("80", "40"), ("63", "62.99"), ("41", "40"),
            ("31", "30")
        ] as [(String, String?)] {
            let rx = Fixture.glasses(pd: PupillaryDistance(far: h(far), near: near.map { h($0) }))
            #expect(violations(of: rx).isEmpty, "PD \(far)/\(near ?? "-")")
        }
        let range = "accepted 30 to 85 mm for a binocular PD"
        for far in ["29.99", "29.5", "85.01", "85.5", "0"] {
            let rx = Fixture.glasses(pd: PupillaryDistance(far: h(far)))
            let expected = RuleViolation(eye: nil, field: "PD", value: h(far).short, accepted: range)
            #expect(violations(of: rx) == [expected])
            #expect(expected.description == "PD \(h(far).short): \(range)")
        }
        for near in ["29.5", "85.5"] {
            let rx = Fixture.glasses(pd: PupillaryDistance(far: h("63"), near: h(near)))
            #expect(violations(of: rx) == [RuleViolation(eye: nil, field: "near PD", value: near, accepted: range)])
        }
        for near in ["63", "64"] {
            let rx = Fixture.glasses(pd: PupillaryDistance(far: h("63"), near: h(near)))
            #expect(
                violations(of: rx) == [
                    RuleViolation(
                        eye: nil, field: "near PD", value: near, accepted: "must be less than the far PD 63 mm")
                ])
        }
    }

    @Test func binocularAndMonocularPDTogetherAreRefused() {
        var rx = Fixture.glasses(pd: PupillaryDistance(far: h("63")))
        rx.left!.farPD = h("31.5")
        #expect(
            violations(of: rx) == [
                RuleViolation(
                    eye: nil, field: "PD", value: nil,
                    accepted: "give either one binocular PD (--pd) or one per eye (--pd-od/--pd-os), not both")
            ])
    }

    @Test(arguments: Eye.allCases)
    func baseCurve(eye: Eye) {
        expectEdges(
            kind: .contacts, eye: eye, field: "base curve", accepted: "accepted 5.0 to 10.5 mm",
            good: ["5.00", "10.50", "8.6", "8.65", "6.5"], bad: ["4.99", "4.9", "10.51", "10.6", "0"],
            valueText: \.short, set: { $0.baseCurve = $1 })
    }

    @Test(arguments: Eye.allCases)
    func diameter(eye: Eye) {
        expectEdges(
            kind: .contacts, eye: eye, field: "diameter", accepted: "accepted 7.0 to 25.0 mm",
            good: ["7.0", "25.0", "14.2", "18"], bad: ["6.99", "6.9", "25.01", "25.1"],
            valueText: \.short, set: { $0.diameter = $1 })
    }

    @Test func contactsMayOmitBaseCurveAndDiameter() {
        var rx = Fixture.contacts()
        rx.right!.baseCurve = nil
        rx.right!.diameter = nil
        #expect(violations(of: rx).isEmpty)
    }
}

@Suite struct PrescriptionRulesStructureTests {
    @Test func atLeastOneEye() {
        let rx = Fixture.glasses(right: nil, left: nil)
        let expected = RuleViolation(
            eye: nil, field: "lens", value: nil, accepted: "give at least one eye (--od and/or --os)")
        #expect(violations(of: rx) == [expected])
        #expect(expected.description == "lens: give at least one eye (--od and/or --os)")
        #expect(violations(of: Fixture.contacts(right: nil, left: nil)) == [expected])
    }

    @Test func eitherEyeAloneIsAccepted() throws {
        let rightOnly = try #require(accepted(Fixture.glasses(left: nil)))
        #expect(rightOnly.prescription.left == nil && rightOnly.prescription.right == Fixture.glassesRight)
        let leftOnly = try #require(accepted(Fixture.glasses(right: nil)))
        #expect(leftOnly.prescription.right == nil && leftOnly.prescription.left == Fixture.glassesLeft)
        #expect(accepted(Fixture.contacts(left: nil)) != nil)
        #expect(accepted(Fixture.contacts(right: nil)) != nil)
    }

    @Test func differingAddGivesAnAdvisory() throws {
        var rx = Fixture.glasses()
        rx.right!.add = h("+2.00")
        rx.left!.add = h("+2.25")
        let checked = try #require(accepted(rx))
        #expect(checked.advisories == ["OD add +2.00 and OS add +2.25 differ: check the prescription"])
        #expect(checked.prescription == rx)

        rx.left!.add = h("+2.00")
        #expect(try #require(accepted(rx)).advisories.isEmpty)
        rx.left!.add = nil
        #expect(
            try #require(accepted(rx)).advisories == [
                "OD has add +2.00 and OS has none: an add is usually on both eyes; check the prescription"
            ])
    }

    @Test func severalViolationsAreReportedTogether() {
        var rx = Fixture.contacts(issued: date("2026-03-20"), expires: date("2026-03-20"))
        rx.examDate = nil
        rx.right!.sphere = h("-31.00")
        rx.right!.cylinder = h("-0.75")
        rx.right!.prism = .rectangular(vertical: nil, horizontal: .init(amount: h("1"), base: .in))
        rx.left!.axis = nil
        rx.left!.brand = "  "
        rx.left!.diameter = h("26")
        let found = violations(of: rx)
        let expected = [
            RuleViolation(
                eye: nil, field: "issue date", value: "2026-03-20",
                accepted: "must not be in the future (today is 2026-03-14)"),
            RuleViolation(
                eye: nil, field: "expiry date", value: "2026-03-20", accepted: "must be after the issue date 2026-03-20"
            ),
            RuleViolation(
                eye: .right, field: "sphere", value: "-31.00", accepted: "accepted -30.00 to +30.00 in 0.25 steps"),
            RuleViolation(
                eye: .right, field: "axis", value: nil,
                accepted: "required with a cylinder (whole degrees 1 to 180, e.g. x180)"),
            RuleViolation(eye: .right, field: "prism", value: nil, accepted: "applies to glasses only"),
            RuleViolation(
                eye: .left, field: "axis", value: nil,
                accepted: "required with a cylinder (whole degrees 1 to 180, e.g. x180)"),
            RuleViolation(eye: .left, field: "diameter", value: "26", accepted: "accepted 7.0 to 25.0 mm"),
            RuleViolation(
                eye: .left, field: "brand", value: nil, accepted: "required for contact lenses (--brand, or --os-brand)"
            )
        ]
        #expect(Set(found) == Set(expected))
        #expect(found.count == expected.count)

        // The thrown error lists them all in its description.
        do {
            _ = try PrescriptionRules.check(rx, today: today)
            Issue.record("expected a refusal")
        } catch {
            #expect(error.description == found.map(\.description).joined(separator: "; "))
            #expect(error.description.contains("OD sphere -31.00: accepted -30.00 to +30.00 in 0.25 steps"))
            #expect(error.description.contains("OS diameter 26: accepted 7.0 to 25.0 mm"))
        }
    }
}

@Suite struct PrescriptionRulesKindTests {
    @Test(arguments: Eye.allCases)
    func contactFieldsOnGlassesAreRefused(eye: Eye) {
        var rx = Fixture.glasses()
        rx[eye]!.baseCurve = h("8.6")
        rx[eye]!.diameter = h("14.2")
        rx[eye]!.brand = "Acuvue"
        #expect(
            Set(violations(of: rx))
                == Set(
                    ["base curve", "diameter", "brand"].map {
                        RuleViolation(eye: eye, field: $0, value: nil, accepted: "applies to contact lenses only")
                    }))
        for field in ["base curve", "diameter", "brand"] {
            var single = Fixture.glasses()
            switch field {
            case "base curve": single[eye]!.baseCurve = h("8.6")
            case "diameter": single[eye]!.diameter = h("14.2")
            default: single[eye]!.brand = "Acuvue"
            }
            #expect(
                violations(of: single) == [
                    RuleViolation(eye: eye, field: field, value: nil, accepted: "applies to contact lenses only")
                ])
        }
    }

    @Test func blankBrandOnGlassesIsDroppedNotRefused() throws {
        var rx = Fixture.glasses()
        rx.right!.brand = "   "
        let checked = try #require(accepted(rx))
        #expect(checked.prescription.right?.brand == nil)
    }

    @Test(arguments: Eye.allCases)
    func glassesFieldsOnContactsAreRefused(eye: Eye) {
        let cases: [(String, (inout LensSpecification) -> Void)] = [
            ("prism", { $0.prism = .rectangular(vertical: .init(amount: h("1"), base: .up), horizontal: nil) }),
            ("prism", { $0.prism = .polar(amount: h("1"), angle: 90) }),
            ("vertex distance", { $0.vertexDistance = h("12") }),
            ("PD", { $0.farPD = h("32") }),
            ("PD", { $0.nearPD = h("30") })
        ]
        for (field, set) in cases {
            var rx = Fixture.contacts()
            set(&rx[eye]!)
            #expect(
                violations(of: rx) == [
                    RuleViolation(eye: eye, field: field, value: nil, accepted: "applies to glasses only")
                ],
                "\(field)")
        }
    }

    @Test func binocularPDOnContactsIsRefused() {
        var rx = Fixture.contacts()
        rx.pupillaryDistance = PupillaryDistance(far: h("63"))
        let expected = RuleViolation(eye: nil, field: "PD", value: nil, accepted: "applies to glasses only")
        #expect(violations(of: rx) == [expected])
        #expect(expected.description == "PD: applies to glasses only")
    }

    @Test(arguments: Eye.allCases)
    func brandIsRequiredForEachContactsEye(eye: Eye) {
        for brand: String? in [nil, "", "  \t "] {
            var rx = Fixture.contacts()
            rx[eye]!.brand = brand
            let flag = eye == .right ? "--od-brand" : "--os-brand"
            let expected = RuleViolation(
                eye: eye, field: "brand", value: nil, accepted: "required for contact lenses (--brand, or \(flag))")
            #expect(violations(of: rx) == [expected])
            #expect(expected.description.hasPrefix("\(eye.label) brand: required"))
        }
    }

    @Test func brandsMayDifferAndAreTrimmed() throws {
        var rx = Fixture.contacts()
        rx.right!.brand = "  Biofinity \n"
        rx.left!.brand = "Acuvue Oasys"
        let checked = try #require(accepted(rx))
        #expect(checked.prescription.right?.brand == "Biofinity")
        #expect(checked.prescription.left?.brand == "Acuvue Oasys")
    }

    @Test func brandLength() {
        var rx = Fixture.contacts()
        rx.left!.brand = String(repeating: "b", count: PrescriptionRules.maxTextLength)
        #expect(violations(of: rx).isEmpty)
        rx.left!.brand = String(repeating: "b", count: PrescriptionRules.maxTextLength + 1)
        #expect(
            violations(of: rx) == [
                RuleViolation(eye: .left, field: "brand", value: nil, accepted: "at most 200 characters")
            ])
    }
}
