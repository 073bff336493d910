/// One chunk of a PNG as the file lays it out (PNG specification, third edition, 5.3): the
/// offset of its length field, its four-letter type and where its data lies. Its CRC is libpng's
/// to check, which reads the whole file after the pre-checks that use these.
struct PNGChunk: Equatable {
    let type: String
    let start: Int
    let data: Range<Int>
    /// Just past the CRC.
    var end: Int { data.upperBound + 4 }

    /// Bit 5 of the second letter: a private chunk, defined by no published specification.
    var isPrivate: Bool { type.utf8.dropFirst().first.map { $0 & 0x20 != 0 } ?? false }

    /// The chunk types the PNG specification (third edition) and its registered extensions
    /// define. Anything else is someone's own data, which no viewer shows.
    static let registered: Set<String> = [
        "IHDR", "PLTE", "IDAT", "IEND", "tRNS", "cHRM", "gAMA", "iCCP", "sBIT", "sRGB", "cICP", "mDCV", "cLLI",
        "tEXt", "zTXt", "iTXt", "bKGD", "hIST", "pHYs", "sPLT", "eXIf", "tIME", "acTL", "fcTL", "fdAT",
        "oFFs", "pCAL", "sCAL", "gIFg", "gIFx", "gIFt", "sTER", "dSIG", "fRAc"
    ]
}

enum PNGChunks {
    /// The chunks from the signature up to and including IEND, as far as they are laid out
    /// correctly. A damaged layout ends the list early: libpng, which decodes the whole file
    /// next, says what is wrong with it.
    static func read(_ bytes: [UInt8]) -> [PNGChunk] {
        var chunks: [PNGChunk] = []
        var offset = 8
        while offset + 12 <= bytes.count {
            let length = bytes[offset..<offset + 4].reduce(0) { $0 << 8 | Int($1) }
            let typeBytes = bytes[offset + 4..<offset + 8]
            guard length <= Int(Int32.max), typeBytes.allSatisfy(isASCIILetter),
                length <= bytes.count - offset - 12
            else { break }
            let type = String(decoding: typeBytes, as: UTF8.self)
            chunks.append(PNGChunk(type: type, start: offset, data: offset + 8..<offset + 8 + length))
            offset += 12 + length
            if type == "IEND" { break }
        }
        return chunks
    }

    static func isASCIILetter(_ byte: UInt8) -> Bool { (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) }
}
