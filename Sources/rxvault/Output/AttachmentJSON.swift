import Foundation
import RxVault

/// `attachments --format json` (docs/format.md, "Attachment list JSON v1").
struct AttachmentJSON: Encodable {
    let info: AttachmentInfo

    enum Keys: String, CodingKey { case id, name, type, mimeType, size, sha256, width, height, pages, added }

    func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: Keys.self)
        let m = info.metadata
        try c.encode(info.id.hex, forKey: .id)
        try c.encode(m.name, forKey: .name)
        try c.encode(m.type.rawValue, forKey: .type)
        try c.encode(m.type.mimeType, forKey: .mimeType)
        try c.encode(m.size, forKey: .size)
        try c.encode(m.sha256, forKey: .sha256)
        try c.encodeIfPresent(m.width, forKey: .width)
        try c.encodeIfPresent(m.height, forKey: .height)
        try c.encodeIfPresent(m.pages, forKey: .pages)
        try c.encode(m.added, forKey: .added)
    }

    static func encoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
        return encoder
    }
}

struct AttachmentListJSON: Encodable {
    static let schema = "rxvault/attachments/v1"
    let prescription: String
    let attachments: [AttachmentJSON]
    enum Keys: String, CodingKey { case schema, prescription, attachments }
    func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: Keys.self)
        try c.encode(Self.schema, forKey: .schema)
        try c.encode(prescription, forKey: .prescription)
        try c.encode(attachments, forKey: .attachments)
    }
}
