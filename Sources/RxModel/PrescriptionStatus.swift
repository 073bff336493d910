/// Whether a prescription can still be used, on a given day: withdrawn (its FHIR status says it
/// does not stand; `RecordStatus`), else superseded (a newer one replaces it), else valid,
/// expiring or expired by its dates; one with no expiry date written reads valid for two years
/// from its issue date and `no-expiry-written` after (issue 47: nothing says it still stands).
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
    /// No expiry date was written and it was issued more than `undatedYears` ago: not shown as
    /// `valid` (no one said it still stands, and most practices renew glasses within two years),
    /// nor as `expired` (no one said it does not): the prescriber is to be asked.
    case noExpiryWritten = "no-expiry-written"

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

    /// Years after its issue date that a prescription with no expiry date written still reads
    /// `valid`; past them it reads `noExpiryWritten`.
    public static let undatedYears = 2

    /// By the dates, as `init(expires:today:warningDays:)`, and for one with no expiry date
    /// written, `noExpiryWritten` once more than `undatedYears` have passed since `issued`.
    public init(
        expires: CalendarDate?, issued: CalendarDate, today: CalendarDate,
        warningDays: Int = PrescriptionStatus.defaultWarningDays
    ) {
        if expires == nil, let limit = issued.adding(years: Self.undatedYears), today > limit {
            self = .noExpiryWritten
            return
        }
        self.init(expires: expires, today: today, warningDays: warningDays)
    }

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
    /// The status a reader must see: a withdrawn prescription first, whatever its dates. With no
    /// expiry date written, an assumed one (`expiry(assuming:)`: kept at import, or from the
    /// vault's `assumed-validity` setting) is judged as a written one would be; without either,
    /// `noExpiryWritten` after `undatedYears`.
    public func status(
        on today: CalendarDate, assuming validity: AssumedValidity? = nil,
        warningDays: Int = PrescriptionStatus.defaultWarningDays
    )
        -> PrescriptionStatus
    {
        if recordStatus.isWithdrawn { return PrescriptionStatus(withdrawn: recordStatus) }
        if let assumed = assumedExpiry(assuming: validity) {
            return PrescriptionStatus(expires: assumed, today: today, warningDays: warningDays)
        }
        return PrescriptionStatus(expires: expires, issued: issued, today: today, warningDays: warningDays)
    }

    /// The same, for a prescription known to be `superseded` by a newer one: withdrawn still
    /// comes first (a cancelled prescription stays cancelled), then superseded, then the dates.
    public func status(
        on today: CalendarDate, superseded: Bool, assuming validity: AssumedValidity? = nil,
        warningDays: Int = PrescriptionStatus.defaultWarningDays
    ) -> PrescriptionStatus {
        if superseded && !recordStatus.isWithdrawn { return .superseded }
        return status(on: today, assuming: validity, warningDays: warningDays)
    }
}
