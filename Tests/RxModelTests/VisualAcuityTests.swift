import Foundation
import RxModel
import Testing

/// Visual acuity (issue 26): each notation read strictly, kept as written, converted to logMAR.
@Suite struct VisualAcuityTests {
    @Test func notationsConvertToLogMAR() throws {
        let cases: [(String, VisualAcuity.Notation, String)] = [
            ("20/20", .snellenFeet, "0.00"), ("20/40", .snellenFeet, "0.30"), ("20/200", .snellenFeet, "1.00"),
            ("20/10", .snellenFeet, "-0.30"), ("6/6", .snellenMetres, "0.00"), ("6/12", .snellenMetres, "0.30"),
            ("6/7.5", .snellenMetres, "0.10"), ("6/60", .snellenMetres, "1.00"), ("4/4", .snellenMetres, "0.00"),
            ("1.0", .decimal, "0.00"), ("0.5", .decimal, "0.30"), ("0.1", .decimal, "1.00"), ("2.0", .decimal, "-0.30"),
            ("logMAR 0.00", .logMAR, "0.00"), ("LogMAR -0.10", .logMAR, "-0.10"), ("0.30 logMAR", .logMAR, "0.30")
        ]
        for (text, notation, logMAR) in cases {
            let va = try VisualAcuity(parsing: text)
            #expect(va.notation == notation, "\(text)")
            #expect(va.logMARText == logMAR, "\(text): \(va.logMARText)")
            #expect(va.written == text)
        }
        #expect(try VisualAcuity(parsing: "  6 / 6 ").written == "6 / 6")
    }

    @Test func wrongFormsAreRefused() {
        for text in [
            "", "0", "0.00", "-0.10", "6/6-2", "20/20+1", "5/10", "6/0", "6/-6", "CF", "HM", "0,8", "20/8",
            "6/700", "logMAR", "logMAR 0.123", "abc", "1/2/3", "+1.0", "0.001"
        ] {
            #expect(throws: VisualAcuityError.self, "\(text)") { try VisualAcuity(parsing: text) }
        }
    }

    @Test func axialLengthRangeAndDates() throws {
        let today = CalendarDate(iso: "2026-06-15")!
        var m = EyeMeasurement(id: "x", date: today, axialLengthRight: Hundredths(raw: 1500))
        #expect(MeasurementRules.problems(m, today: today, birthDate: nil).isEmpty)
        m.axialLengthLeft = Hundredths(raw: 3501)
        #expect(
            MeasurementRules.problems(m, today: today, birthDate: nil) == [
                "OS axial length 35.01 mm is outside 15.00-35.00 mm"
            ])
        m.axialLengthLeft = nil
        m.date = CalendarDate(iso: "2026-06-16")!
        #expect(MeasurementRules.problems(m, today: today, birthDate: nil).first?.contains("in the future") == true)
        let empty = EyeMeasurement(id: "x", date: today)
        #expect(MeasurementRules.problems(empty, today: today, birthDate: nil).count == 1)
    }

    @Test func axialTrendRate() {
        let a = EyeMeasurement(id: "a", date: CalendarDate(iso: "2024-01-01")!, axialLengthRight: Hundredths(raw: 2350))
        let b = EyeMeasurement(id: "b", date: CalendarDate(iso: "2025-01-01")!, axialLengthRight: Hundredths(raw: 2380))
        let trend = AxialLengthTrend([b, a], birthDate: CalendarDate(iso: "2016-01-01")!)
        let od = trend.series(.right)
        #expect(od?.points.map(\.measurement) == ["a", "b"])
        #expect(abs((od?.ratePerYear ?? 0) - 0.3 * 365.25 / 366) < 1e-9)
        #expect(trend.series(.left) == nil)
        #expect(AxialLengthTrend.rateText(0.3) == "+0.30 mm/yr")
    }
}

/// `VisualAcuityTrend`: a series per acuity slot, in slot order, oldest first; the change between
/// the values as shown; one eye's slots only with one eye; the age from the birth date.
@Suite struct VisualAcuityTrendTests {
    func measurement(_ id: String, _ date: String, _ acuity: [AcuitySlot: String]) throws -> EyeMeasurement {
        var values: [AcuitySlot: VisualAcuity] = [:]
        for (slot, text) in acuity { values[slot] = try VisualAcuity(parsing: text) }
        return EyeMeasurement(id: id, date: CalendarDate(iso: date)!, acuity: values)
    }

    @Test func seriesPerSlotOldestFirstWithTheShownChange() throws {
        // Given newest first: the trend sorts by date. Decimal 0.7 is logMAR 0.155 (shown 0.15),
        // 6/9 is 0.176 (shown 0.18): the change is 0.03, as the shown values subtract, not 0.02.
        let measurements = [
            try measurement("b", "2026-03-01", [.odUncorrected: "6/9", .ou: "6/6"]),
            try measurement("a", "2025-03-01", [.odUncorrected: "0.7", .os: "20/20"])
        ]
        let trend = VisualAcuityTrend(
            measurements, birthDate: CalendarDate(iso: "2016-05-10")!)
        #expect(trend.series.map(\.slot) == [.os, .ou, .odUncorrected])
        let uncorrected = try #require(trend.series.last)
        #expect(uncorrected.points.map(\.acuity.written) == ["0.7", "6/9"])
        #expect(uncorrected.points.map(\.acuity.logMARText) == ["0.15", "0.18"])
        #expect(uncorrected.points.first?.change == nil)
        #expect(VisualAcuityTrend.signed(try #require(uncorrected.points.last?.change)) == "+0.03")
        #expect(uncorrected.points.map { $0.ageYears.map { String(format: "%.1f", $0) } } == ["8.8", "9.8"])
        #expect(trend.dates.count == 4)
    }

    @Test func oneEyeKeepsItsOwnSlotsOnly() throws {
        let measurements = [
            try measurement("a", "2025-03-01", [.od: "6/6", .os: "6/6", .ou: "6/5", .osUncorrected: "6/12"])
        ]
        #expect(VisualAcuityTrend(measurements, eyes: [.left]).series.map(\.slot) == [.os, .osUncorrected])
        #expect(VisualAcuityTrend(measurements, eyes: [.right]).series.map(\.slot) == [.od])
        #expect(VisualAcuityTrend(measurements).series.map(\.slot) == [.od, .os, .ou, .osUncorrected])
        #expect(VisualAcuityTrend(measurements).series.allSatisfy { $0.points.first?.ageYears == nil })
        #expect(VisualAcuityTrend([try measurement("x", "2025-03-01", [:])]).isEmpty)
    }
}
