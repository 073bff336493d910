import Foundation
import RxModel

/// Where the vault learns today's date and the current time. Injected so tests (and the
/// `RXVAULT_TODAY` hook) can fix "today" instead of sleeping or racing midnight.
public struct VaultClock: Sendable {
    /// Today's calendar day, in the user's time zone: the day that decides expiry.
    public var today: @Sendable () -> CalendarDate
    /// The current instant as an ISO 8601 UTC timestamp (recorded with each version).
    public var timestamp: @Sendable () -> String

    public init(today: @escaping @Sendable () -> CalendarDate, timestamp: @escaping @Sendable () -> String) {
        self.today = today
        self.timestamp = timestamp
    }

    public static let system = VaultClock(
        today: {
            let parts = Calendar.current.dateComponents([.year, .month, .day], from: Date())
            return CalendarDate(year: parts.year!, month: parts.month!, day: parts.day!)!
        },
        timestamp: { Timestamps.now() })

    /// A clock whose day is fixed (tests; `RXVAULT_TODAY`), with the real time of day.
    public static func fixed(today day: CalendarDate) -> VaultClock {
        VaultClock(today: { day }, timestamp: { "\(day)T12:00:00Z" })
    }
}

/// ISO 8601 UTC timestamps without a formatter per call: on Linux `ISO8601DateFormatter()` builds
/// ICU formatters each time it is made, which cost more than the rest of an imported record.
enum Timestamps {
    static func now() -> String { string(from: Date()) }

    /// `2026-11-22T22:15:03Z` (whole seconds, UTC), the form ISO8601DateFormatter writes by default.
    static func string(from date: Date) -> String {
        var seconds = time_t(date.timeIntervalSince1970.rounded(.down))
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func two(_ n: Int32) -> String { n < 10 ? "0\(n)" : "\(n)" }
        return
            "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))T\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec))Z"
    }
}
