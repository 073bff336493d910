import RxValidate

/// What the vault knows about a stored attachment: the sealed metadata, opened.
public struct AttachmentInfo: Sendable, Equatable {
    public let id: AttachmentID
    public let prescriptionID: PrescriptionID
    public let metadata: AttachmentMetadata
    /// Only as `attach` returns it: the PNG chunks left out of the stored file ("eXIf",
    /// "tEXt x3"). Not stored; empty when nothing was dropped.
    public var droppedMetadata: [String] = []
    /// What the file's check noticed without refusing it (`ValidatedAttachment.notes`), when
    /// it was just attached.
    public var notes: [String] = []
    /// Only as `attach` returns it: how many times the PNG's image data was cut into one more
    /// chunk because its compressed bytes spelled markup (`PNGImageDataSplit`). Not stored.
    public var imageDataSplits = 0
}

/// The plaintext sealed in an attachment row's `metadata` (docs/format.md, "Attachment metadata").
public struct AttachmentMetadata: Codable, Sendable, Equatable {
    public var schema: Int
    /// The name shown and used by `extract` as the default file name.
    public var name: String
    public var type: AttachmentType
    /// Bytes of the stored file (a PNG's without the metadata chunks `attach` dropped).
    public var size: Int
    /// SHA-256 of the stored file (what `extract` writes), lower-case hex, as `sha256sum` prints it.
    public var sha256: String
    public var width: UInt32?
    public var height: UInt32?
    public var pages: Int?
    /// When it was attached (ISO 8601, UTC).
    public var added: String
    /// Format 8: the write that attached it (`WriteStamp.text`); nil for attachments made before.
    public var by: String? = nil

    static let currentSchema = 1

    /// "1200x1600 px" or "3 pages".
    public var dimensions: String {
        if let width, let height { return "\(width)x\(height) px" }
        if let pages { return pages == 1 ? "1 page" : "\(pages) pages" }
        return "-"
    }
}

extension AttachmentInfo {
    /// Finds an attachment by exact name or unique id prefix (at least 4 characters) among
    /// `candidates`: the one rule for the owner and for clients.
    static func resolve(_ reference: String, among candidates: [AttachmentInfo]) throws(VaultError) -> AttachmentID {
        let byName = candidates.filter { $0.metadata.name == reference }
        if byName.count == 1 { return byName[0].id }
        if byName.count > 1 {
            throw .ambiguousAttachment("the name '\(reference)'", candidates: describe(byName, among: candidates))
        }
        let lowered = reference.lowercased()
        guard lowered.count >= RecordID.minimumPrefixLength, RecordID.isHex(lowered) else {
            throw .attachmentNotFound(reference)
        }
        let matches = candidates.filter { $0.id.hex.hasPrefix(lowered) }
        guard let first = matches.first else { throw .attachmentNotFound(reference) }
        guard matches.count == 1 else {
            throw .ambiguousAttachment("the id prefix \(reference)", candidates: describe(matches, among: candidates))
        }
        return first.id
    }

    /// One line per attachment to choose from: an id prefix that picks it out among all of the
    /// prescription's attachments, its type, size and when it was added (not its name, which
    /// may name the patient: errors never carry patient data).
    static func describe(_ matches: [AttachmentInfo], among all: [AttachmentInfo]) -> [String] {
        let short = RecordID.shortForms(all.map(\.id))
        return matches.map {
            "\(short[$0.id] ?? $0.id.short)  \($0.metadata.type.rawValue), \(ByteCount($0.metadata.size)), added \($0.metadata.added)"
        }
    }

    /// "7c01a2b3 (scan.pdf)": how an attachment is named in messages.
    var label: String { "\(id.short) (\(metadata.name))" }

    /// Streams an attachment (read through `read`) into the isolated parser and returns the
    /// preview PNG it renders.
    static func preview(width: UInt32, parser: IsolatedParser, read: (([UInt8]) throws -> Void) throws -> Void) throws
        -> [UInt8]
    {
        let session = try parser.start(mode: .preview, previewWidth: width)
        try read { chunk in chunk.withUnsafeBytes { _ = session.send($0) } }
        do { return try session.finish().1 } catch { throw VaultError.attachmentRefused(error) }
    }
}
