import RxModel

/// The filters of `rxvault query` (and `export`), combined with AND. Matching is done on
/// decrypted records, so it works the same for the owner and for a client over its grants.
public struct PrescriptionFilter: Sendable, Equatable {
    /// Case-insensitive substring of the patient's name.
    public var patient: String?
    public var kind: PrescriptionKind?
    /// Issued on or before the day, and not expired on it.
    public var validOn: CalendarDate?
    /// Expired before today.
    public var expired = false
    /// Expires between today and today + N days (inclusive).
    public var expiringWithinDays: Int?
    /// Issued on or after / on or before the day.
    public var issuedAfter: CalendarDate?
    public var issuedBefore: CalendarDate?
    /// Case-insensitive substring of either eye's brand.
    public var brand: String?
    /// Case-insensitive substring of the prescriber's name.
    public var prescriber: String?
    /// Only the newest (by issue date) prescription per patient and kind.
    public var latest = false
    public var hasAttachments = false
    /// Some eye's sphere / cylinder within the range (inclusive).
    public var sphereMin: Hundredths?
    public var sphereMax: Hundredths?
    public var cylinderMin: Hundredths?
    public var cylinderMax: Hundredths?
    /// Some eye has a near addition (multifocal, presbyopia).
    public var hasAdd = false

    public enum Sort: String, Sendable, CaseIterable { case issued, expires, patient, kind }
    public var sort: Sort = .issued
    /// Newest first for dates, A to Z for names; `reverse` flips it.
    public var reverse = false
    public var limit: Int?

    public init() {}

    func matches(_ record: PrescriptionRecord, attachmentCount: Int, today: CalendarDate) -> Bool {
        let rx = record.prescription
        if let patient, !rx.patient.name.lowercased().contains(patient.lowercased()) { return false }
        if let kind, rx.kind != kind { return false }
        if let day = validOn {
            if rx.issued > day { return false }
            if let expires = rx.expires, expires < day { return false }
        }
        if expired && !(rx.expires.map { $0 < today } ?? false) { return false }
        if let days = expiringWithinDays {
            guard let expires = rx.expires, expires >= today, expires <= today.adding(days: days) else { return false }
        }
        if let issuedAfter, rx.issued < issuedAfter { return false }
        if let issuedBefore, rx.issued > issuedBefore { return false }
        if let brand, !rx.eyes.contains(where: { $0.1.brand?.lowercased().contains(brand.lowercased()) ?? false }) { return false }
        if let prescriber, !rx.prescriber.name.lowercased().contains(prescriber.lowercased()) { return false }
        if hasAttachments && attachmentCount == 0 { return false }
        if sphereMin != nil || sphereMax != nil {
            guard rx.eyes.contains(where: { within($0.1.sphere, sphereMin, sphereMax) }) else { return false }
        }
        if cylinderMin != nil || cylinderMax != nil {
            guard rx.eyes.contains(where: { within($0.1.cylinder ?? .zero, cylinderMin, cylinderMax) }) else { return false }
        }
        if hasAdd && !rx.eyes.contains(where: { $0.1.add != nil }) { return false }
        return true
    }

    private func within(_ value: Hundredths, _ low: Hundredths?, _ high: Hundredths?) -> Bool {
        (low.map { value >= $0 } ?? true) && (high.map { value <= $0 } ?? true)
    }

    /// Filters, keeps the latest per patient and kind if asked, sorts and limits.
    public func apply(_ records: [PrescriptionRecord], attachmentCounts: [PrescriptionID: Int], today: CalendarDate) -> [PrescriptionRecord] {
        var result = records.filter { matches($0, attachmentCount: attachmentCounts[$0.id] ?? 0, today: today) }
        if latest {
            var newest: [String: PrescriptionRecord] = [:]
            for record in result {
                let rx = record.prescription
                let key = "\(rx.patient.name.lowercased())|\(rx.patient.birthDate?.description ?? "")|\(rx.kind.rawValue)"
                if let other = newest[key], (other.prescription.issued, other.id.hex) >= (rx.issued, record.id.hex) { continue }
                newest[key] = record
            }
            result = Array(newest.values)
        }
        result.sort { a, b in
            let (x, y) = (a.prescription, b.prescription)
            let ordered: Bool
            switch sort {
            case .issued: ordered = (x.issued, a.id.hex) > (y.issued, b.id.hex)
            case .expires:
                // Soonest expiry first; no expiry last.
                let ex = x.expires ?? CalendarDate(year: 9999, month: 12, day: 31)!, ey = y.expires ?? CalendarDate(year: 9999, month: 12, day: 31)!
                ordered = (ex, a.id.hex) < (ey, b.id.hex)
            case .patient: ordered = (x.patient.name.lowercased(), a.id.hex) < (y.patient.name.lowercased(), b.id.hex)
            case .kind: ordered = (x.kind.rawValue, a.id.hex) < (y.kind.rawValue, b.id.hex)
            }
            return reverse ? !ordered : ordered
        }
        if let limit { result = Array(result.prefix(limit)) }
        return result
    }
}
