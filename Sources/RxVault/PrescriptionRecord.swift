import RxModel

/// One version of a prescription as the vault holds it: where it lives and what it says.
public struct PrescriptionRecord: Sendable {
    public let id: PrescriptionID
    /// 1 for the first version; each `edit` adds one.
    public let version: Int
    /// When this version was written (ISO 8601, UTC). Stored inside the ciphertext.
    public let recorded: String
    public let prescription: Prescription
    /// Why this version exists when it is not an edit ("re-keyed: access revoked"); nil for edits.
    public var change: String? = nil
}

/// The plaintext sealed in each version's `content` (docs/format.md, "Record content").
struct RecordContent: Codable {
    /// Content schema version, so later fields can be added and old records still read.
    var schema: Int
    var recorded: String
    var prescription: Prescription
    /// Set on versions made by re-keying rather than editing.
    var change: String?

    static let currentSchema = 1
}

extension RecordContent {
    /// Reads decrypted content with `JSONReading` (the `Codable` decoding's fast twin: opening
    /// every version of every prescription is most of what an export or a search does).
    init(json bytes: UnsafeRawBufferPointer) throws {
        let c = try JSONValueReader(JSONTree(parsing: bytes)).object()
        self.init(
            schema: try c.required("schema").int(), recorded: try c.required("recorded").string(),
            prescription: try Prescription(json: c.required("prescription")), change: try c.optional("change")?.string()
        )
    }
}
