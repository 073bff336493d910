/// `1y`, `18m`, `26w`, `90d`: how long a prescription stays valid after its issue date, as a
/// calendar duration (years and months by the calendar, so 2014-06-15 plus 1y is 2015-06-15; a
/// 29 February ends on the 28th). What `add --expires 2y`, `import --assume-expiry` and the
/// vault's `assumed-validity` setting count with.
public struct ValidityDuration: Sendable, Hashable, CustomStringConvertible {
    public let months: Int
    public let days: Int
    /// As written, lower-cased: `2y`.
    public let description: String

    public init?(_ text: String) {
        let t = String(text.drop { $0 == " " }.reversed().drop { $0 == " " }.reversed()).lowercased()
        guard let unit = t.last, let n = Int(t.dropLast()), n > 0, n <= 100 * 365 else { return nil }
        switch unit {
        case "y":
            guard n <= 100 else { return nil }
            (months, days) = (12 * n, 0)
        case "m":
            guard n <= 1200 else { return nil }
            (months, days) = (n, 0)
        case "w": (months, days) = (0, 7 * n)
        case "d": (months, days) = (0, n)
        default: return nil
        }
        description = t
    }

    /// `date` plus this duration; nil past 9999-12-31.
    public func after(_ date: CalendarDate) -> CalendarDate? {
        let total = date.year * 12 + (date.month - 1) + months
        let (year, month) = (total / 12, total % 12 + 1)
        guard year <= CalendarDate.latest.year else { return nil }
        // The same day of the month, or the month's last day when it has fewer.
        for day in stride(from: date.day, through: max(date.day - 3, 1), by: -1) {
            if let shifted = CalendarDate(year: year, month: month, day: day) {
                return shifted.adding(days: days)
            }
        }
        return nil
    }
}

/// How long a prescription with no expiry date written is taken to stay valid, per kind (the
/// vault's `assumed-validity` setting, issue 47): `glasses=2y,contacts=1y`. A prescription of a
/// kind without a duration here keeps the rule of `PrescriptionStatus` (valid for two years,
/// then `no-expiry-written`).
///
/// An assumed date is never the prescription's expiry: it is worked out when shown, from the
/// setting as it is now, and every output says it is assumed (`Prescription.expiry(assuming:)`).
public struct AssumedValidity: Sendable, Hashable, CustomStringConvertible {
    public var glasses: ValidityDuration?
    public var contacts: ValidityDuration?

    public init(glasses: ValidityDuration? = nil, contacts: ValidityDuration? = nil) {
        self.glasses = glasses
        self.contacts = contacts
    }

    /// No duration for either kind (`none`).
    public static let none = AssumedValidity()

    public var isEmpty: Bool { glasses == nil && contacts == nil }

    public subscript(kind: PrescriptionKind) -> ValidityDuration? {
        kind == .glasses ? glasses : contacts
    }

    /// `glasses=2y`, `contacts=1y`, both comma-separated in either order, or `none`; nil for
    /// anything else (a kind twice, an unknown kind, a bad duration).
    public init?(parsing text: String) {
        let trimmed = text.split(separator: " ", omittingEmptySubsequences: true).joined()
        if trimmed.lowercased() == "none" {
            self.init()
            return
        }
        var result = AssumedValidity()
        var seen: Set<PrescriptionKind> = []
        for part in trimmed.split(separator: ",", omittingEmptySubsequences: false) {
            let pair = part.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard pair.count == 2, let kind = PrescriptionKind(rawValue: pair[0].lowercased()),
                let duration = ValidityDuration(String(pair[1])), seen.insert(kind).inserted
            else { return nil }
            if kind == .glasses { result.glasses = duration } else { result.contacts = duration }
        }
        guard !seen.isEmpty else { return nil }
        self = result
    }

    /// `glasses=2y,contacts=1y` (glasses first), or `none`: what `init(parsing:)` reads back.
    public var description: String {
        let parts = [glasses.map { "glasses=\($0)" }, contacts.map { "contacts=\($0)" }].compactMap { $0 }
        return parts.isEmpty ? "none" : parts.joined(separator: ",")
    }
}

/// An expiry date a reader goes by, and whether the prescriber wrote it.
public struct EffectiveExpiry: Sendable, Hashable {
    public let date: CalendarDate
    /// Not written by the prescriber: kept as assumed at import (`Prescription.assumedExpiry`)
    /// or worked out from the vault's `assumed-validity` setting.
    public let isAssumed: Bool

    public init(date: CalendarDate, isAssumed: Bool) {
        self.date = date
        self.isAssumed = isAssumed
    }
}

extension Prescription {
    /// The expiry a reader goes by: the written one; else the one assumed at import; else the
    /// issue date plus the setting's duration for this kind; else none.
    public func expiry(assuming validity: AssumedValidity?) -> EffectiveExpiry? {
        if let expires { return EffectiveExpiry(date: expires, isAssumed: false) }
        if let assumedExpiry { return EffectiveExpiry(date: assumedExpiry, isAssumed: true) }
        if let duration = validity?[kind], let date = duration.after(issued) {
            return EffectiveExpiry(date: date, isAssumed: true)
        }
        return nil
    }

    /// The assumed expiry alone (nil when one is written, or nothing is assumed).
    public func assumedExpiry(assuming validity: AssumedValidity?) -> CalendarDate? {
        guard let expiry = expiry(assuming: validity), expiry.isAssumed else { return nil }
        return expiry.date
    }
}
