/// Whether a prescription can still be used, on a given day: withdrawn (its FHIR status says it
/// does not stand; `RecordStatus`), else superseded (a newer one replaces it), else valid,
/// expiring or expired by its dates.
///
/// Derived when shown, never stored: `superseded` depends on the vault's other prescriptions,
/// which a prescription alone does not know (RxVault's `Supersession` works it out).
public enum PrescriptionStatus: String, Sendable, CaseIterable {
    /// Not expired, and not expiring within the warning window (or no expiry date).
    case valid
    /// Expires within the warning window (60 days by default), today included.
    case expiring
    /// The expiry date has passed.
    case expired
    /// Withdrawn by its prescriber or the owner (FHIR `cancelled`): never valid, whatever the dates.
    case cancelled
    /// Not final (FHIR `draft`): never valid.
    case draft
    /// Recorded by mistake (FHIR `entered-in-error`): never valid, left out of trends.
    case enteredInError = "entered-in-error"
    /// A newer prescription of the same kind for the same patient replaces it: not withdrawn, but
    /// not the one to renew either, so it is told apart from `expired` (which asks for an exam).
    case superseded

    /// Valid or expiring: a prescription that can be used today.
    public var isUsable: Bool { self == .valid || self == .expiring }
    /// Cancelled, draft or entered in error.
    public var isWithdrawn: Bool { self == .cancelled || self == .draft || self == .enteredInError }

    init(withdrawn status: RecordStatus) {
        switch status {
        case .active, .cancelled: self = .cancelled
        case .draft: self = .draft
        case .enteredInError: self = .enteredInError
        }
    }

    /// Days before expiry from which a prescription counts as expiring.
    public static let defaultWarningDays = 60

    public init(expires: CalendarDate?, today: CalendarDate, warningDays: Int = PrescriptionStatus.defaultWarningDays) {
        guard let expires else {
            self = .valid
            return
        }
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
    /// The status a reader must see: a withdrawn prescription first, whatever its dates.
    public func status(on today: CalendarDate, warningDays: Int = PrescriptionStatus.defaultWarningDays)
        -> PrescriptionStatus
    {
        if recordStatus.isWithdrawn { return PrescriptionStatus(withdrawn: recordStatus) }
        return PrescriptionStatus(expires: expires, today: today, warningDays: warningDays)
    }

    /// The same, for a prescription known to be `superseded` by a newer one: withdrawn still
    /// comes first (a cancelled prescription stays cancelled), then superseded, then the dates.
    public func status(
        on today: CalendarDate, superseded: Bool, warningDays: Int = PrescriptionStatus.defaultWarningDays
    ) -> PrescriptionStatus {
        if superseded && !recordStatus.isWithdrawn { return .superseded }
        return status(on: today, warningDays: warningDays)
    }
}
