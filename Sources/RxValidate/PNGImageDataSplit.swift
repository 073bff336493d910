/// Compressed image data is noise to a browser, and noise sometimes spells a tag. By the rules'
/// arithmetic random bytes hold something `ActiveMarkup` refuses (`<svg ` or an `on...=`
/// attribute) about once in 8 billion bytes, so about one 30 MiB scan in 250 was refused as "a
/// PNG and an HTML page at once" (CI met one), and a PNG whose image data fills the sniffed
/// first 1445 bytes about one in a thousand (`<b `, `<p `, `<a `: 2.4e-7 a byte each).
///
/// The IDAT chunks of a PNG are one zlib stream cut into pieces anywhere the writer likes (PNG
/// specification, third edition, 10.1 and 11.2.4): cutting it once more changes no pixel, and
/// the chunk header and CRC put between the markup's first byte and the rest break what a
/// browser would read. The validator splits there and checks again, so what is stored still
/// has no markup that acts; markup anywhere else (a kept text chunk, a private chunk, after
/// IEND) stays refused.
enum PNGImageDataSplit {
    /// Splits allowed in one file. Chance hits are about one per 8 billion bytes; a file that
    /// needs more was made to hold markup, and is refused as before.
    static let maxSplits = 8

    /// The file with the IDAT chunk that holds `offset` cut into two chunks just after it, or nil
    /// when `offset` and the byte after it are not both in one IDAT chunk's data.
    static func split(_ bytes: [UInt8], after offset: Int) -> [UInt8]? {
        guard
            let chunk = PNGChunks.read(bytes).first(where: {
                $0.type == "IDAT" && $0.data.contains(offset) && $0.data.contains(offset + 1)
            })
        else { return nil }
        var out = Array(bytes[..<chunk.start])
        out.reserveCapacity(bytes.count + 12)
        out += Self.chunk(bytes[chunk.data.lowerBound...offset])
        out += Self.chunk(bytes[(offset + 1)..<chunk.data.upperBound])
        out += bytes[chunk.end...]
        return out
    }

    /// An IDAT chunk of `data`: length, type, data, CRC-32 over type and data.
    static func chunk(_ data: ArraySlice<UInt8>) -> [UInt8] {
        let type = Array("IDAT".utf8)
        let length = UInt32(data.count)
        var out: [UInt8] = (0..<4).map { UInt8(truncatingIfNeeded: length >> (24 - 8 * $0)) } + type
        out += data
        var crc = CRC32()
        crc.update(type)
        crc.update(data)
        out += (0..<4).map { UInt8(truncatingIfNeeded: crc.value >> (24 - 8 * $0)) }
        return out
    }
}

/// The CRC-32 PNG chunks carry (ISO 3309, the polynomial 0xEDB88320 reflected; PNG
/// specification, third edition, 5.5).
struct CRC32 {
    private static let table: [UInt32] = (0..<256).map { n in
        (0..<8).reduce(UInt32(n)) { c, _ in c & 1 != 0 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
    }
    private var register: UInt32 = 0xFFFF_FFFF

    mutating func update<Bytes: Sequence<UInt8>>(_ bytes: Bytes) {
        for byte in bytes { register = Self.table[Int((register ^ UInt32(byte)) & 0xFF)] ^ (register >> 8) }
    }

    var value: UInt32 { register ^ 0xFFFF_FFFF }
}
