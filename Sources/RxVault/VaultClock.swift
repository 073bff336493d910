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
        timestamp: { ISO8601DateFormatter().string(from: Date()) })

    /// A clock whose day is fixed (tests; `RXVAULT_TODAY`), with the real time of day.
    public static func fixed(today day: CalendarDate) -> VaultClock {
        VaultClock(today: { day }, timestamp: { "\(day)T12:00:00Z" })
    }
}
