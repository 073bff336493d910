/// Whether a prescription stands at all: FHIR's `VisionPrescription.status` (the fm-status codes,
/// a required binding). FHIR marks the element a modifier: a reader that ignores it misreads the
/// resource, so a withdrawn prescription (cancelled, draft, entered in error) is never valid,
/// whatever its dates say, in any output, filter or API answer of rxvault.
public enum RecordStatus: String, Sendable, CaseIterable, Hashable {
    case active
    case cancelled
    case draft
    case enteredInError = "entered-in-error"

    /// Anything but `active`: never valid, never due, never matched by a validity filter.
    public var isWithdrawn: Bool { self != .active }

    /// `active,cancelled` (codes, comma-separated) or `all`, for `--status` options.
    public static func list(_ text: String) -> Set<RecordStatus>? {
        if text == "all" { return Set(allCases) }
        var chosen = Set<RecordStatus>()
        for code in text.split(separator: ",", omittingEmptySubsequences: false) {
            let trimmed = code.drop { $0 == " " }.reversed().drop { $0 == " " }
            guard let status = RecordStatus(rawValue: String(trimmed.reversed())) else { return nil }
            chosen.insert(status)
        }
        return chosen.isEmpty ? nil : chosen
    }
}

extension Prescription {
    /// The prescription's FHIR status. Stored where every rxvault since kept FHIR elements keeps an
    /// imported status (the kept `status` member, absent when active; docs/format.md), so a vault
    /// written now reads the same in those versions and an edit made by one carries it over.
    /// A kept status that is not an fm-status code (not a string, or another string: no rxvault
    /// writes one) reads as `cancelled`: a modifier not understood must not make it valid.
    public var recordStatus: RecordStatus {
        get {
            guard let kept = fhir?.resource["status"], kept != .string("active") else { return .active }
            if case .string(let code) = kept, let status = RecordStatus(rawValue: code) { return status }
            return .cancelled
        }
        set {
            var kept = fhir ?? KeptFHIR()
            kept.resource["status"] = newValue == .active ? nil : .string(newValue.rawValue)
            fhir = kept.isEmpty ? nil : kept
        }
    }
}
