import CRxValidate

/// What a PNG carries besides its still image, checked chunk by chunk before libpng decodes it
/// (SECURITY.md, "Refused content"): libpng never decodes an animation's frames, and inflates
/// each text chunk under a limit of its own, so these rules are rxvault's.
enum PNGContent {
    /// The animation chunks of APNG (PNG third edition, 11.3.6).
    static let animationChunks: Set<String> = ["acTL", "fcTL", "fdAT"]

    static func check(_ chunks: [PNGChunk], in bytes: [UInt8], limits: ValidationLimits) throws(AttachmentRefusal) {
        try refuseAnimation(chunks, in: bytes)
        try refuseOtherFormats(chunks, in: bytes)
        try checkTextBudget(chunks, in: bytes, limits: limits)
    }

    /// An animated PNG is refused whole: a viewer that plays it shows frames libpng never decoded
    /// (garbage, or a frame that claims 200 MiB), and a scan of a paper prescription has none.
    static func refuseAnimation(_ chunks: [PNGChunk], in bytes: [UInt8]) throws(AttachmentRefusal) {
        guard let first = chunks.first(where: { animationChunks.contains($0.type) }) else { return }
        let frames = chunks.filter { $0.type == "fcTL" }.count
        throw AttachmentRefusal(
            .notPNGOrPDF,
            "an animated PNG (APNG: \(first.type) chunk at byte \(first.start), \(frames) frame\(frames == 1 ? "" : "s")) is not accepted: only still images are; save the page as a plain PNG"
        )
    }

    /// A private or unregistered chunk whose data is another kind of file (a ZIP, PDF, HTML page,
    /// image or program) makes the PNG a carrier for it; and a PDF header in the first 1024 bytes
    /// (where PDF readers look for one) makes the PNG open as a PDF too.
    static func refuseOtherFormats(_ chunks: [PNGChunk], in bytes: [UInt8]) throws(AttachmentRefusal) {
        for chunk in chunks where chunk.isPrivate || !PNGChunk.registered.contains(chunk.type) {
            let looks = ContentSniffer.describe(Array(bytes[chunk.data.prefix(1024)]))
            if !["unrecognised data", "a text file", "an empty file"].contains(looks) {
                throw AttachmentRefusal(
                    .notPNGOrPDF,
                    "PNG carries another file: its \(chunk.isPrivate ? "private " : "")chunk \(chunk.type) at byte \(chunk.start) holds \(looks)"
                )
            }
        }
        try refusePDFHeader(in: bytes)
    }

    /// A PDF header in the first 1024 bytes, where PDF readers look for one.
    static func refusePDFHeader(in bytes: [UInt8]) throws(AttachmentRefusal) {
        if let at = firstIndex(of: Array("%PDF-".utf8), in: Array(bytes.prefix(1024))) {
            throw AttachmentRefusal(
                .notPNGOrPDF,
                "file is a PNG and a PDF at once (a PDF header at byte \(at), where PDF readers look for one)")
        }
    }

    /// Text and ICC profile chunks may decompress to `limits.maxChunkBytes` all together, not
    /// each: fifty 7 MiB zTXt chunks would otherwise cost 350 MiB of inflating.
    static func checkTextBudget(_ chunks: [PNGChunk], in bytes: [UInt8], limits: ValidationLimits)
        throws(AttachmentRefusal)
    {
        let budget = UInt64(limits.maxChunkBytes)
        var total: UInt64 = 0
        var counted = 0
        for chunk in chunks {
            let size: UInt64
            switch chunk.type {
            case "tEXt": size = UInt64(chunk.data.count)
            case "zTXt", "iCCP", "iTXt":
                guard let stream = compressedPayload(of: chunk, in: bytes) else {
                    size = UInt64(chunk.data.count)
                    break
                }
                let inflated = bytes[stream].withUnsafeBufferPointer {
                    rx_zlib_inflated_size($0.baseAddress, $0.count, budget - min(total, budget))
                }
                guard inflated >= 0 else {
                    throw AttachmentRefusal(
                        .corrupt,
                        "PNG data is corrupt: the \(chunk.type) chunk at byte \(chunk.start) does not decompress")
                }
                size = UInt64(inflated)
            default: continue
            }
            total += size
            counted += 1
            if total > budget {
                throw AttachmentRefusal(
                    .limit,
                    "PNG has text and profile chunks that decompress to over \(ByteCount(Int(budget))) together (\(counted) chunks by the \(chunk.type) at byte \(chunk.start))"
                )
            }
        }
    }

    /// The zlib stream inside a zTXt, iCCP or compressed iTXt chunk (PNG third edition, 11.3.3);
    /// nil when the chunk is not compressed or its layout is wrong (libpng then says how).
    static func compressedPayload(of chunk: PNGChunk, in bytes: [UInt8]) -> Range<Int>? {
        let data = bytes[chunk.data]
        guard let keywordEnd = data.firstIndex(of: 0) else { return nil }
        switch chunk.type {
        case "zTXt", "iCCP":
            // keyword, 0, compression method, stream
            return keywordEnd + 2 <= data.endIndex ? keywordEnd + 2..<data.endIndex : nil
        default:
            // iTXt: keyword, 0, compression flag, method, language tag, 0, translated keyword, 0, text
            guard keywordEnd + 3 <= data.endIndex, data[keywordEnd + 1] == 1,
                let languageEnd = data[(keywordEnd + 3)...].firstIndex(of: 0),
                let translatedEnd = data[(languageEnd + 1)...].firstIndex(of: 0)
            else { return nil }
            return translatedEnd + 1..<data.endIndex
        }
    }
}
