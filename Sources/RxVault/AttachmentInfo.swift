import RxValidate

/// What the vault knows about a stored attachment: the sealed metadata, opened.
public struct AttachmentInfo: Sendable, Equatable {
    public let id: AttachmentID
    public let prescriptionID: PrescriptionID
    public let metadata: AttachmentMetadata
}

/// The plaintext sealed in an attachment row's `metadata` (docs/format.md, "Attachment metadata").
public struct AttachmentMetadata: Codable, Sendable, Equatable {
    public var schema: Int
    /// The name shown and used by `extract` as the default file name.
    public var name: String
    public var type: AttachmentType
    /// Bytes of the original file.
    public var size: Int
    /// SHA-256 of the original file, lower-case hex, as `sha256sum` prints it.
    public var sha256: String
    public var width: UInt32?
    public var height: UInt32?
    public var pages: Int?
    /// When it was attached (ISO 8601, UTC).
    public var added: String

    static let currentSchema = 1

    /// "1200x1600 px" or "3 pages".
    public var dimensions: String {
        if let width, let height { return "\(width)x\(height) px" }
        if let pages { return pages == 1 ? "1 page" : "\(pages) pages" }
        return "-"
    }
}
