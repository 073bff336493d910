import RxModel
import RxVault

/// `GET /VisionPrescription?...`: the FHIR search parameters rxvault supports, parsed strictly
/// (an unknown parameter or a malformed value is a 400, not silently ignored).
struct VisionPrescriptionSearch {
    /// A FHIR date search prefix (`ge2026-01-01`); none means `eq`.
    enum Comparison: String {
        case eq, ge, le, gt, lt

        func holds<Value: Comparable>(_ value: Value, against bound: Value) -> Bool {
            switch self {
            case .eq: value == bound
            case .ge: value >= bound
            case .le: value <= bound
            case .gt: value > bound
            case .lt: value < bound
            }
        }

        /// The prefix and what follows it.
        static func split(_ value: String) -> (Comparison, String) {
            if value.first?.isLetter == true, let prefix = Comparison(rawValue: String(value.prefix(2))) {
                return (prefix, String(value.dropFirst(2)))
            }
            return (.eq, value)
        }
    }

    struct DateBound {
        let comparison: Comparison
        let day: CalendarDate

        func admits(_ other: CalendarDate) -> Bool { comparison.holds(other, against: day) }
    }

    /// A `_lastUpdated` bound: a day (every time in it) or a time ("2026-11-27T04:18:54Z"),
    /// compared with the `meta.lastUpdated` the client is served (`ClientLastUpdated`).
    struct UpdatedBound {
        let comparison: Comparison
        let value: String

        func admits(_ recorded: String) -> Bool {
            // A day compares with the day part; a time with the time (both in rxvault's one form,
            // so the text order is the time order).
            comparison.holds(value.count == 10 ? String(recorded.prefix(10)) : recorded, against: value)
        }
    }

    var patient: String?
    var dateWritten: [DateBound] = []
    var lastUpdated: [UpdatedBound] = []
    /// `_include=VisionPrescription:patient`: the page's patients as entries of their own.
    var includePatients = false
    var status: String?
    var identifier: String?
    var count = ServeSettings.defaultPageSize
    var offset = 0

    static let supported = [
        "patient", "datewritten", "status", "identifier", "_lastUpdated", "_include", "_count", "_offset"
    ]

    init(_ parameters: [(String, String)]) throws(APIError) {
        for (name, value) in parameters {
            switch name {
            case "patient":
                // "Patient/<id>" or "<id>".
                patient = value.hasPrefix("Patient/") ? String(value.dropFirst("Patient/".count)) : value
            case "datewritten":
                let (comparison, text) = Comparison.split(value)
                guard let day = CalendarDate(iso: text) else {
                    throw .invalid(
                        "datewritten: '\(value)' is not a date (YYYY-MM-DD, optionally after ge, le, gt, lt or eq)")
                }
                dateWritten.append(DateBound(comparison: comparison, day: day))
            case "status":
                // A token search: one code or several, comma-separated (FHIR's OR).
                guard RecordStatus.list(value) != nil, value != "all" else {
                    throw .invalid(
                        "status: one or more of \(RecordStatus.allCases.map(\.rawValue).joined(separator: ", ")), comma-separated"
                    )
                }
                status = value
            case "identifier":
                // "system|value" or "value"; the system, when given, must be rxvault's.
                if let bar = value.firstIndex(of: "|") {
                    let system = String(value[..<bar])
                    guard system.isEmpty || system == FHIR.identifierSystem else {
                        identifier = "\u{0}"
                        continue
                    }
                    identifier = String(value[value.index(after: bar)...])
                } else {
                    identifier = value
                }
            case "_lastUpdated":
                let (comparison, bound) = Comparison.split(value)
                guard CalendarDate(iso: bound) != nil || Vault.isTimestamp(bound) else {
                    throw .invalid(
                        "_lastUpdated: '\(value)' is not a date or time (YYYY-MM-DD or YYYY-MM-DDTHH:MM:SSZ, optionally after ge, le, gt, lt or eq)"
                    )
                }
                lastUpdated.append(UpdatedBound(comparison: comparison, value: bound))
            case "_include":
                guard value == "VisionPrescription:patient" else {
                    throw .invalid("_include: only VisionPrescription:patient is supported")
                }
                includePatients = true
            case "_count":
                // More than the largest page is that page, as FHIR servers answer; 0 asks for the
                // total alone.
                guard let n = Int(value), n >= 0 else {
                    throw .invalid("_count: a number from 0 (at most \(ServeSettings.maxPageSize) are sent)")
                }
                count = min(n, ServeSettings.maxPageSize)
            case "_offset":
                guard let n = Int(value), n >= 0, n <= 10_000_000 else { throw .invalid("_offset: a number from 0") }
                offset = n
            default:
                throw .invalid(
                    "unsupported search parameter '\(name)' (supported: \(Self.supported.joined(separator: ", ")))")
            }
        }
    }

    /// Whether the prescription matches; `lastUpdated` is when it last changed for the client
    /// (`ClientLastUpdated`), what `_lastUpdated` compares.
    func matches(_ record: PrescriptionRecord, lastUpdated: String) -> Bool {
        if let patient, FHIR.patientResourceID(record.prescription.patient) != patient { return false }
        if let status, !(RecordStatus.list(status) ?? []).contains(record.prescription.recordStatus) { return false }
        // The whole id, or the owner's short form of it (8 or more hex digits, as `list` shows).
        if let identifier {
            let wanted = identifier.lowercased()
            guard wanted == record.id.hex || (wanted.count >= 8 && record.id.hex.hasPrefix(wanted)) else {
                return false
            }
        }
        if !self.lastUpdated.allSatisfy({ $0.admits(lastUpdated) }) { return false }
        return dateWritten.allSatisfy { $0.admits(record.prescription.issued) }
    }

    /// The query string of this search at another offset (for Bundle links).
    func query(offset: Int) -> String {
        var parts: [String] = []
        func add(_ name: String, _ value: String) { parts.append("\(name)=\(value.percentEncodedForQuery)") }
        if let patient { add("patient", "Patient/" + patient) }
        for bound in dateWritten { add("datewritten", bound.comparison.rawValue + bound.day.description) }
        if let status { add("status", status) }
        if let identifier { add("identifier", identifier) }
        for bound in lastUpdated { add("_lastUpdated", bound.comparison.rawValue + bound.value) }
        if includePatients { add("_include", "VisionPrescription:patient") }
        add("_count", String(count))
        add("_offset", String(offset))
        return parts.joined(separator: "&")
    }
}

extension String {
    /// Every byte but the unreserved ones (RFC 3986) percent-encoded.
    var percentEncodedForQuery: String {
        var out = ""
        for byte in utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                out +=
                    "%" + String(byte >> 4, radix: 16, uppercase: true)
                    + String(byte & 0x0f, radix: 16, uppercase: true)
            }
        }
        return out
    }
}
