import RxModel

/// One version of a prescription as the vault holds it: where it lives and what it says.
public struct PrescriptionRecord: Sendable {
    public let id: PrescriptionID
    /// 1 for the first version; each `edit` adds one.
    public let version: Int
    /// When this version was written (ISO 8601, UTC). Stored inside the ciphertext.
    public let recorded: String
    public var prescription: Prescription
    /// Why this version exists when it is not an edit ("re-keyed: access revoked"); nil for edits.
    public var change: String? = nil
    /// Format 8: the write that made this version (`WriteStamp`); nil for versions written before.
    public var by: WriteStamp? = nil
    /// The versions this one was written on (`identity` of each): nil for the version before it
    /// by number, as every version but a merge's or a resolve's is; two or more after a merge.
    public var parents: [String]? = nil
    /// Set on a merge's version when both copies changed the prescription: the identities of the
    /// competing versions it chose between (`rxvault conflicts`); nil when there is no conflict.
    /// A record read from the search index (`list`, `query`) has it empty when in conflict: the
    /// index marks the conflict, not its versions (`Vault.conflicts` reads them).
    public var conflict: [String]? = nil

    /// Whether this version is a merge's that chose between two copies' edits: on a
    /// prescription's newest version, the prescription is in conflict until `resolve`.
    public var isInConflict: Bool { conflict != nil }

    /// What names this version in every copy of the vault, whatever its number there: its stamp,
    /// or, for a version written before format 8 (before any copy could diverge), its number.
    public var identity: String { by?.text ?? "v\(version)" }
}

/// The plaintext sealed in each version's `content` (docs/format.md, "Record content").
struct RecordContent: Codable {
    /// Content schema version, so later fields can be added and old records still read.
    var schema: Int
    var recorded: String
    var prescription: Prescription
    /// Set on versions made by re-keying rather than editing.
    var change: String?
    /// Format 8 (`PrescriptionRecord.by`, `.parents`, `.conflict`): absent before.
    var by: String? = nil
    var parents: [String]? = nil
    var conflict: [String]? = nil

    static let currentSchema = 1
}

extension RecordContent {
    /// Reads decrypted content with `JSONReading` (the `Codable` decoding's fast twin: opening
    /// every version of every prescription is most of what an export or a search does).
    init(json bytes: UnsafeRawBufferPointer) throws {
        let c = try JSONValueReader(JSONTree(parsing: bytes)).object()
        self.init(
            schema: try c.required("schema").int(), recorded: try c.required("recorded").string(),
            prescription: try Prescription(json: c.required("prescription")),
            change: try c.optional("change")?.string(),
            by: try c.optional("by")?.string(), parents: try c.optional("parents")?.array().map { try $0.string() },
            conflict: try c.optional("conflict")?.array().map { try $0.string() })
    }
}
