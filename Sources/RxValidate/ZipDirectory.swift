/// Finds a ZIP archive that a ZIP reader would open inside another file: an end-of-central-
/// directory record (APPNOTE 6.3.10, 4.3.16) anywhere in the bytes, with a central directory
/// where the record says (or where a reader looks when data was put in front of the archive).
/// Both signatures must agree, so four bytes that happen to match inside compressed data are
/// not taken for an archive.
enum ZipDirectory {
    struct Found: Equatable {
        /// Offset of the end-of-central-directory record.
        let record: Int
        /// Entries the archive lists (nil for ZIP64, which keeps the count elsewhere).
        let entries: Int?
    }

    static let endSignature: [UInt8] = [0x50, 0x4B, 0x05, 0x06]
    static let centralSignature: [UInt8] = [0x50, 0x4B, 0x01, 0x02]
    static let zip64LocatorSignature: [UInt8] = [0x50, 0x4B, 0x06, 0x07]
    static let zip64EndSignature: [UInt8] = [0x50, 0x4B, 0x06, 0x06]

    static func find(in bytes: [UInt8]) -> Found? {
        bytes.withUnsafeBufferPointer { buffer -> Found? in
            guard buffer.count >= 22 else { return nil }
            func matches(_ signature: [UInt8], at offset: Int) -> Bool {
                offset >= 0 && offset + 4 <= buffer.count && buffer[offset] == signature[0]
                    && buffer[offset + 1] == signature[1] && buffer[offset + 2] == signature[2]
                    && buffer[offset + 3] == signature[3]
            }
            func le16(_ at: Int) -> Int { Int(buffer[at]) | Int(buffer[at + 1]) << 8 }
            func le32(_ at: Int) -> Int { le16(at) | le16(at + 2) << 16 }
            var offset = 0
            while offset + 22 <= buffer.count {
                guard buffer[offset] == 0x50, matches(endSignature, at: offset) else {
                    offset += 1
                    continue
                }
                let entries = le16(offset + 10)
                let size = le32(offset + 12)
                let start = le32(offset + 16)
                if entries == 0xFFFF || size == 0xFFFF_FFFF || start == 0xFFFF_FFFF {
                    // ZIP64: a locator just before the record, pointing back at a ZIP64 record.
                    if matches(zip64LocatorSignature, at: offset - 20) {
                        let zip64 = le32(offset - 20 + 8)
                        if matches(zip64EndSignature, at: zip64) || matches(zip64EndSignature, at: offset - 20 - 56) {
                            return Found(record: offset, entries: nil)
                        }
                    }
                } else if entries > 0, size >= 46 * entries, size <= offset {
                    if matches(centralSignature, at: offset - size) || matches(centralSignature, at: start) {
                        return Found(record: offset, entries: entries)
                    }
                }
                offset += 1
            }
            return nil
        }
    }
}
