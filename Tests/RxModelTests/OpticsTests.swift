import RxModel
import Testing

private func spec(_ sphere: String, _ cylinder: String? = nil, x axis: Int? = nil) -> LensSpecification {
    LensSpecification(sphere: h(sphere), cylinder: cylinder.map { h($0) }, axis: axis)
}

@Suite struct TranspositionTests {
    @Test func minusToPlusAndBack() {
        let minus = spec("-2.00", "-1.00", x: 180)
        let plus = spec("-3.00", "+1.00", x: 90)
        #expect(minus.transposed(to: .plus) == plus)
        #expect(plus.transposed(to: .minus) == minus)
    }

    @Test(arguments: [
        (90, 180), (180, 90), (45, 135), (135, 45), (1, 91), (91, 1), (89, 179), (179, 89), (170, 80), (10, 100)
    ])
    func axisStaysIn1To180(axis: Int, transposedAxis: Int) {
        let lens = spec("+1.25", "-0.50", x: axis)
        let transposed = lens.transposed(to: .plus)
        #expect(transposed.axis == transposedAxis)
        #expect(transposed.sphere == h("+0.75"))
        #expect(transposed.cylinder == h("+0.50"))
    }

    @Test func alreadyInTheRequestedFormIsUnchanged() {
        let minus = spec("-2.00", "-1.00", x: 180)
        let plus = spec("-3.00", "+1.00", x: 90)
        #expect(minus.transposed(to: .minus) == minus)
        #expect(plus.transposed(to: .plus) == plus)
    }

    @Test func lensWithoutCylinderIsUnchanged() {
        for lens in [spec("-2.00"), spec("0"), spec("+4.25", "0"), spec("-1.00", "0", x: 90)] {
            for form in CylinderForm.allCases {
                #expect(lens.transposed(to: form) == lens)
            }
        }
    }

    @Test func otherFieldsAreKept() {
        var lens = spec("-2.00", "-1.00", x: 30)
        lens.add = h("+2.00")
        lens.prism = .polar(amount: h("1"), angle: 90)
        lens.vertexDistance = h("12")
        lens.farPD = h("32")
        let plus = lens.transposed(to: .plus)
        #expect(
            plus.add == lens.add && plus.prism == lens.prism && plus.vertexDistance == lens.vertexDistance
                && plus.farPD == lens.farPD)
        #expect(plus.sphere == h("-3.00") && plus.cylinder == h("+1.00") && plus.axis == 120)
    }

    @Test func doubleTranspositionIsTheIdentityAndKeepsTheSphericalEquivalent() {
        var generator = SeededGenerator(seed: 7)
        for _ in 0..<3000 {
            let lens = generator.validLens(for: .glasses)
            let minus = lens.transposed(to: .minus)
            let plus = lens.transposed(to: .plus)
            // Exactly one of the two is a real transposition (or neither, without cylinder); going back restores the lens.
            #expect(minus.transposed(to: .plus).transposed(to: .minus) == minus)
            if lens.hasCylinder {
                let isMinus = lens.cylinder!.raw < 0
                #expect((isMinus ? plus : minus).transposed(to: isMinus ? .minus : .plus) == lens)
                #expect((isMinus ? minus : plus) == lens)
                #expect(minus.cylinder!.raw < 0 && plus.cylinder!.raw > 0)
            } else {
                #expect(minus == lens && plus == lens)
            }
            for transposed in [minus, plus] {
                #expect(transposed.sphericalEquivalent == lens.sphericalEquivalent)
                #expect(transposed.sphericalEquivalentText == lens.sphericalEquivalentText)
                if let axis = transposed.axis { #expect((1...180).contains(axis)) }
                // Both principal meridians are the same lens: sphere and sphere + cylinder swap places.
                let a = VertexConversion.meridiansAtCornea(lens, vertexDistance: 12)
                let b = VertexConversion.meridiansAtCornea(transposed, vertexDistance: 12)
                #expect(Set([a.0, a.1].map { ($0 * 1e9).rounded() }) == Set([b.0, b.1].map { ($0 * 1e9).rounded() }))
            }
        }
    }
}

@Suite struct SphericalEquivalentTests {
    @Test(
        arguments: [
            ("-2.25", "-0.75", -2.625, "-2.625"),
            ("-2.00", "-0.50", -2.25, "-2.25"),
            ("0", nil, 0, "0.00"),
            ("-1.50", nil, -1.5, "-1.50"),
            ("+1.00", "+0.50", 1.25, "+1.25"),
            ("+0.25", "-0.75", -0.125, "-0.125"),
            ("+0.25", "-0.50", 0, "0.00"),
            ("-0.25", "-0.50", -0.5, "-0.50"),
            ("+3.00", "-1.25", 2.375, "+2.375"),
            ("-30.00", "-10.00", -35, "-35.00"),
            ("+30.00", "+10.00", 35, "+35.00"),
            ("-2.00", "0", -2, "-2.00"),
            ("0", "-0.25", -0.125, "-0.125")
        ] as [(String, String?, Double, String)])
    func values(sphere: String, cylinder: String?, se: Double, text: String) {
        let lens = spec(sphere, cylinder, x: cylinder == nil ? nil : 90)
        #expect(lens.sphericalEquivalent == se)
        #expect(lens.sphericalEquivalentText == text)
    }

    @Test func textAgreesWithTheValueForEveryQuarterStep() {
        for sphere in stride(from: -3000, through: 3000, by: 25) {
            for cylinder in stride(from: -1000, through: 1000, by: 125) {
                let lens = LensSpecification(
                    sphere: Hundredths(raw: sphere), cylinder: Hundredths(raw: cylinder), axis: 90)
                let text = lens.sphericalEquivalentText
                let expected = (Double(sphere) + Double(cylinder) / 2) / 100
                #expect(lens.sphericalEquivalent == expected)
                #expect(Double(text) == expected, "\(text)")
                // Two decimals, three only on an eighth; a sign unless zero.
                let decimals = text.split(separator: ".").last!.count
                #expect(decimals == ((sphere * 2 + cylinder) % 2 == 0 ? 2 : 3), "\(text)")
                #expect(text.hasPrefix("+") == (expected > 0) && text.hasPrefix("-") == (expected < 0), "\(text)")
            }
        }
    }
}

@Suite struct VertexConversionTests {
    @Test(arguments: [
        (-10.0, 12.0, -8.928_571),
        (10.0, 12.0, 11.363_636),
        (-4.0, 12.0, -3.816_794),
        (6.0, 12.0, 6.465_517),
        (-8.0, 14.0, -7.194_245),
        (0.0, 12.0, 0.0),
        (-2.0, 0.0, -2.0)
    ])
    func powerAtCornea(power: Double, distance: Double, expected: Double) {
        #expect(abs(VertexConversion.powerAtCornea(power, vertexDistance: distance) - expected) < 1e-5)
        #expect(abs(VertexConversion.spectaclePower(expected, vertexDistance: distance) - power) < 1e-5)
    }

    @Test func effectGrowsWithPowerAndDistance() {
        // Minus lenses need less power at the cornea, plus lenses more; a longer vertex exaggerates both.
        #expect(
            VertexConversion.powerAtCornea(-6, vertexDistance: 14)
                > VertexConversion.powerAtCornea(-6, vertexDistance: 10))
        #expect(VertexConversion.powerAtCornea(-6, vertexDistance: 10) > -6)
        #expect(
            VertexConversion.powerAtCornea(6, vertexDistance: 14)
                > VertexConversion.powerAtCornea(6, vertexDistance: 10))
        #expect(VertexConversion.powerAtCornea(6, vertexDistance: 10) > 6)
    }

    @Test func inverseReturnsTheOriginal() {
        for raw in stride(from: -3000, through: 3000, by: 25) {
            for distance in [5.0, 10.0, 12.0, 13.5, 25.0] {
                let power = Double(raw) / 100
                let cornea = VertexConversion.powerAtCornea(power, vertexDistance: distance)
                #expect(abs(VertexConversion.spectaclePower(cornea, vertexDistance: distance) - power) < 1e-9)
                let spectacle = VertexConversion.spectaclePower(power, vertexDistance: distance)
                #expect(abs(VertexConversion.powerAtCornea(spectacle, vertexDistance: distance) - power) < 1e-9)
            }
        }
    }

    @Test func meridiansAtCornea() {
        let (first, second) = VertexConversion.meridiansAtCornea(spec("-10.00", "-2.00", x: 180), vertexDistance: 12)
        #expect(abs(first - -8.928_571) < 1e-5)
        #expect(abs(second - -10.489_510) < 1e-5)
        let (a, b) = VertexConversion.meridiansAtCornea(spec("+5.00"), vertexDistance: 12)
        #expect(abs(a - 5.319_149) < 1e-5)
        #expect(a == b)
    }
}
