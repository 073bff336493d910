import Foundation

/// When a backup was made, to the second, in UTC: the time in its file name and label. Days,
/// weeks (ISO 8601, Monday first), months and years for pruning are UTC ones too, so a backup
/// folder prunes the same on every machine whatever its time zone.
public struct BackupTime: Hashable, Comparable, Sendable, CustomStringConvertible {
    public let year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int

    public init?(year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int) {
        guard (1970...9999).contains(year), (1...12).contains(month), (0...23).contains(hour),
            (0...59).contains(minute), (0...59).contains(second)
        else { return nil }
        var components = DateComponents(year: year, month: month, day: day)
        components.calendar = Self.calendar
        guard (1...31).contains(day), components.isValidDate else { return nil }
        self.year = year
        self.month = month
        self.day = day
        self.hour = hour
        self.minute = minute
        self.second = second
    }

    /// `20261122T221530Z`, as in backup file names (sorts as the time does).
    public init?(compact text: String) {
        let b = Array(text.utf8)
        guard b.count == 16, b[8] == UInt8(ascii: "T"), b[15] == UInt8(ascii: "Z") else { return nil }
        func number(_ range: Range<Int>) -> Int? {
            guard b[range].allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
            return Int(String(decoding: b[range], as: UTF8.self))
        }
        guard let y = number(0..<4), let mo = number(4..<6), let d = number(6..<8), let h = number(9..<11),
            let mi = number(11..<13), let s = number(13..<15)
        else { return nil }
        self.init(year: y, month: mo, day: d, hour: h, minute: mi, second: s)
    }

    /// `2026-11-22T22:15:30Z` (what the audit log and VaultClock.timestamp write; fractions ignored).
    public init?(iso text: String) {
        let b = Array(text.utf8)
        guard b.count >= 20, b[4] == UInt8(ascii: "-"), b[7] == UInt8(ascii: "-"), b[10] == UInt8(ascii: "T"),
            b[13] == UInt8(ascii: ":"), b[16] == UInt8(ascii: ":"), b.last == UInt8(ascii: "Z")
        else { return nil }
        var digits: [UInt8] = []
        for range in [0..<4, 5..<7, 8..<10] { digits += b[range] }
        digits.append(UInt8(ascii: "T"))
        for range in [11..<13, 14..<16, 17..<19] { digits += b[range] }
        digits.append(UInt8(ascii: "Z"))
        self.init(compact: String(decoding: digits, as: UTF8.self))
    }

    public init(_ date: Date) {
        let c = Self.calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
        self.init(year: c.year!, month: c.month!, day: c.day!, hour: c.hour!, minute: c.minute!, second: c.second!)!
    }

    static let calendar: Calendar = {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        calendar.firstWeekday = 2 // ISO 8601: weeks start on Monday,
        calendar.minimumDaysInFirstWeek = 4 // and week 1 holds the year's first Thursday
        return calendar
    }()

    public var compact: String { String(format: "%04d%02d%02dT%02d%02d%02dZ", year, month, day, hour, minute, second) }
    public var iso: String { String(format: "%04d-%02d-%02dT%02d:%02d:%02dZ", year, month, day, hour, minute, second) }
    public var description: String { iso }

    var date: Date {
        Self.calendar.date(
            from: DateComponents(year: year, month: month, day: day, hour: hour, minute: minute, second: second))!
    }

    /// The ISO 8601 week: (week-numbering year, week 1...53).
    public var isoWeek: (year: Int, week: Int) {
        let c = Self.calendar.dateComponents([.yearForWeekOfYear, .weekOfYear], from: date)
        return (c.yearForWeekOfYear!, c.weekOfYear!)
    }

    public static func < (a: BackupTime, b: BackupTime) -> Bool {
        (a.year, a.month, a.day, a.hour, a.minute, a.second) < (b.year, b.month, b.day, b.hour, b.minute, b.second)
    }
}
