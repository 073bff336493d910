/// A calendar day (no time, no zone), as written on a prescription: `2026-03-14`.
///
/// Prescriptions are dated by day, and "expires on" means the whole of that day, wherever the
/// reader is; a `Date` (an instant) would shift across time zones. Parsing is strict ISO 8601
/// `YYYY-MM-DD` with a real day of the month.
///
/// Every date is between 0001-01-01 and 9999-12-31 (`earliest`, `latest`): four-digit years,
/// the only ones `YYYY-MM-DD` can write and so read back. A date past them, once stored (a grant
/// until "today + 60 days" on 9999-12-01), could not be read again and made the vault unreadable;
/// `adding(days:)` therefore says when its result falls outside, and the encoder refuses one.
public struct CalendarDate: Hashable, Comparable, Sendable, CustomStringConvertible {
    public let year: Int
    public let month: Int
    public let day: Int

    /// The first and last day rxvault reads or writes.
    public static let earliest = CalendarDate(year: 1, month: 1, day: 1)!
    public static let latest = CalendarDate(year: 9999, month: 12, day: 31)!
    /// How messages name the range: "0001-01-01 to 9999-12-31".
    public static let rangeText = "\(earliest) to \(latest)"

    public init?(year: Int, month: Int, day: Int) {
        guard (1...9999).contains(year), (1...12).contains(month),
            (1...CalendarDate.daysIn(month: month, year: year)).contains(day)
        else { return nil }
        self.year = year
        self.month = month
        self.day = day
    }

    /// Parses exactly `YYYY-MM-DD`.
    public init?(iso text: String) {
        let bytes = Array(text.utf8)
        guard bytes.count == 10, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-") else { return nil }
        func number(_ range: Range<Int>) -> Int? {
            var value = 0
            for byte in bytes[range] {
                guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
            }
            return value
        }
        guard let y = number(0..<4), let m = number(5..<7), let d = number(8..<10) else { return nil }
        self.init(year: y, month: m, day: d)
    }

    /// Why `text` is not a date `init(iso:)` reads, to follow the text in a message: "outside
    /// 0001-01-01 to 9999-12-31" for a year past either end (0000-12-31, 10000-01-01,
    /// -2026-01-01), else "not a date in the form YYYY-MM-DD"; nil when it is a date.
    public static func problem(iso text: String) -> String? {
        if CalendarDate(iso: text) != nil { return nil }
        let digits = { (part: Substring) in
            !part.isEmpty && part.utf8.allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
        }
        var body = Substring(text)
        let negative = body.hasPrefix("-")
        if negative { body = body.dropFirst() }
        let parts = body.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 3, parts.allSatisfy(digits), parts[1].count == 2, parts[2].count == 2,
            let month = Int(parts[1]), let day = Int(parts[2]), (1...12).contains(month), (1...31).contains(day)
        else {
            return "not a date in the form YYYY-MM-DD"
        }
        let year = Int(parts[0]) ?? Int.max
        if negative || year == 0 || year > 9999 { return "outside \(rangeText)" }
        return "not a date in the form YYYY-MM-DD"
    }

    public var description: String {
        // Every date written (0001-01-01 to 9999-12-31) takes the short way: exports write millions.
        if year >= 0 && year <= 9999 && month >= 0 && month <= 99 && day >= 0 && day <= 99 {
            let digit = { (value: Int) in UInt8(ascii: "0") + UInt8(value) }
            let bytes: [UInt8] = [
                digit(year / 1000), digit(year / 100 % 10), digit(year / 10 % 10), digit(year % 10), UInt8(ascii: "-"),
                digit(month / 10), digit(month % 10), UInt8(ascii: "-"), digit(day / 10), digit(day % 10)
            ]
            return String(decoding: bytes, as: UTF8.self)
        }
        return String(year).padding(toLength: 4, leftPadding: true) + "-"
            + String(month).padding(toLength: 2, leftPadding: true) + "-"
            + String(day).padding(toLength: 2, leftPadding: true)
    }

    public static func < (a: CalendarDate, b: CalendarDate) -> Bool {
        (a.year, a.month, a.day) < (b.year, b.month, b.day)
    }

    /// Days since 1970-01-01 (negative before), by the proleptic Gregorian calendar.
    public var dayNumber: Int {
        // Howard Hinnant's days_from_civil.
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = (month + 9) % 12
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    public init(dayNumber z: Int) {
        let shifted = z + 719_468
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let doe = shifted - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        let y = yoe + era * 400 + (m <= 2 ? 1 : 0)
        self.year = y
        self.month = m
        self.day = d
    }

    /// The day `days` later (earlier when negative); nil when that is outside `earliest` to
    /// `latest` (never an overflow, whatever `days` is).
    public func adding(days: Int) -> CalendarDate? {
        let (sum, overflow) = dayNumber.addingReportingOverflow(days)
        guard !overflow, (Self.earliest.dayNumber...Self.latest.dayNumber).contains(sum) else { return nil }
        return CalendarDate(dayNumber: sum)
    }

    public func days(until other: CalendarDate) -> Int { other.dayNumber - dayNumber }

    /// This day `years` later by the calendar (2024-02-29 plus 2 is 2026-02-28: a month's last
    /// day when the month is shorter); nil past 9999-12-31.
    public func adding(years: Int) -> CalendarDate? {
        let target = year + years
        guard target <= Self.latest.year else { return nil }
        return CalendarDate(year: target, month: month, day: day) ?? CalendarDate(year: target, month: month, day: 28)
    }

    static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }
}
