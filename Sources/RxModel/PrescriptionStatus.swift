/// Whether a prescription can still be used, on a given day.
public enum PrescriptionStatus: String, Sendable, CaseIterable {
    /// Not expired, and not expiring within the warning window (or no expiry date).
    case valid
    /// Expires within the warning window (60 days by default), today included.
    case expiring
    /// The expiry date has passed.
    case expired

    /// Days before expiry from which a prescription counts as expiring.
    public static let defaultWarningDays = 60

    public init(expires: CalendarDate?, today: CalendarDate, warningDays: Int = PrescriptionStatus.defaultWarningDays) {
        guard let expires else { self = .valid; return }
        if expires < today {
            self = .expired
        } else if today.days(until: expires) <= warningDays {
            self = .expiring
        } else {
            self = .valid
        }
    }
}

extension Prescription {
    public func status(on today: CalendarDate, warningDays: Int = PrescriptionStatus.defaultWarningDays) -> PrescriptionStatus {
        PrescriptionStatus(expires: expires, today: today, warningDays: warningDays)
    }
}
