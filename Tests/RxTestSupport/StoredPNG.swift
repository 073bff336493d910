/// A greyscale PNG whose pixel bytes appear in the file as given: its zlib stream is one stored
/// (uncompressed) block, as a writer at level 0 makes, so a test can put exactly the bytes it
/// wants into the image data. Written here, apart from rxvault's chunk code, so a test of what
/// rxvault stores does not trust the code it tests.
public func storedPNG(width: Int, rows: [[UInt8]]) -> [UInt8] {
    precondition(rows.allSatisfy { $0.count == width })
    let raw: [UInt8] = rows.flatMap { row -> [UInt8] in [0] + row } // filter type 0 (None) before each row
    precondition(raw.count <= 0xFFFF, "one stored block holds at most 65,535 bytes")
    var a: UInt32 = 1
    var b: UInt32 = 0
    for byte in raw {
        a = (a + UInt32(byte)) % 65521
        b = (b + a) % 65521
    }
    let length = UInt16(raw.count)
    let lengths: [UInt8] = [UInt8(length & 0xFF), UInt8(length >> 8), UInt8(~length & 0xFF), UInt8(~length >> 8)]
    var zlib: [UInt8] = [0x78, 0x01, 0x01] + lengths
    zlib += raw
    zlib += bigEndian(b << 16 | a)
    let header = bigEndian(UInt32(width)) + bigEndian(UInt32(rows.count)) + [8, 0, 0, 0, 0]
    return [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + pngChunk("IHDR", header) + pngChunk("IDAT", zlib)
        + pngChunk("IEND", [])
}

/// The image data of a PNG: its IDAT chunks' data joined, the zlib stream a decoder inflates.
/// Two files with the same IHDR and image data have the same pixels however the IDAT is cut.
public func pngImageData(_ png: [UInt8]) -> [UInt8] {
    var data: [UInt8] = []
    var at = 8
    while at + 12 <= png.count {
        let length = png[at..<at + 4].reduce(0) { $0 << 8 | Int($1) }
        if String(decoding: png[at + 4..<at + 8], as: UTF8.self) == "IDAT" { data += png[at + 8..<at + 8 + length] }
        at += 12 + length
    }
    return data
}

public func pngChunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
    let typed = Array(type.utf8) + data
    var crc: UInt32 = 0xFFFF_FFFF
    for byte in typed {
        crc ^= UInt32(byte)
        for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
    }
    return bigEndian(UInt32(data.count)) + typed + bigEndian(~crc)
}

func bigEndian(_ value: UInt32) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: value >> (24 - 8 * $0)) } }
