import RxModel

/// One version of a prescription as the vault holds it: where it lives and what it says.
public struct PrescriptionRecord: Sendable {
    public let id: PrescriptionID
    /// 1 for the first version; each `edit` adds one.
    public let version: Int
    /// When this version was written (ISO 8601, UTC). Stored inside the ciphertext.
    public let recorded: String
    public let prescription: Prescription
}

/// The plaintext sealed in each version's `content` (docs/format.md, "Record content").
struct RecordContent: Codable {
    /// Content schema version, so later fields can be added and old records still read.
    var schema: Int
    var recorded: String
    var prescription: Prescription

    static let currentSchema = 1
}
