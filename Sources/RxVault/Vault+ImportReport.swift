import Foundation
import RxCrypto
import RxModel
import RxStore
import RxValidate

/// What an import is told and reports: where its file comes from, what it may change, and
/// what it did (or would do, in a dry run) item by item.
extension Vault {
    /// Where an import file comes from, as far as this vault can tell.
    public enum ImportOrigin: Sendable, Equatable {
        /// Bound to this vault and its MAC verifies: written by this vault's owner, unchanged since.
        case thisVault
        /// No binding: a client's export, FHIR, or another program's file.
        case unbound
        /// Bound to another vault.
        case otherVault
        /// Bound to this vault, but the MAC does not verify: the file was changed after export.
        case altered

        /// Why such a file may not update prescriptions, in a few words.
        public var reason: String {
            switch self {
            case .thisVault: return "it was exported from this vault"
            case .unbound:
                return "it carries no binding to this vault (a client's export, FHIR or another program's file)"
            case .otherVault: return "it was exported from another vault"
            case .altered: return "its binding to this vault does not verify (the file was changed after export)"
            }
        }
    }

    /// What `import` may do to prescriptions that already exist here. By default nothing: an
    /// import adds new prescriptions, and an id that exists with other content refuses the
    /// whole import (ids are visible in every file, so anyone could write one that names yours).
    public struct ImportPolicy: Sendable {
        /// Store the file's content as a new version of an existing prescription (and add the
        /// attachments it lacks), when the file is bound to this vault.
        public var update: Bool
        /// Update from a file that is not bound to this vault (or whose binding fails).
        public var unverified: Bool
        /// Make new patient records for names close to an existing patient's (`PatientNearMiss`);
        /// without it such names refuse the import, listed, so a typo in one row of a practice's
        /// file cannot split a patient in two (one question per row would not do for a file).
        public var newPatients: Bool

        public init(update: Bool = false, unverified: Bool = false, newPatients: Bool = false) {
            self.update = update || unverified
            self.unverified = unverified
            self.newPatients = newPatients
        }
    }

    /// What an import did (or would do, in a dry run), item by item.
    public struct ImportReport: Sendable {
        public var added: [PrescriptionID] = []
        /// Already in the vault with the same content and attachments: left alone.
        public var unchanged: [PrescriptionID] = []
        /// In the vault with other content or fewer attachments: stored as a new version (--update).
        public var updated: [PrescriptionID] = []
        public var attachmentsAdded = 0
        public var origin: ImportOrigin = .unbound
        /// Every item in file order, with what it does (or why it is refused).
        public var items: [ImportOutcome] = []
        public var refused: [ImportOutcome] { items.filter { $0.action == .refused } }
        /// The rules' advisories for the items stored (new or updated), in file order: what
        /// `add` would have warned about (a zero cylinder with an axis stored as spherical, an
        /// unusual base curve), so an import says it too.
        public var warnings: [ImportWarning] = []
        /// The measurements of the file's patient records (revision 1.2), in file order.
        public var measurements: [MeasurementOutcome] = []
        /// Where the file's patient records come from (their own binding, `vault.patientsMac`).
        public var patientsOrigin: ImportOrigin = .unbound
        public var refusedMeasurements: [MeasurementOutcome] { measurements.filter { $0.action == .refused } }
        /// `2 new, 0 updated, 1 unchanged`, nil when the file carried no measurements.
        public var measurementCounts: String? {
            guard !measurements.isEmpty else { return nil }
            let count = { (action: ImportOutcome.Action) in self.measurements.filter { $0.action == action }.count }
            return "\(count(.new)) new, \(count(.update)) updated, \(count(.unchanged)) unchanged"
        }
    }

    /// One advisory for one item of an import: where in the file, and what.
    public struct ImportWarning: Sendable, Equatable {
        /// The item's place in the file (`prescriptions[3]`, `Bundle.entry[7]`).
        public let position: String
        public let text: String
        /// `prescriptions[3]: OD axis 38 is not made in soft lenses ...`
        public var line: String { "\(position): \(text)" }
    }

    /// One item of an import and what happens to it.
    public struct ImportOutcome: Sendable {
        public enum Action: String, Sendable { case new, unchanged, update, refused }
        public enum Refusal: Sendable, Equatable {
            /// The prescription exists with other content and no update was asked for.
            case needsUpdate
            /// An update was asked for, but the file is not bound to this vault.
            case notBound(ImportOrigin)
        }
        public let position: String
        public let id: PrescriptionID
        public let action: Action
        /// Field by field, what the file's content changes in the stored prescription.
        public let changes: [FieldChange]
        /// Names of the file's attachments this prescription does not have yet.
        public let newAttachments: [String]
        public let refusal: Refusal?

        /// `OD sphere -2.00 → -2.25; note; attachment scan.pdf added`.
        public var changeSummary: String {
            (changes.map(\.description) + newAttachments.map { "attachment \($0) added" }).joined(separator: "; ")
        }
    }

}
