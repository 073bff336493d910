import RxModel
import Testing

/// `Hundredths` and `CalendarDate` text is written without Foundation-style padding helpers (exports
/// write millions); these compare it with the way it was made before, on every value in range.
@Suite struct DecimalTextTests {
    /// The earlier implementation: two fraction digits, trailing zeros dropped down to `minimumDecimals`.
    static func reference(_ raw: Int, minimumDecimals: Int, signed: Bool) -> String {
        let magnitude = abs(raw)
        var fraction = String(magnitude % 100)
        if fraction.count < 2 { fraction = "0" + fraction }
        while fraction.count > minimumDecimals && fraction.hasSuffix("0") { fraction.removeLast() }
        let digits = fraction.isEmpty ? "\(magnitude / 100)" : "\(magnitude / 100).\(fraction)"
        if signed { return (raw > 0 ? "+" : raw < 0 ? "-" : "") + digits }
        return (raw < 0 ? "-" : "") + digits
    }

    @Test func hundredthsTextIsAsBefore() {
        for raw in Array(-200_000...200_000) + [99_999_999, -99_999_999, 123_456_789_01] {
            let value = Hundredths(raw: raw)
            guard value.signedPower == Self.reference(raw, minimumDecimals: 2, signed: true),
                value.plain == Self.reference(raw, minimumDecimals: 1, signed: false),
                value.short == Self.reference(raw, minimumDecimals: 0, signed: false)
            else {
                Issue.record("raw \(raw): \(value.signedPower) \(value.plain) \(value.short)")
                return
            }
        }
    }

    @Test func datesAreZeroPadded() {
        var day = CalendarDate.earliest
        var checked = 0
        while day <= .latest {
            let pad = { (value: Int, width: Int) in
                String(repeating: "0", count: max(0, width - String(value).count)) + String(value)
            }
            let expected = "\(pad(day.year, 4))-\(pad(day.month, 2))-\(pad(day.day, 2))"
            guard day.description == expected else {
                Issue.record("\(expected) written \(day.description)")
                return
            }
            day = CalendarDate(dayNumber: day.dayNumber + 97)
            checked += 1
        }
        #expect(checked > 30_000)
        #expect(CalendarDate.latest.description == "9999-12-31")
    }
}
