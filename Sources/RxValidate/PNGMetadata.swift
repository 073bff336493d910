/// A PNG is stored without its metadata unless the owner asks to keep it (`attach
/// --keep-metadata`): a phone's eXIf chunk can hold where the photo was taken, text chunks the
/// software, the author or anything else, and a JPEG or HEIC photo already loses all of that on
/// conversion. Only what changes how the image looks stays.
enum PNGMetadata {
    /// Kept: the image itself, its colour (palette, transparency, gamma, chromaticities, sRGB,
    /// ICC profile, significant bits, cICP and the HDR chunks), its background and its pixel
    /// size, which a printout of a scan at its real size needs.
    static let kept: Set<String> = [
        "IHDR", "PLTE", "IDAT", "IEND", "tRNS", "gAMA", "cHRM", "sRGB", "iCCP", "sBIT", "cICP", "mDCV", "cLLI",
        "bKGD", "pHYs"
    ]

    /// The file without the other chunks, and what was dropped ("eXIf", "tEXt x3"), in file
    /// order. The chunks kept are copied byte for byte, CRCs included.
    static func strip(_ bytes: [UInt8], chunks: [PNGChunk]) -> (stored: [UInt8], dropped: [String]) {
        let droppedChunks = chunks.filter { !kept.contains($0.type) }
        guard !droppedChunks.isEmpty, let last = chunks.last else { return (bytes, []) }
        var stored = Array(bytes[0..<8])
        stored.reserveCapacity(bytes.count)
        for chunk in chunks where kept.contains(chunk.type) { stored += bytes[chunk.start..<chunk.end] }
        // Whatever follows IEND was refused before; keep the file whole past the walk otherwise.
        stored += bytes[last.end...]
        var counts: [(String, Int)] = []
        for chunk in droppedChunks {
            if let i = counts.firstIndex(where: { $0.0 == chunk.type }) {
                counts[i].1 += 1
            } else {
                counts.append((chunk.type, 1))
            }
        }
        return (stored, counts.map { $0.1 == 1 ? $0.0 : "\($0.0) x\($0.1)" })
    }
}
