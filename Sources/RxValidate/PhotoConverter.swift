import CRxValidate

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The phone photo formats `attach` converts (it stores PNG and PDF only).
public enum PhotoFormat: String, Sendable, Codable {
    case jpeg = "JPEG"
    case heic = "HEIC"

    /// The format the first bytes announce: a JPEG's SOI marker, or an ISO-BMFF `ftyp` box whose
    /// major brand is one of HEIF's. Announcing is not being: the decoder still parses the file.
    public static func announced(by prefix: [UInt8]) -> PhotoFormat? {
        if prefix.starts(with: [0xFF, 0xD8, 0xFF]) { return .jpeg }
        if prefix.count >= 12, Array(prefix[4..<8]) == Array("ftyp".utf8) {
            let brand = String(decoding: prefix[8..<12], as: UTF8.self)
            if ["heic", "heix", "heim", "heis", "hevc", "hevx", "mif1", "msf1"].contains(brand) { return .heic }
        }
        return nil
    }
}

/// What a conversion made: the new PNG's size, and what it came from.
public struct PhotoConversion: Sendable, Codable, Equatable {
    public let from: PhotoFormat
    public let sourceWidth: UInt32
    public let sourceHeight: UInt32
    public let width: UInt32
    public let height: UInt32
    /// The EXIF orientation that was applied (1: none).
    public let orientation: Int

    public init(
        from: PhotoFormat, sourceWidth: UInt32, sourceHeight: UInt32, width: UInt32, height: UInt32, orientation: Int
    ) {
        self.from = from
        self.sourceWidth = sourceWidth
        self.sourceHeight = sourceHeight
        self.width = width
        self.height = height
        self.orientation = orientation
    }
}

/// Turns a phone photo (JPEG or HEIC) into a PNG that holds only its pixels, upright (DESIGN.md,
/// "Phone photos"). Nothing of the original but the pixels survives: EXIF (camera, time, GPS
/// position), XMP, ICC profiles, thumbnails, HEIF's other items and boxes are never copied,
/// because the PNG is written from decoded RGB with only IHDR, IDAT and IEND.
///
/// Like the validator, this runs the C decoders in the calling process: only the isolated child
/// (`ParserChild`, modes `convert` and `convert-full-size`) calls it.
public enum PhotoConverter {
    /// The longest side of a converted photo unless `--full-size`: a 12-megapixel phone photo
    /// (4032 x 3024) becomes 2048 x 1536, about 250 dpi across an A4 page, which keeps a
    /// prescription's smallest print legible at a few MB of PNG instead of 20.
    public static let defaultLongestSide: UInt32 = 2048
    /// libjpeg's cap on its whole-image buffers (a 50-megapixel progressive JPEG needs ~300 MiB).
    public static let maxDecoderBytes: UInt64 = 768 << 20
    /// Most scans of a progressive JPEG (libjpeg-turbo's own tools stop at 500).
    public static let maxScans: Int32 = 500

    public static func convert(_ bytes: [UInt8], limits: ValidationLimits, fullSize: Bool) throws(AttachmentRefusal)
        -> (PhotoConversion, [UInt8])
    {
        guard bytes.count <= limits.maxBytes else {
            throw AttachmentRefusal(
                .tooLarge, "file is \(ByteCount(bytes.count)): over the \(ByteCount(limits.maxBytes)) limit")
        }
        guard let format = PhotoFormat.announced(by: Array(bytes.prefix(16))) else {
            throw AttachmentRefusal(
                .notPNGOrPDF,
                "not a JPEG or HEIC photo (looks like \(ContentSniffer.describe(Array(bytes.prefix(1024)))))")
        }
        var c = rx_photo_limits(
            max_side: limits.maxImageSide, max_pixels: limits.maxPixels, max_decoder_bytes: maxDecoderBytes,
            max_scans: maxScans, target_side: fullSize ? 0 : defaultLongestSide)
        var result = rx_photo_result()
        var rgb: UnsafeMutablePointer<UInt8>?
        let status = bytes.withUnsafeBufferPointer { buffer in
            format == .jpeg
                ? rx_jpeg_decode(buffer.baseAddress, buffer.count, &c, &result, &rgb)
                : rx_heif_decode(buffer.baseAddress, buffer.count, &c, &result, &rgb)
        }
        let message = withUnsafeBytes(of: result.message) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        guard status == 0, let rgb else {
            free(rgb)
            throw refusal(format, status: status, message: message)
        }
        defer { free(rgb) }
        var out: UnsafeMutablePointer<UInt8>?
        var length = 0
        var encodeMessage = [CChar](repeating: 0, count: Int(RX_MESSAGE_SIZE))
        guard rx_png_encode_rgb(rgb, result.width, result.height, &out, &length, &encodeMessage) == 0, let out else {
            throw AttachmentRefusal(
                .parserFailed, "cannot write the converted PNG: \(PreviewRenderer.text(encodeMessage))")
        }
        defer { free(out) }
        let conversion = PhotoConversion(
            from: format, sourceWidth: result.source_width, sourceHeight: result.source_height,
            width: result.width, height: result.height, orientation: Int(result.orientation))
        return (conversion, Array(UnsafeBufferPointer(start: out, count: length)))
    }

    static func refusal(_ format: PhotoFormat, status: Int32, message: String) -> AttachmentRefusal {
        let name = format.rawValue
        switch status {
        case Int32(RX_PHOTO_LIMIT.rawValue):
            return AttachmentRefusal(
                .limit,
                message.hasPrefix("image is") ? "\(name) \(message)" : "\(name) is over a decoder limit: \(message)")
        case Int32(RX_PHOTO_UNSUPPORTED.rawValue):
            return AttachmentRefusal(.notPNGOrPDF, "cannot convert this \(name): \(message)")
        default:
            return AttachmentRefusal(.corrupt, "\(name) data is corrupt: \(message)")
        }
    }
}
