import RxValidate
import RxVault

/// The bytes `attach` stores: the file as it comes (streamed), or, for a phone photo, the PNG the
/// isolated child converted it to. The first chunk is read up front to tell which.
struct AttachSource {
    let input: InputFile
    let limit: Int
    /// The first chunk of the input, not yet handed on.
    private var head: [UInt8]
    private var headOffset = 0
    /// The converted PNG, once `convert` ran: then it is all there is to read.
    private var converted: [UInt8]?
    private var convertedOffset = 0

    init(input: InputFile, limit: Int) throws {
        self.input = input
        self.limit = limit
        var first = [UInt8](repeating: 0, count: Vault.attachmentChunkSize)
        let count = try input.read(into: &first)
        head = Array(first[0..<count])
    }

    /// JPEG or HEIC, by the first bytes (the child decides whether it really is one).
    var photoFormat: PhotoFormat? { converted == nil ? PhotoFormat.announced(by: Array(head.prefix(16))) : nil }

    /// Reads the rest of the photo (up to the vault's limit) and has the child convert it.
    mutating func convert(parser: IsolatedParser, fullSize: Bool) throws -> PhotoConversion {
        let rest = try input.readAll(
            limit: max(0, limit - head.count),
            tooLarge: CLIError(
                .invalidInput, "refused: file is over the \(ByteCount(limit)) limit of this vault",
                hint: "a larger limit is chosen when the vault is made (rxvault init --max-attachment-size)"))
        let (conversion, png) = try parser.convertPhoto(head + rest, fullSize: fullSize)
        converted = png
        head = []
        return conversion
    }

    /// The name stored when none is given: the file's own, with .png for a converted photo
    /// ("IMG_2041.HEIC" becomes "IMG_2041.png").
    func defaultName(for fileName: String) -> String {
        guard converted != nil else { return fileName }
        let stem = fileName.split(separator: ".", omittingEmptySubsequences: false).dropLast().joined(separator: ".")
        return (fileName.contains(".") && !stem.isEmpty ? stem : fileName) + ".png"
    }

    /// Fills `buffer` like `InputFile.read`: the head, then the rest of the input, or the PNG.
    mutating func read(into buffer: inout [UInt8]) throws -> Int {
        if let png = converted {
            let count = min(buffer.count, png.count - convertedOffset)
            buffer.replaceSubrange(0..<count, with: png[convertedOffset..<convertedOffset + count])
            convertedOffset += count
            return count
        }
        if headOffset < head.count {
            let count = min(buffer.count, head.count - headOffset)
            buffer.replaceSubrange(0..<count, with: head[headOffset..<headOffset + count])
            headOffset += count
            return count
        }
        return try input.read(into: &buffer)
    }
}

/// What `attach` says about a conversion, on stderr (stdout keeps only the new id).
enum PhotoText {
    static func converted(_ c: PhotoConversion) -> String {
        var text =
            "converted from \(c.from.rawValue) (\(c.sourceWidth)x\(c.sourceHeight)) to a \(c.width)x\(c.height) PNG"
        if c.orientation != 1 { text += ", turned upright (EXIF orientation \(c.orientation))" }
        if max(c.width, c.height) < max(c.sourceWidth, c.sourceHeight) {
            text += ", scaled down (--full-size keeps every pixel)"
        }
        return text + "; its metadata (EXIF, GPS position, camera) was not kept"
    }
}
