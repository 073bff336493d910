/// Which backups to keep: restic's `forget` policy for daily, weekly, monthly and yearly
/// periods (docs/guide.md, "Backups"; DESIGN.md).
///
/// Backups are taken newest first. For each period kind with a count left, a backup whose
/// period (its UTC day, ISO week, month or year) differs from the last one kept for that kind
/// is kept for it, and the count goes down by one. So each kept backup stands for the newest
/// backup of its period, for the N newest periods that have a backup (periods without one do
/// not count). As restic does since 0.15, when a kind still has counts left at the oldest
/// backup, that backup is kept too, so the history reaches as far back as it can. A backup is
/// kept if any kind keeps it. The newest backup is always kept by any policy with a count.
public struct BackupPolicy: Hashable, Sendable {
    public enum Period: String, CaseIterable, Sendable {
        case daily, weekly, monthly, yearly

        /// The period a time falls in, as a number that differs between periods.
        func bucket(_ time: BackupTime) -> Int {
            switch self {
            case .daily: return time.year * 10_000 + time.month * 100 + time.day
            case .weekly:
                let w = time.isoWeek
                return w.year * 100 + w.week
            case .monthly: return time.year * 100 + time.month
            case .yearly: return time.year
            }
        }
    }

    public var counts: [Period: Int]

    public init(daily: Int = 0, weekly: Int = 0, monthly: Int = 0, yearly: Int = 0) {
        counts = [.daily: daily, .weekly: weekly, .monthly: monthly, .yearly: yearly].filter { $0.value > 0 }
    }

    /// No count at all: such a policy would keep nothing, and is refused before it is applied.
    public var isEmpty: Bool { counts.isEmpty }

    public struct Decision<Item> {
        public let item: Item
        public let time: BackupTime
        /// Why it is kept (empty: removed), e.g. [.daily, .weekly].
        public let periods: [Period]
        /// Kept as the oldest backup while a kind had counts left.
        public var keep: Bool { !periods.isEmpty }
    }

    /// The decision for each item, newest first. Items with the same time are ordered by
    /// `tieBreak` (greater first), so the result never depends on the input's order.
    public func apply<Item>(_ items: [Item], time: (Item) -> BackupTime, tieBreak: (Item) -> Int = { _ in 0 })
        -> [Decision<Item>]
    {
        let sorted = items.sorted { a, b in
            let (ta, tb) = (time(a), time(b))
            return ta != tb ? ta > tb : tieBreak(a) > tieBreak(b)
        }
        var left = counts
        var last: [Period: Int] = [:]
        var decisions: [Decision<Item>] = []
        for (index, item) in sorted.enumerated() {
            let t = time(item)
            var periods: [Period] = []
            for period in Period.allCases {
                guard let count = left[period], count > 0 else { continue }
                let bucket = period.bucket(t)
                if bucket != last[period] || index == sorted.count - 1 {
                    last[period] = bucket
                    left[period] = count - 1
                    periods.append(period)
                }
            }
            decisions.append(Decision(item: item, time: t, periods: periods))
        }
        return decisions
    }
}
