/// The limits a file must stay within to be accepted (docs/guide.md, "Attachments: the photo or scan of the paper").
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

    /// Most indirect objects in one revision of a PDF (the object walk visits every one).
    public var maxPDFObjects: Int32
    /// Most revisions: the file plus its incremental updates, each walked.
    public var maxPDFRevisions: Int32
    /// Deepest nesting of arrays and dictionaries (and longest action chain) in a PDF.
    public var maxPDFNesting: Int32
    /// Most bytes one PDF stream may decompress to: decoding stops there, so a compression bomb
    /// costs at most this much work. 256 MiB holds a 9000 x 9000 RGB scan.
    public var maxPDFStreamBytes: UInt64
    /// Most bytes all streams of a PDF may decompress to together.
    public var maxPDFDecodedBytes: UInt64

    public static let defaultMaxBytes = 32 << 20
    /// What a vault may set as its largest attachment (`init --max-attachment-size`); a header
    /// value outside it was not written by rxvault and is refused before any use.
    public static let maxBytesRange = 1...(1 << 40)

    /// Why these are not limits rxvault runs the checker with, or nil. Each is at least 1 and
    /// none is looser than rxvault's own (the defaults; tighter is fine), `maxBytes` is within
    /// `maxBytesRange`. The isolated child refuses anything else: its limits come from its
    /// command line, and a negative or absurd one must never reach a C validator or an rlimit.
    public var problem: String? {
        let own = ValidationLimits()
        guard Self.maxBytesRange.contains(maxBytes) else {
            return
                "maxBytes \(maxBytes) is outside \(Self.maxBytesRange.lowerBound) to \(Self.maxBytesRange.upperBound)"
        }
        func outside<T: Comparable & Numeric>(_ name: String, _ value: T, _ most: T) -> String? {
            value >= 1 && value <= most ? nil : "\(name) \(value) is outside 1 to \(most)"
        }
        let problems: [String?] = [
            outside("maxImageSide", maxImageSide, own.maxImageSide), outside("maxPixels", maxPixels, own.maxPixels),
            outside("maxChunkBytes", maxChunkBytes, own.maxChunkBytes), outside("maxPages", maxPages, own.maxPages),
            outside("maxPagePoints", maxPagePoints, own.maxPagePoints),
            outside("checkRenderPixels", checkRenderPixels, own.checkRenderPixels),
            outside("maxPDFObjects", maxPDFObjects, own.maxPDFObjects),
            outside("maxPDFRevisions", maxPDFRevisions, own.maxPDFRevisions),
            outside("maxPDFNesting", maxPDFNesting, own.maxPDFNesting),
            outside("maxPDFStreamBytes", maxPDFStreamBytes, own.maxPDFStreamBytes),
            outside("maxPDFDecodedBytes", maxPDFDecodedBytes, own.maxPDFDecodedBytes)
        ]
        return problems.lazy.compactMap { $0 }.first
    }

    public init(
        maxBytes: Int = ValidationLimits.defaultMaxBytes, maxImageSide: UInt32 = 16384,
        maxPixels: UInt64 = 50_000_000, maxChunkBytes: Int = 8 << 20, maxPages: Int32 = 100,
        maxPagePoints: Double = 14_400, checkRenderPixels: Int32 = 200, maxPDFObjects: Int32 = 200_000,
        maxPDFRevisions: Int32 = 64, maxPDFNesting: Int32 = 100, maxPDFStreamBytes: UInt64 = 256 << 20,
        maxPDFDecodedBytes: UInt64 = 1 << 30
    ) {
        self.maxBytes = maxBytes
        self.maxImageSide = maxImageSide
        self.maxPixels = maxPixels
        self.maxChunkBytes = maxChunkBytes
        self.maxPages = maxPages
        self.maxPagePoints = maxPagePoints
        self.checkRenderPixels = checkRenderPixels
        self.maxPDFObjects = maxPDFObjects
        self.maxPDFRevisions = maxPDFRevisions
        self.maxPDFNesting = maxPDFNesting
        self.maxPDFStreamBytes = maxPDFStreamBytes
        self.maxPDFDecodedBytes = maxPDFDecodedBytes
    }
}
