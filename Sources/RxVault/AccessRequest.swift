import Foundation
import RxModel

/// A client's request for access, made over the API (`rxvault serve`), as HealthKit's apps ask
/// for a person's records: why, and which patient or kinds of prescription it wants. The owner
/// approves chosen prescriptions (ordinary grants) or denies it; the client learns only what it
/// was granted. Requests live in the audit log (an `access-requested` entry, then an
/// `access-answered` one), so the file holds no new table and every step is on the record.
public struct AccessRequest: Sendable, Equatable {
    public enum Status: String, Sendable {
        case pending, approved, denied, expired
    }

    /// 16 hex digits, random.
    public let id: String
    public let client: ClientID
    public let reason: String
    /// A patient's name as the client wrote it (nil: any).
    public let patient: String?
    /// Kinds asked for (empty: any).
    public let kinds: [PrescriptionKind]
    public let requested: String
    /// After this time the request is no longer shown to the owner as pending.
    public let expires: String
    public var status: Status
    /// What an approval granted (prescription ids).
    public var granted: [PrescriptionID]

    /// How many requests a client may have pending at once: a client cannot flood the owner.
    public static let maximumPending = 5
    /// How long a request waits for the owner.
    public static let lifetime: TimeInterval = 7 * 24 * 60 * 60
    public static let maximumReasonLength = 500

    /// What the server refuses in a request's reason or patient (the field, and why), or nil:
    /// `Vault.requestAccess` refuses it, and the owner's review refuses a request a client
    /// appended itself that the server would have refused.
    static func problem(reason: String, patient: String?) -> (field: String, problem: String)? {
        if let problem = TextField.note.problem(with: reason) { return ("reason", problem) }
        if reason.trimmingCharacters(in: .whitespaces).isEmpty || reason.count > maximumReasonLength {
            return ("reason", "1 to \(maximumReasonLength) characters")
        }
        if let patient, let problem = TextField.name.problem(with: patient) { return ("patient", problem) }
        return nil
    }
}

/// The JSON kept in the audit entries' detail.
struct AccessRequestRecord: Codable {
    var id: String
    var reason: String
    var patient: String?
    var kinds: [String]
    var expires: String
}

struct AccessAnswerRecord: Codable {
    var id: String
    var outcome: String
    var prescriptions: [String]
}

extension AuditEvent {
    /// The detail as a person reads it in `rxvault log`'s table. Access requests and answers keep
    /// their JSON in the entry (the log's JSON output and `requests` read it); here they read
    /// as "request 5c1e04a2: glasses, 'ordering lenses'" and "request 5c1e04a2 approved".
    public var readableDetail: String? {
        guard let detail else { return nil }
        switch action {
        case .accessRequested:
            guard let record = try? JSONDecoderStrict.decode(AccessRequestRecord.self, from: Array(detail.utf8)) else {
                return detail
            }
            let wanted = [
                record.patient.map { "patient \($0)" }, record.kinds.isEmpty ? nil : record.kinds.joined(separator: "+")
            ]
            .compactMap { $0 }
            return
                "request \(record.id.prefix(8)): \(wanted.isEmpty ? "any" : wanted.joined(separator: ", ")), \"\(record.reason)\""
        case .accessAnswered:
            guard let record = try? JSONDecoderStrict.decode(AccessAnswerRecord.self, from: Array(detail.utf8)) else {
                return detail
            }
            return "request \(record.id.prefix(8)) \(record.outcome)"
        default:
            return detail
        }
    }
}
