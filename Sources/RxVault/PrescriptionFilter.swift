import RxModel

/// The filters of `rxvault query` (and `export`), combined with AND. Matching is done on
/// decrypted records, so it works the same for the owner and for a client over its grants.
public struct PrescriptionFilter: Sendable, Equatable {
    /// Case-insensitive substring of the patient's name.
    public var patient: String?
    public var kind: PrescriptionKind?
    /// Issued on or before the day, and not expired on it (one with no expiry date written: by
    /// its assumed expiry, else not more than `PrescriptionStatus.undatedYears` after its issue
    /// date, as its status says). Never a withdrawn one (`RecordStatus`).
    public var validOn: CalendarDate?
    /// The vault's `assumed-validity` setting: the validity filters (`validOn`, `expired`,
    /// `expiringWithinDays`) and the expiry sort judge a prescription with no expiry written by
    /// the date it gives (`Prescription.expiry(assuming:)`). `Vault.query` fills it in when nil.
    public var assumedValidity: AssumedValidity?
    /// Expired before today (and not withdrawn: a cancelled prescription is not due for renewal).
    public var expired = false
    /// Expires between today and today + N days (inclusive), and not withdrawn.
    public var expiringWithinDays: Int?
    /// Only these FHIR statuses (`--status`); nil for every status. Validity filters leave out
    /// withdrawn prescriptions whatever this says.
    public var statuses: Set<RecordStatus>?
    /// With `statuses`: superseded prescriptions match too (`--status superseded`), those a newer
    /// one of the same kind for the same patient replaces among the prescriptions filtered
    /// (`Supersession`). They are FHIR `active`, so `active` alone already has them.
    public var includesSuperseded = false
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
    /// Some eye's sphere / cylinder within the range (inclusive), compared in minus-cyl form.
    public var sphereMin: Hundredths?
    public var sphereMax: Hundredths?
    public var cylinderMin: Hundredths?
    public var cylinderMax: Hundredths?
    /// Some eye has a near addition (multifocal, presbyopia).
    public var hasAdd = false

    public enum Sort: String, Sendable, CaseIterable { case issued, expires, patient, kind }
    public var sort: Sort = .issued
    /// Newest issue first, soonest expiry first (none last), A to Z for patients and kinds; ties
    /// by issue date (newest first), then id. `reverse` flips the whole order.
    public var reverse = false
    public var limit: Int?

    public init() {}

    func matches<S: FilterSubject>(
        _ rx: S, attachmentCount: Int, today: CalendarDate, superseded: Set<PrescriptionID> = []
    ) -> Bool {
        // Cheap numeric tests first: on a large vault most entries fail one of them, and the
        // text of the others is then never decoded.
        if let kind, rx.kind != kind { return false }
        if let statuses, !statuses.contains(rx.recordStatus),
            !(includesSuperseded && superseded.contains(rx.subjectID))
        {
            return false
        }
        // FHIR status is a modifier: a withdrawn prescription matches no validity filter.
        if validOn != nil || expired || expiringWithinDays != nil, rx.recordStatus.isWithdrawn { return false }
        let judgesExpiry = validOn != nil || expired || expiringWithinDays != nil
        let expiry = judgesExpiry ? effectiveExpiry(rx) : nil
        if let day = validOn {
            if rx.issued > day { return false }
            if let expiry, expiry < day { return false }
            if expiry == nil, PrescriptionStatus(expires: nil, issued: rx.issued, today: day) == .noExpiryWritten {
                return false
            }
        }
        if expired && !(expiry.map { $0 < today } ?? false) { return false }
        if let days = expiringWithinDays {
            // Past 9999-12-31 there is no day: every expiry is within reach.
            guard let expiry, expiry >= today, expiry <= today.adding(days: days) ?? .latest else {
                return false
            }
        }
        if let issuedAfter, rx.issued < issuedAfter { return false }
        if let issuedBefore, rx.issued > issuedBefore { return false }
        if hasAttachments && attachmentCount == 0 { return false }
        if sphereMin != nil || sphereMax != nil {
            guard rx.minusCylinderPowers.contains(where: { within($0.sphere, sphereMin, sphereMax) }) else {
                return false
            }
        }
        if cylinderMin != nil || cylinderMax != nil {
            guard rx.minusCylinderPowers.contains(where: { within($0.cylinder ?? .zero, cylinderMin, cylinderMax) })
            else { return false }
        }
        if hasAdd && !rx.minusCylinderPowers.contains(where: { $0.add != nil }) { return false }
        if let patient, !Self.patientName(rx.patientName, matches: patient) { return false }
        if let brand, !rx.brands.contains(where: { $0.lowercased().contains(brand.lowercased()) }) { return false }
        if let prescriber, !rx.prescriberName.lowercased().contains(prescriber.lowercased()) { return false }
        return true
    }

    /// `query --patient`'s rule, which `trend` and `patient show` share (`Vault.findPatient`):
    /// the name contains the text, in any case.
    public static func patientName(_ name: String, matches text: String) -> Bool {
        name.lowercased().contains(text.lowercased())
    }

    /// The written expiry, else the one assumed at import, else the one `assumedValidity` gives.
    func effectiveExpiry<S: FilterSubject>(_ rx: S) -> CalendarDate? {
        if let expires = rx.expires { return expires }
        if let assumed = rx.assumedExpiry { return assumed }
        return assumedValidity?[rx.kind]?.after(rx.issued)
    }

    private func within(_ value: Hundredths, _ low: Hundredths?, _ high: Hundredths?) -> Bool {
        (low.map { value >= $0 } ?? true) && (high.map { value <= $0 } ?? true)
    }

    /// Filters, keeps the latest per patient and kind if asked, sorts and limits.
    public func apply<S: FilterSubject>(_ items: [S], attachmentCounts: [PrescriptionID: Int], today: CalendarDate)
        -> [S]
    {
        let needsCounts = hasAttachments
        // Superseded is worked out over every item given (the whole vault, or a client's grants),
        // only when asked for: it reads the names of the candidates.
        var superseded: Set<PrescriptionID> = []
        if includesSuperseded, let statuses {
            let asked = items.filter { !statuses.contains($0.recordStatus) && (kind == nil || $0.kind == kind) }
            superseded = Set(Supersession.superseding(asked, among: items).keys)
        }
        var result = items.filter { item in
            matches(
                item, attachmentCount: needsCounts ? attachmentCounts[item.subjectID] ?? 0 : 0, today: today,
                superseded: superseded)
        }
        if latest {
            var newest: [String: S] = [:]
            for item in result {
                let key = "\(item.patientName.lowercased())|\(item.birthDate?.description ?? "")|\(item.kind.rawValue)"
                if let other = newest[key], (other.issued, other.subjectID.hex) >= (item.issued, item.subjectID.hex) {
                    continue
                }
                newest[key] = item
            }
            result = Array(newest.values)
        }
        // Sort on keys computed once per result. Every key is a total order: ties on the key
        // go newest issue date first, then by id (descending, as list always showed them), so
        // equal keys never come out in whatever order the index happened to hold them.
        let keys: [(key: Int, text: String, newest: Int, id: String)] = result.map { item in
            let newest = -item.issued.dayNumber
            let id = item.subjectID.hex
            switch sort {
            case .issued: return (newest, "", newest, id)
            case .expires: return (effectiveExpiry(item)?.dayNumber ?? Int.max, "", newest, id)
            case .patient: return (0, item.patientName.lowercased(), newest, id)
            case .kind: return (0, item.kind.rawValue, newest, id)
            }
        }
        var order = Array(result.indices)
        order.sort { a, b in
            let (x, y) = (keys[a], keys[b])
            let ordered = (x.key, x.text, x.newest, y.id) < (y.key, y.text, y.newest, x.id)
            // --reverse flips the whole order, ties included (ids are unique, so no two are equal).
            return reverse ? (y.key, y.text, y.newest, x.id) < (x.key, x.text, x.newest, y.id) : ordered
        }
        result = order.map { result[$0] }
        if let limit { result = Array(result.prefix(limit)) }
        return result
    }
}

/// What a filter reads of a prescription. Records conform directly; search-index rows conform
/// without decoding their text until a filter asks for it.
public protocol FilterSubject {
    var subjectID: PrescriptionID { get }
    var kind: PrescriptionKind { get }
    var recordStatus: RecordStatus { get }
    var issued: CalendarDate { get }
    var expires: CalendarDate? { get }
    /// The expiry assumed at import when none was written (`Prescription.assumedExpiry`).
    var assumedExpiry: CalendarDate? { get }
    var birthDate: CalendarDate? { get }
    var patientName: String { get }
    var prescriberName: String { get }
    var brands: [String] { get }
    /// Each eye present, OD first.
    var minusCylinderPowers: [MinusCylinderPowers] { get }
}

/// One eye's powers as filters compare them: in minus-cylinder form, so a lens matches the same
/// ranges however it was written (-1.00 +2.00 x030 compares as sphere +1.00, cylinder -2.00).
///
/// For comparing only. It has no axis (turning the cylinder turns the axis by 90 degrees), so
/// it cannot describe a lens and nothing is ever built from it: what is shown is the lens as
/// written, or `LensSpecification.transposed(to:)`, which turns the axis too.
public struct MinusCylinderPowers: Sendable, Equatable {
    public let sphere: Hundredths
    public let cylinder: Hundredths?
    public let add: Hundredths?

    /// From an eye's powers as written, in either cylinder form.
    public init(writtenSphere sphere: Hundredths, cylinder: Hundredths?, add: Hundredths?) {
        if let c = cylinder, c.raw > 0 {
            self.sphere = sphere + c
            self.cylinder = c.negated
        } else {
            self.sphere = sphere
            self.cylinder = cylinder
        }
        self.add = add
    }
}

extension PrescriptionRecord: FilterSubject {
    public var subjectID: PrescriptionID { id }
    public var kind: PrescriptionKind { prescription.kind }
    public var recordStatus: RecordStatus { prescription.recordStatus }
    public var issued: CalendarDate { prescription.issued }
    public var expires: CalendarDate? { prescription.expires }
    public var assumedExpiry: CalendarDate? { prescription.assumedExpiry }
    public var birthDate: CalendarDate? { prescription.patient.birthDate }
    public var patientName: String { prescription.patient.name }
    public var prescriberName: String { prescription.prescriber.name }
    public var brands: [String] { prescription.eyes.compactMap { $0.1.brand } }
    public var minusCylinderPowers: [MinusCylinderPowers] {
        prescription.eyes.map {
            MinusCylinderPowers(writtenSphere: $0.1.sphere, cylinder: $0.1.cylinder, add: $0.1.add)
        }
    }
}
