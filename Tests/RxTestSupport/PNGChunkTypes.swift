/// The chunk types of a PNG, in file order, read independently of rxvault's own chunk walk, so a
/// test of what rxvault stores does not trust the code it tests.
public func pngChunkTypes(_ png: [UInt8]) -> [String] {
    var types: [String] = []
    var at = 8
    while at + 8 <= png.count {
        let length = png[at..<at + 4].reduce(0) { $0 << 8 | Int($1) }
        types.append(String(decoding: png[at + 4..<at + 8], as: UTF8.self))
        at += 12 + length
    }
    return types
}
