/// The two kinds of file a vault accepts as an attachment, decided by content, never by name.
public enum AttachmentType: String, Sendable, Codable, CaseIterable {
    case png
    case pdf

    public var mimeType: String { self == .png ? "image/png" : "application/pdf" }
    public var fileExtension: String { rawValue }

    /// The type the first bytes announce, if any: the PNG signature or a `%PDF-` header at offset 0.
    /// Announcing is not being: the validator still parses the whole file.
    public static func announced(by prefix: [UInt8]) -> AttachmentType? {
        if prefix.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return .png }
        if prefix.starts(with: Array("%PDF-".utf8)) { return .pdf }
        return nil
    }
}

/// Says what a refused file looks like, for the message ("not a PNG or PDF (looks like a ZIP
/// archive)"). Only for explaining: acceptance never depends on it.
public enum ContentSniffer {
    public static func describe(_ prefix: [UInt8]) -> String {
        func starts(_ bytes: [UInt8]) -> Bool { prefix.starts(with: bytes) }
        func startsText(_ text: String) -> Bool {
            let head = String(decoding: prefix.prefix(512), as: UTF8.self).lowercased()
            return head.trimmingLeadingSpace().hasPrefix(text)
        }
        if prefix.isEmpty { return "an empty file" }
        if starts([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return "a PNG image" }
        if let at = firstIndex(of: Array("%PDF-".utf8), in: prefix), at > 0 {
            return "a PDF with \(at) bytes before its header"
        }
        if let at = firstIndex(of: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A], in: prefix), at > 0 {
            return "a PNG with \(at) bytes before its signature"
        }
        if starts([0x50, 0x4B, 0x03, 0x04]) || starts([0x50, 0x4B, 0x05, 0x06]) { return "a ZIP archive" }
        if starts([0xFF, 0xD8, 0xFF]) { return "a JPEG image" }
        if starts(Array("GIF87a".utf8)) || starts(Array("GIF89a".utf8)) { return "a GIF image" }
        if starts(Array("RIFF".utf8)) && prefix.count >= 12 && Array(prefix[8..<12]) == Array("WEBP".utf8) {
            return "a WebP image"
        }
        if starts([0x49, 0x49, 0x2A, 0x00]) || starts([0x4D, 0x4D, 0x00, 0x2A]) { return "a TIFF image" }
        if prefix.count >= 12 && Array(prefix[4..<8]) == Array("ftyp".utf8) { return "a HEIC/MP4 file" }
        if starts([0x1F, 0x8B]) { return "a gzip archive" }
        if starts([0x7F, 0x45, 0x4C, 0x46]) { return "an executable" }
        if starts([0x42, 0x4D]) { return "a BMP image" }
        if startsText("<!doctype html") || startsText("<html") || startsText("<?xml") || startsText("<svg") {
            return startsText("<svg") ? "an SVG image" : "an HTML or XML document"
        }
        let sample = prefix.prefix(512)
        let printable = sample.filter { $0 == 9 || $0 == 10 || $0 == 13 || ($0 >= 32 && $0 != 127) }.count
        if printable == sample.count, String(validating: Array(sample), as: UTF8.self) != nil {
            return "a text file"
        }
        return "unrecognised data"
    }
}

func firstIndex(of needle: [UInt8], in haystack: [UInt8]) -> Int? {
    guard !needle.isEmpty, haystack.count >= needle.count else { return nil }
    return (0...(haystack.count - needle.count)).first { Array(haystack[$0..<$0 + needle.count]) == needle }
}

extension String {
    func trimmingLeadingSpace() -> Substring { drop { $0.isWhitespace || $0 == "\u{FEFF}" } }
}
