import RxModel
import Testing

@Suite struct CalendarDateTests {
    @Test(arguments: [
        ("2026-03-14", 2026, 3, 14), ("2024-02-29", 2024, 2, 29), ("2000-02-29", 2000, 2, 29),
        ("1600-02-29", 1600, 2, 29),
        ("2023-02-28", 2023, 2, 28), ("2026-12-31", 2026, 12, 31), ("2026-04-30", 2026, 4, 30), ("0001-01-01", 1, 1, 1),
        ("9999-12-31", 9999, 12, 31), ("0099-07-04", 99, 7, 4)
    ])
    func parsesStrictISO(text: String, year: Int, month: Int, day: Int) throws {
        let parsed = try #require(CalendarDate(iso: text))
        #expect(parsed.year == year && parsed.month == month && parsed.day == day)
        #expect(parsed.description == text)
        #expect(CalendarDate(year: year, month: month, day: day) == parsed)
    }

    @Test(arguments: [
        "2023-02-29", "2100-02-29", "1900-02-29", "2026-02-30", "2026-04-31", "2026-06-31", "2026-09-31", "2026-11-31",
        "2026-01-32", "2026-13-01", "2026-00-10", "2026-01-00", "0000-01-01", "2026-1-01", "2026-01-1", "26-01-01",
        "2026/01/01", "2026.01.01", "20260101", "2026-01-01T00:00", "2026-01-01Z", " 2026-01-01", "2026-01-01 ", "",
        "+026-01-01", "-026-01-01", "2026-+1-01", "2026--1-01", "2026-0a-01", "２０２６-01-01", "2026-01-0\u{0661}",
        "10000-01-01"
    ])
    func refusesEverythingElse(text: String) {
        #expect(CalendarDate(iso: text) == nil)
    }

    @Test func memberwiseInitValidates() {
        #expect(CalendarDate(year: 2024, month: 2, day: 29) != nil)
        #expect(CalendarDate(year: 2023, month: 2, day: 29) == nil)
        #expect(CalendarDate(year: 0, month: 1, day: 1) == nil)
        #expect(CalendarDate(year: 10_000, month: 1, day: 1) == nil)
        #expect(CalendarDate(year: 2026, month: 0, day: 1) == nil)
        #expect(CalendarDate(year: 2026, month: 13, day: 1) == nil)
        #expect(CalendarDate(year: 2026, month: 1, day: 0) == nil)
        #expect(CalendarDate(year: 2026, month: 1, day: -1) == nil)
    }

    @Test(arguments: [
        ("1970-01-01", 0), ("1969-12-31", -1), ("1970-01-02", 1), ("2000-03-01", 11_017), ("2026-03-14", 20_526),
        ("0001-01-01", -719_162), ("9999-12-31", 2_932_896), ("1600-02-29", -135_081)
    ])
    func dayNumberKnownValues(text: String, number: Int) {
        #expect(date(text).dayNumber == number)
        #expect(CalendarDate(dayNumber: number) == date(text))
    }

    @Test func dayNumberRoundTripsOverTheWholeRange() throws {
        let first = date("0001-01-01").dayNumber
        let last = date("9999-12-31").dayNumber
        for number in stride(from: first, through: last, by: 97) {
            let day = CalendarDate(dayNumber: number)
            #expect(day.dayNumber == number)
            // The computed fields must form a real date that parses back from its own description.
            #expect(CalendarDate(iso: day.description) == day)
        }
        #expect(CalendarDate(dayNumber: last).description == "9999-12-31")
    }

    @Test func consecutiveDayNumbersAreConsecutiveDates() throws {
        // Walk day by day across four centuries (three non-leap century years, one leap one).
        var previous = date("1799-12-31")
        var number = previous.dayNumber
        let end = date("2201-01-01")
        while previous < end {
            number += 1
            let next = CalendarDate(dayNumber: number)
            let expected: CalendarDate?
            if let sameMonth = CalendarDate(year: previous.year, month: previous.month, day: previous.day + 1) {
                expected = sameMonth
            } else if let nextMonth = CalendarDate(year: previous.year, month: previous.month + 1, day: 1) {
                expected = nextMonth
            } else {
                expected = CalendarDate(year: previous.year + 1, month: 1, day: 1)
            }
            guard next == expected, next.dayNumber == number, previous < next else {
                Issue.record("after \(previous) came \(next) (expected \(String(describing: expected)))")
                return
            }
            previous = next
        }
    }

    @Test func addingDays() {
        #expect(date("2024-02-28").adding(days: 1) == date("2024-02-29"))
        #expect(date("2024-02-28").adding(days: 2) == date("2024-03-01"))
        #expect(date("2023-02-28").adding(days: 1) == date("2023-03-01"))
        #expect(date("2023-12-31").adding(days: 1) == date("2024-01-01"))
        #expect(date("2026-03-14").adding(days: -14) == date("2026-02-28"))
        #expect(date("2026-03-14").adding(days: 0) == date("2026-03-14"))
        #expect(date("2026-03-14").adding(days: 365) == date("2027-03-14"))
        #expect(date("2024-03-14").adding(days: -366) == date("2023-03-14"))
        #expect(date("2000-01-01").adding(days: 146_097) == date("2400-01-01"))
        #expect(date("2026-03-14").days(until: date("2026-05-13")) == 60)
        #expect(date("2026-05-13").days(until: date("2026-03-14")) == -60)
        #expect(date("2024-01-01").days(until: date("2025-01-01")) == 366)
    }

    /// No addition leaves 0001-01-01 to 9999-12-31 (a date past it could not be read back), and
    /// none overflows, whatever the number of days.
    @Test func addingStaysInTheCalendarRange() {
        #expect(date("9999-12-30").adding(days: 1) == date("9999-12-31"))
        #expect(date("9999-12-31").adding(days: 1) == nil)
        #expect(date("9999-12-01").adding(days: 60) == nil)
        #expect(date("0001-01-02").adding(days: -1) == date("0001-01-01"))
        #expect(date("0001-01-01").adding(days: -1) == nil)
        #expect(date("2026-03-14").adding(days: Int.max) == nil)
        #expect(date("2026-03-14").adding(days: Int.min) == nil)
        #expect(CalendarDate.earliest.adding(days: CalendarDate.earliest.days(until: .latest)) == .latest)
    }

    @Test(arguments: [
        ("10000-01-01", "outside 0001-01-01 to 9999-12-31"), ("0000-12-31", "outside 0001-01-01 to 9999-12-31"),
        ("-2026-01-01", "outside 0001-01-01 to 9999-12-31"),
        ("99999999999999999999-01-01", "outside 0001-01-01 to 9999-12-31"),
        ("2026-02-30", "not a date in the form YYYY-MM-DD"), ("2026-13-01", "not a date in the form YYYY-MM-DD"),
        ("soon", "not a date in the form YYYY-MM-DD"), ("", "not a date in the form YYYY-MM-DD")
    ])
    func problemSaysWhy(text: String, problem: String) {
        #expect(CalendarDate.problem(iso: text) == problem)
    }

    @Test func problemIsNilForEveryDate() {
        for text in ["0001-01-01", "2026-03-14", "9999-12-31"] { #expect(CalendarDate.problem(iso: text) == nil) }
    }

    @Test func ordering() {
        let sorted = ["2025-12-31", "2026-01-01", "2026-01-31", "2026-02-01", "2026-02-28", "2026-03-14", "2027-01-01"]
            .map { date($0) }
        for (a, b) in zip(sorted, sorted.dropFirst()) {
            #expect(a < b)
            #expect(!(b < a))
            #expect(a.dayNumber < b.dayNumber)
        }
        #expect(!(date("2026-03-14") < date("2026-03-14")))
    }
}
