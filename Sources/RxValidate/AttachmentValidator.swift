import CRxValidate

/// What the validator found in an accepted file.
public struct ValidatedAttachment: Sendable, Codable, Equatable {
    public let type: AttachmentType
    /// Pixel size of a PNG.
    public let width: UInt32?
    public let height: UInt32?
    /// Page count of a PDF.
    public let pages: Int?
    /// What the check noticed without refusing the file (a PDF stream qpdf decoded whole with a
    /// warning, which `qpdf --check` counts as no error): said to the person attaching it.
    public var notes: [String]?

    public init(
        type: AttachmentType, width: UInt32? = nil, height: UInt32? = nil, pages: Int? = nil, notes: [String]? = nil
    ) {
        self.type = type
        self.width = width
        self.height = height
        self.pages = pages
        self.notes = notes
    }
}

/// A file the validator accepted, as it is to be stored: a PNG without its metadata chunks
/// (unless they are kept), any other file byte for byte.
public struct CheckedAttachment: Sendable, Equatable {
    public let validated: ValidatedAttachment
    public let stored: [UInt8]
    /// The chunks left out of a PNG ("eXIf", "tEXt x3"), in file order; empty when none were.
    public let droppedMetadata: [String]
    /// Places where a PNG's image data was cut into one more IDAT chunk because its compressed
    /// bytes happened to spell markup (`PNGImageDataSplit`); 0 almost always. No pixel changes.
    public var imageDataSplits = 0
}

/// Parses a whole file and accepts it only if it is a PNG or PDF that a full parse finds sound.
///
/// This runs the C parsers in the calling process. It must only be called in the isolated child
/// (`ParserChild`); the vault process uses `IsolatedParser`, which survives a parser that hangs
/// or crashes.
public enum AttachmentValidator {
    /// Checks the file and says what to store. `keepMetadata` stores a PNG exactly as given;
    /// otherwise its metadata chunks are dropped (`PNGMetadata`), and what is stored is what
    /// the markup check reads.
    public static func check(_ bytes: [UInt8], limits: ValidationLimits, keepMetadata: Bool = false)
        throws(AttachmentRefusal) -> CheckedAttachment
    {
        guard bytes.count <= limits.maxBytes else {
            throw AttachmentRefusal(
                .tooLarge, "file is \(ByteCount(bytes.count)): over the \(ByteCount(limits.maxBytes)) limit")
        }
        guard let type = AttachmentType.announced(by: Array(bytes.prefix(16))) else { throw notPNGOrPDF(bytes) }
        if type == .pdf && !hasAcceptedPDFHeader(bytes) { throw notPNGOrPDF(bytes) }
        let (stored, dropped, splits) = try checkStructure(
            bytes, type: type, limits: limits, keepMetadata: keepMetadata)
        let validated = type == .png ? try validatePNG(bytes, limits: limits) : try validatePDF(bytes, limits: limits)
        // What the splits made is what is stored: libpng decodes it too, not only the file given.
        if splits > 0 { _ = try validatePNG(stored, limits: limits) }
        var checked = CheckedAttachment(validated: validated, stored: stored, droppedMetadata: dropped)
        checked.imageDataSplits = splits
        return checked
    }

    /// The rules rxvault applies itself, before libpng or poppler see the file: no ZIP archive
    /// inside, a PNG's chunks (no animation, the text budget, no other format in a private
    /// chunk), its metadata dropped unless kept, and no HTML that acts in what is stored (markup
    /// that chance put in a PNG's compressed image data is cut apart, `PNGImageDataSplit`).
    /// Returns the bytes to store, what was dropped and how many such cuts were made. Public for
    /// the fuzzer (`scripts/fuzz polyglot`).
    public static func checkStructure(
        _ bytes: [UInt8], type: AttachmentType, limits: ValidationLimits, keepMetadata: Bool
    ) throws(AttachmentRefusal) -> (stored: [UInt8], dropped: [String], splits: Int) {
        try refuseArchive(in: bytes, type: type)
        guard type == .png else {
            if let found = activeMarkup(in: bytes, type: type) { throw refusal(found, type: type) }
            return (bytes, [], 0)
        }
        let chunks = PNGChunks.read(bytes)
        try PNGContent.check(chunks, in: bytes, limits: limits)
        var (stored, dropped) = keepMetadata ? (bytes, []) : PNGMetadata.strip(bytes, chunks: chunks)
        var splits = 0
        while let found = activeMarkup(in: stored, type: type) {
            guard splits < PNGImageDataSplit.maxSplits, let split = PNGImageDataSplit.split(stored, after: found.offset)
            else { throw refusal(found, type: type) }
            stored = split
            splits += 1
        }
        if stored != bytes {
            // Dropping chunks or cutting the image data moves bytes: a ZIP directory can come to
            // sit where its end record points, a PDF header into the first 1024 bytes. What is
            // stored answers to the same rules as what was given.
            try refuseArchive(in: stored, type: type)
            try PNGContent.refusePDFHeader(in: stored)
            guard stored.count <= limits.maxBytes else {
                throw AttachmentRefusal(
                    .tooLarge,
                    "file is \(ByteCount(bytes.count)): with its image data cut apart it would be over the \(ByteCount(limits.maxBytes)) limit"
                )
            }
        }
        return (stored, dropped, splits)
    }

    static func refuseArchive(in bytes: [UInt8], type: AttachmentType) throws(AttachmentRefusal) {
        guard let archive = ZipDirectory.find(in: bytes) else { return }
        let listed = archive.entries.map { " of \($0) entr\($0 == 1 ? "y" : "ies")" } ?? ""
        throw AttachmentRefusal(
            .notPNGOrPDF,
            "file is a \(type == .png ? "PNG" : "PDF") and a ZIP archive at once (a ZIP reader opens the archive\(listed) whose directory ends at byte \(archive.record))"
        )
    }

    /// `check`'s verdict alone, for the preview renderer and the fixture tests.
    public static func validate(_ bytes: [UInt8], limits: ValidationLimits) throws(AttachmentRefusal)
        -> ValidatedAttachment
    {
        try check(bytes, limits: limits).validated
    }

    static func activeMarkup(in bytes: [UInt8], type: AttachmentType) -> ActiveMarkup.Found? {
        let sniffed = type == .pdf ? ActiveMarkup.pdfHeaderLength(bytes) : ActiveMarkup.resourceHeaderLength
        return ActiveMarkup.find(in: bytes, sniffedLength: sniffed)
    }

    static func refusal(_ found: ActiveMarkup.Found, type: AttachmentType) -> AttachmentRefusal {
        AttachmentRefusal(
            .notPNGOrPDF,
            "file is a \(type == .png ? "PNG" : "PDF") and an HTML page at once (it has \(found))"
        )
    }

    /// "%PDF-1.0" to "%PDF-1.9" or "%PDF-2.0" at the start (pdf.c checks the same again).
    static func hasAcceptedPDFHeader(_ bytes: [UInt8]) -> Bool {
        guard bytes.count >= 8, bytes.starts(with: Array("%PDF-".utf8)) else { return false }
        if bytes[5] == 0x31 && bytes[6] == 0x2E && (0x30...0x39).contains(bytes[7]) { return true }
        return bytes[5] == 0x32 && bytes[6] == 0x2E && bytes[7] == 0x30
    }

    static func notPNGOrPDF(_ bytes: [UInt8]) -> AttachmentRefusal {
        if bytes.starts(with: Array("%PDF-".utf8)) {
            let version = String(decoding: bytes.prefix(12).prefix { $0 != 0x0A && $0 != 0x0D }, as: UTF8.self)
            return AttachmentRefusal(
                .notPNGOrPDF,
                "not a PDF this vault accepts: the header says \(version) (accepted: %PDF-1.0 to %PDF-1.9, %PDF-2.0)")
        }
        return AttachmentRefusal(
            .notPNGOrPDF, "not a PNG or PDF (looks like \(ContentSniffer.describe(Array(bytes.prefix(1024)))))")
    }

    static func pngLimits(_ limits: ValidationLimits) -> rx_png_limits {
        rx_png_limits(
            max_width: limits.maxImageSide, max_height: limits.maxImageSide,
            max_pixels: limits.maxPixels, max_chunk_bytes: limits.maxChunkBytes)
    }

    static func validatePNG(_ bytes: [UInt8], limits: ValidationLimits) throws(AttachmentRefusal) -> ValidatedAttachment
    {
        var result = rx_png_result()
        var c = pngLimits(limits)
        let status = bytes.withUnsafeBufferPointer { rx_png_check($0.baseAddress, $0.count, &c, &result, nil) }
        let message = withUnsafeBytes(of: result.message) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        guard status == 0 else { throw pngRefusal(status: status, message: message, bytes: bytes, limits: limits) }
        return ValidatedAttachment(type: .png, width: result.width, height: result.height)
    }

    /// Turns libpng's terse messages into ones that say what was found.
    static func pngRefusal(status: Int32, message: String, bytes: [UInt8], limits: ValidationLimits)
        -> AttachmentRefusal
    {
        let (width, height) = declaredSize(bytes)
        if let width, let height {
            if width > limits.maxImageSide || height > limits.maxImageSide {
                return AttachmentRefusal(
                    .limit, "image is \(width)x\(height): over the \(limits.maxImageSide)-pixel side limit")
            }
            if status == 2 || UInt64(width) * UInt64(height) > limits.maxPixels {
                return AttachmentRefusal(
                    .limit, "image is \(width)x\(height): over the \(limits.maxPixels / 1_000_000) megapixel limit")
            }
            if width == 0 || height == 0 {
                return AttachmentRefusal(.corrupt, "PNG data is corrupt: the image is \(width)x\(height) pixels")
            }
        }
        if message.hasSuffix("bytes of data after the end of the image"),
            let count = Int(message.prefix { $0.isNumber }),
            count > 0, count < bytes.count
        {
            // A PNG that is also another file (a ZIP archive after IEND): say what rides along.
            let trailing = ContentSniffer.describe(Array(bytes.suffix(count).prefix(1024)))
            return AttachmentRefusal(
                .corrupt,
                "PNG has \(ByteCount(count)) after its end (IEND) that look like \(trailing): a PNG that is also another file is refused"
            )
        }
        let chunk = message.split(separator: ":").first.map(String.init) ?? ""
        if ["zTXt", "iTXt", "iCCP"].contains(chunk) && message.hasSuffix("truncated") || message.contains("too large")
            || message.contains("exceeds")
        {
            let what = chunk.isEmpty ? "a chunk" : (chunk.hasPrefix("i") ? "an " : "a ") + chunk + " chunk"
            return AttachmentRefusal(
                .limit, "PNG has \(what) that is damaged or decompresses to over \(ByteCount(limits.maxChunkBytes))")
        }
        if message.contains("CRC error") {
            return AttachmentRefusal(.corrupt, "PNG data is corrupt: CRC error in \(chunk.isEmpty ? "a chunk" : chunk)")
        }
        if message.contains("incorrect data check") {
            return AttachmentRefusal(
                .corrupt, "PNG data is corrupt: checksum error in the compressed image data (IDAT)")
        }
        return AttachmentRefusal(.corrupt, "PNG data is corrupt: \(message)")
    }

    /// Width and height as IHDR declares them (for messages when libpng refuses early).
    static func declaredSize(_ bytes: [UInt8]) -> (UInt32?, UInt32?) {
        guard bytes.count >= 24, Array(bytes[12..<16]) == Array("IHDR".utf8) else { return (nil, nil) }
        func be32(_ at: Int) -> UInt32 { bytes[at..<at + 4].reduce(0) { $0 << 8 | UInt32($1) } }
        return (be32(16), be32(20))
    }

    static func validatePDF(_ bytes: [UInt8], limits: ValidationLimits) throws(AttachmentRefusal) -> ValidatedAttachment
    {
        var result = rx_pdf_result()
        let walk = rx_pdf_walk_limits(
            max_objects: limits.maxPDFObjects, max_revisions: limits.maxPDFRevisions,
            max_depth: limits.maxPDFNesting, max_stream_bytes: limits.maxPDFStreamBytes,
            max_total_stream_bytes: limits.maxPDFDecodedBytes)
        var c = rx_pdf_limits(
            max_pages: limits.maxPages, max_page_points: limits.maxPagePoints,
            render_pixels: limits.checkRenderPixels, walk: walk)
        let status = bytes.withUnsafeBufferPointer { rx_pdf_check($0.baseAddress, $0.count, &c, &result) }
        let message = withUnsafeBytes(of: result.message) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        guard status == 0 else {
            switch Int(result.refusal) {
            case Int(RX_PDF_NOT_PDF.rawValue):
                throw notPNGOrPDF(bytes)
            case Int(RX_PDF_ENCRYPTED.rawValue): throw AttachmentRefusal(.encrypted, message)
            case Int(RX_PDF_ACTIVE_CONTENT.rawValue): throw AttachmentRefusal(.activeContent, message)
            case Int(RX_PDF_EMBEDDED_FILE.rawValue): throw AttachmentRefusal(.embeddedFile, message)
            case Int(RX_PDF_NOT_ONLY_PDF.rawValue): throw AttachmentRefusal(.notPNGOrPDF, message)
            case Int(RX_PDF_LIMIT.rawValue), Int(RX_PDF_NO_PAGES.rawValue): throw AttachmentRefusal(.limit, message)
            default:
                // A PDF header on something else (a ZIP, HTML page or text with "%PDF-1.4" on top)
                // cannot be opened: say what it looks like past the header.
                let body = Array(bytes.drop { $0 != 0x0A && $0 != 0x0D }.drop { $0 == 0x0A || $0 == 0x0D }.prefix(512))
                var looks = ContentSniffer.describe(body)
                if looks == "a text file" && firstIndex(of: Array(" obj".utf8), in: bytes) != nil { looks = "" }
                if [
                    "a ZIP archive", "an HTML or XML document", "a JPEG image", "a GIF image", "a PNG image",
                    "a text file"
                ].contains(looks) {
                    throw AttachmentRefusal(.notPNGOrPDF, "not a PNG or PDF (looks like \(looks) behind a PDF header)")
                }
                throw AttachmentRefusal(.corrupt, message)
            }
        }
        var notes: [String]?
        if result.notes > 0 {
            let first = withUnsafeBytes(of: result.note) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            let more = result.notes > 1 ? " (and \(result.notes - 1) more stream(s) like it)" : ""
            notes = [
                "qpdf warned while decoding a stream it read whole: \"\(first)\"\(more); qpdf --check counts it as no error"
            ]
        }
        return ValidatedAttachment(type: .pdf, pages: Int(result.pages), notes: notes)
    }
}

/// "31.5 MiB", "812 KiB", "120 bytes", "2 GiB". Any Int, including ones read from a hostile
/// file, prints without overflow: the arithmetic works on the quotient and remainder apart.
public struct ByteCount: CustomStringConvertible, Sendable {
    public let bytes: Int
    public init(_ bytes: Int) { self.bytes = bytes }
    public var description: String {
        if bytes < 0 { return "\(bytes) bytes" }
        for (shift, unit) in [(30, "GiB"), (20, "MiB")] where bytes >= 1 << shift {
            let whole = bytes >> shift
            let rest = bytes & ((1 << shift) - 1)
            // Tenths of the unit, rounded half up, from the remainder's top ten bits.
            var tenths = ((rest >> (shift - 10)) * 10 + 512) >> 10
            var carried = whole
            if tenths == 10 {
                carried += 1
                tenths = 0
            }
            return tenths == 0 ? "\(carried) \(unit)" : "\(carried).\(tenths) \(unit)"
        }
        if bytes >= 1 << 10 { return "\((bytes >> 10) + ((bytes & 1023) >= 512 ? 1 : 0)) KiB" }
        return bytes == 1 ? "1 byte" : "\(bytes) bytes"
    }
}
