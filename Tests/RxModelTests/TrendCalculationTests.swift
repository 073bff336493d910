import RxModel
import Testing

/// `Trend`: the numbers `rxvault trend` prints and draws, against values worked out by hand
/// (the arithmetic is in the comments).
@Suite struct TrendCalculationTests {
    static func lens(_ sphere: String, _ cylinder: String? = nil, x axis: Int? = nil, vertex: String? = nil)
        -> LensSpecification
    {
        LensSpecification(
            sphere: h(sphere), cylinder: cylinder.map { h($0) }, axis: axis, vertexDistance: vertex.map { h($0) })
    }

    static func glasses(_ issued: String, right: LensSpecification?, left: LensSpecification?) -> Prescription {
        Fixture.glasses(right: right, left: left, issued: date(issued), expires: nil)
    }

    static func contacts(_ issued: String, right: LensSpecification?, left: LensSpecification?) -> Prescription {
        Fixture.contacts(right: right, left: left, issued: date(issued), expires: nil)
    }

    static func close(_ a: Double?, _ b: Double, within: Double = 1e-9) -> Bool {
        a.map { abs($0 - b) < within } ?? false
    }

    @Test func aChildsSeriesHasTheHandComputedValuesRatesAndFit() throws {
        // 2014-03-01, 2018-03-01 and 2022-03-01 are 1461 days apart (4 x 365 + one 29 February):
        // exactly 4.00 years of 365.25 days each.
        let trend = Trend([
            (
                "c" + String(repeating: "0", count: 31),
                Self.glasses("2022-03-01", right: Self.lens("-2.75", "-0.50", x: 180), left: nil)
            ),
            (
                "a" + String(repeating: "0", count: 31),
                Self.glasses("2014-03-01", right: Self.lens("-0.50"), left: Self.lens("-1.00", "+0.50", x: 90))
            ),
            (
                "b" + String(repeating: "0", count: 31),
                Self.glasses("2018-03-01", right: Self.lens("-1.75", "-0.50", x: 180), left: Self.lens("-1.25"))
            )
        ])
        let od = try #require(trend.series(.right))
        // SE = S + C/2: -0.50; -1.75 - 0.25 = -2.00; -2.75 - 0.25 = -3.00.
        #expect(od.points.map(\.sphericalEquivalent) == [-0.5, -2.0, -3.0])
        #expect(od.points.map(\.issued.description) == ["2014-03-01", "2018-03-01", "2022-03-01"], "oldest first")
        #expect(od.points.map(\.cylinder) == [0, -0.5, -0.5])
        #expect(od.points.map(\.change) == [nil, -1.5, -1.0])
        #expect(od.points.map(\.days) == [nil, 1461, 1461])
        // -1.50 over 4 years = -0.375 D/yr; -1.00 over 4 years = -0.25 D/yr.
        #expect(Self.close(od.points[1].ratePerYear, -0.375) && Self.close(od.points[2].ratePerYear, -0.25))
        // Least squares over t = 0, 4, 8 years, SE = -0.50, -2.00, -3.00: mean t 4, mean SE -11/6;
        // sum (t - 4)(SE + 11/6) = -4 x 4/3 + 0 + 4 x -7/6 = -10; sum (t - 4)^2 = 32; slope -10/32 = -0.3125.
        #expect(Self.close(od.ratePerYear, -0.3125))
        // Intercept: -11/6 + 0.3125 x 4 = -0.58333...
        #expect(Self.close(od.fit?.value(on: date("2014-03-01")), -11.0 / 6 + 1.25))
        #expect(od.rateSummary == "-0.313 D/yr (least squares over 3 prescriptions, 2014-03-01 to 2022-03-01)")

        // OS is written in plus-cylinder form: -1.00 +0.50 x90 is SE -0.75 and cylinder -0.50 in
        // minus form; the 2022 prescription has no left eye, so OS has two points.
        let os = try #require(trend.series(.left))
        #expect(os.points.map(\.sphericalEquivalent) == [-0.75, -1.25])
        #expect(os.points.map(\.cylinder) == [-0.5, 0])
        // -0.50 over 4 years: -0.125 D/yr, and two points' fit is the same line.
        #expect(Self.close(os.points[1].ratePerYear, -0.125) && Self.close(os.ratePerYear, -0.125))
        #expect(trend.prescriptions == ["a", "b", "c"].map { $0 + String(repeating: "0", count: 31) })
        #expect(trend.dateRange == date("2014-03-01")...date("2022-03-01"))
    }

    @Test func aLeapYearCountsItsExtraDay() throws {
        // 2019-09-01 to 2020-09-01 is 366 days: -0.50 x 365.25 / 366 = -0.49898 D/yr, printed -0.499.
        let trend = Trend([
            ("1", Self.glasses("2019-09-01", right: Self.lens("-1.00"), left: nil)),
            ("2", Self.glasses("2020-09-01", right: Self.lens("-1.50"), left: nil))
        ])
        let point = try #require(trend.series(.right)?.points.last)
        #expect(point.days == 366)
        #expect(Self.close(point.ratePerYear, -0.5 * 365.25 / 366))
        #expect(point.ratePerYear.map(Trend.text) == "-0.499")
    }

    @Test func contactsAreComparedAtTheSpectaclePlane() throws {
        // No glasses prescription gives a vertex distance: 12 mm assumed. Each meridian from the
        // cornea to the spectacle plane, F = Fc / (1 + d Fc):
        //   -5.00 / (1 + 0.012 x -5.00) = -5.00 / 0.940 = -5.319149
        //   -6.00 / (1 + 0.012 x -6.00) = -6.00 / 0.928 = -6.465517
        // SE = (-5.319149 - 6.465517) / 2 = -5.892333; cylinder = -(6.465517 - 5.319149) = -1.146368.
        let alone = Trend([("1", Self.contacts("2021-01-01", right: Self.lens("-5.00", "-1.00", x: 180), left: nil))])
        let point = try #require(alone.series(.right)?.points.first)
        #expect(point.kind == .contacts)
        #expect(Self.close(point.sphericalEquivalent, -5.892333, within: 1e-6))
        #expect(Self.close(point.cylinder, -1.146368, within: 1e-6))
        #expect(point.vertexDistance == h("12") && point.vertexDistanceAssumed)
        #expect(Trend.text(point.sphericalEquivalent) == "-5.892" && Trend.text(point.cylinder) == "-1.146")

        // The glasses of 2020-01-01 (366 days before, vertex 14) are nearer than those of
        // 2023-01-01 (730 days after, vertex 10): -5.00 / (1 - 0.014 x 5) = -5.00 / 0.93 = -5.376344.
        let withGlasses = Trend([
            ("1", Self.contacts("2021-01-01", right: Self.lens("-5.00"), left: nil)),
            ("2", Self.glasses("2020-01-01", right: Self.lens("-5.25", vertex: "14"), left: nil)),
            ("3", Self.glasses("2023-01-01", right: Self.lens("-5.50", vertex: "10"), left: nil))
        ])
        let contact = try #require(withGlasses.series(.right)?.points.first { $0.kind == .contacts })
        #expect(contact.vertexDistance == h("14") && !contact.vertexDistanceAssumed)
        #expect(Self.close(contact.sphericalEquivalent, -5.376344, within: 1e-6))
        // Glasses are not converted, and say nothing about a vertex distance.
        let glasses = try #require(withGlasses.series(.right)?.points.first)
        #expect(glasses.sphericalEquivalent == -5.25 && glasses.vertexDistance == nil)
    }

    @Test func theSameDayHasAChangeButNoRate() throws {
        // Glasses -3.00 and contacts -3.00 (at 12 mm: -3.00 / 0.964 = -3.112033) issued together.
        let trend = Trend([
            ("2", Self.contacts("2024-05-02", right: Self.lens("-3.00"), left: nil)),
            ("1", Self.glasses("2024-05-02", right: Self.lens("-3.00"), left: nil))
        ])
        let series = try #require(trend.series(.right))
        #expect(series.points.map(\.kind) == [.glasses, .contacts], "glasses first on the same day")
        #expect(series.points[1].days == 0 && series.points[1].ratePerYear == nil)
        #expect(Self.close(series.points[1].change, -3.0 / 0.964 + 3, within: 1e-9))
        #expect(series.fit == nil && series.ratePerYear == nil)
        #expect(series.rateSummary == "every prescription on one day: no rate yet")
    }

    @Test func oneEyeOnePointBalanceLensesAndEnteredInError() throws {
        var mistaken = Self.glasses("2022-01-01", right: Self.lens("-9.00"), left: Self.lens("-9.00"))
        mistaken.fhir = KeptFHIR(resource: ["status": .string("entered-in-error")])
        let trend = Trend([
            ("1", Self.glasses("2020-01-01", right: Self.lens("+1.25"), left: .balanceLens)),
            ("2", mistaken)
        ])
        #expect(trend.series.map(\.eye) == [.right], "the left eye has only a balance lens")
        let od = try #require(trend.series(.right))
        #expect(od.points.count == 1 && od.points[0].change == nil && od.points[0].ratePerYear == nil && od.fit == nil)
        #expect(od.rateSummary == "one prescription: no rate yet")
        #expect(trend.skipped.map(\.prescription) == ["1", "2"])
        #expect(trend.skipped.map(\.eye) == [.left, nil])
        #expect(
            trend.skipped[0].reason.contains("balance lens") && trend.skipped[1].reason.contains("entered-in-error"))
        #expect(trend.prescriptions == ["1"])

        // Asking for one eye leaves the other out entirely.
        let left = Trend(
            [("1", Self.glasses("2020-01-01", right: Self.lens("-1.00"), left: Self.lens("-2.00")))], eyes: [.left])
        #expect(left.series.map(\.eye) == [.left])
        #expect(Trend([]).isEmpty && Trend([]).dateRange == nil)
    }

    @Test(arguments: [
        (-2.625, "-2.625"), (0.5, "+0.50"), (-0.0004, "0.00"), (0, "0.00"), (-5.3191489, "-5.319"),
        (-0.4989754, "-0.499"), (-0.3125, "-0.313"), (1.0, "+1.00"), (-12.1, "-12.10")
    ])
    func valuesPrintToTheThousandth(value: Double, text: String) {
        #expect(Trend.text(value) == text)
    }
}
