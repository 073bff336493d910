/// The limits a file must stay within to be accepted (README.md, "Attachments").
public struct ValidationLimits: Sendable, Codable, Equatable {
    /// Largest file accepted, checked before the whole file is read. Set per vault at `init`.
    public var maxBytes: Int
    /// Largest PNG side, in pixels.
    public var maxImageSide: UInt32
    /// Largest PNG area: a 16384 x 16384 image that compresses to a few hundred KB would need
    /// 1 GiB of RGBA to display; 50 megapixels covers any phone photo or scan.
    public var maxPixels: UInt64
    /// Largest decompressed ancillary chunk (text, ICC profile) libpng may allocate.
    public var maxChunkBytes: Int
    /// Most pages a PDF may have; a prescription is a page or two.
    public var maxPages: Int32
    /// Largest PDF page side in points (14400 = 200 inches, the PDF specification's own limit).
    public var maxPagePoints: Double
    /// Longest side, in pixels, of the low-resolution render every page must survive.
    public var checkRenderPixels: Int32

    public static let defaultMaxBytes = 32 << 20
    /// What a vault may set as its largest attachment (`init --max-attachment-size`); a header
    /// value outside it was not written by rxvault and is refused before any use.
    public static let maxBytesRange = 1...(1 << 40)

    public init(maxBytes: Int = ValidationLimits.defaultMaxBytes, maxImageSide: UInt32 = 16384,
                maxPixels: UInt64 = 50_000_000, maxChunkBytes: Int = 8 << 20, maxPages: Int32 = 100,
                maxPagePoints: Double = 14_400, checkRenderPixels: Int32 = 200) {
        self.maxBytes = maxBytes
        self.maxImageSide = maxImageSide
        self.maxPixels = maxPixels
        self.maxChunkBytes = maxChunkBytes
        self.maxPages = maxPages
        self.maxPagePoints = maxPagePoints
        self.checkRenderPixels = checkRenderPixels
    }
}
