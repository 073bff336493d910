import Foundation

/// Finds the parts of a large JSON document without building it: the members of the top-level
/// object and the elements of an array, as byte ranges, so an import decodes one prescription at
/// a time instead of holding a tree of the whole file (a 100,000-prescription export as Foundation
/// objects takes gigabytes; its bytes take tens of megabytes).
///
/// It checks structure only (balanced brackets, closed strings); each range it returns is then
/// decoded by a real JSON parser, which rejects anything malformed inside it.
struct JSONScanner {
    struct Malformed: Error {
        let offset: Int
    }

    let bytes: [UInt8]

    /// The top-level object's members: key and the byte range of the value. Nil when the document
    /// is not an object.
    func topLevelMembers() throws(Malformed) -> [(key: String, value: Range<Int>)]? {
        var p = skipSpace(0)
        guard p < bytes.count, bytes[p] == UInt8(ascii: "{") else { return nil }
        var members: [(key: String, value: Range<Int>)] = []
        p = skipSpace(p + 1)
        if p < bytes.count, bytes[p] == UInt8(ascii: "}") { return try end(after: p + 1, members) }
        while true {
            guard p < bytes.count, bytes[p] == UInt8(ascii: "\"") else { throw Malformed(offset: p) }
            let keyEnd = try skipString(p)
            guard let key = try? JSONDecoder().decode(String.self, from: Data(bytes[p..<keyEnd])) else {
                throw Malformed(offset: p)
            }
            p = skipSpace(keyEnd)
            guard p < bytes.count, bytes[p] == UInt8(ascii: ":") else { throw Malformed(offset: p) }
            let start = skipSpace(p + 1)
            let valueEnd = try skipValue(start)
            members.append((key, start..<valueEnd))
            p = skipSpace(valueEnd)
            guard p < bytes.count else { throw Malformed(offset: p) }
            if bytes[p] == UInt8(ascii: ",") {
                p = skipSpace(p + 1)
                continue
            }
            guard bytes[p] == UInt8(ascii: "}") else { throw Malformed(offset: p) }
            return try end(after: p + 1, members)
        }
    }

    /// The first key that `members` (one object's) has twice; nil when each is there once.
    /// Such a document reads differently in different readers (the first or the last wins), so
    /// an import refuses it (RxModel's `JSONReadError.duplicateKey` says why).
    static func repeatedKey(_ members: [(key: String, value: Range<Int>)]) -> String? {
        var seen: Set<String> = []
        return members.first { !seen.insert($0.key).inserted }?.key
    }

    private func end(after p: Int, _ members: [(key: String, value: Range<Int>)]) throws(Malformed) -> [(
        key: String, value: Range<Int>
    )] {
        let rest = skipSpace(p)
        guard rest == bytes.count else { throw Malformed(offset: rest) }
        return members
    }

    /// The elements of the array at `range`; nil when the value there is not an array.
    func arrayElements(_ range: Range<Int>) throws(Malformed) -> [Range<Int>]? {
        var p = range.lowerBound
        guard p < range.upperBound, bytes[p] == UInt8(ascii: "[") else { return nil }
        var elements: [Range<Int>] = []
        p = skipSpace(p + 1)
        if p < bytes.count, bytes[p] == UInt8(ascii: "]") { return elements }
        while true {
            let end = try skipValue(p)
            elements.append(p..<end)
            p = skipSpace(end)
            guard p < range.upperBound else { throw Malformed(offset: p) }
            if bytes[p] == UInt8(ascii: ",") {
                p = skipSpace(p + 1)
                continue
            }
            guard bytes[p] == UInt8(ascii: "]") else { throw Malformed(offset: p) }
            return elements
        }
    }

    /// The members of the object at `range` (a nested one, unlike `topLevelMembers`); nil when
    /// the value there is not an object.
    func objectMembers(_ range: Range<Int>) throws(Malformed) -> [(key: String, value: Range<Int>)]? {
        var p = range.lowerBound
        guard p < range.upperBound, bytes[p] == UInt8(ascii: "{") else { return nil }
        var members: [(key: String, value: Range<Int>)] = []
        p = skipSpace(p + 1)
        if p < range.upperBound, bytes[p] == UInt8(ascii: "}") { return members }
        while true {
            guard p < range.upperBound, bytes[p] == UInt8(ascii: "\"") else { throw Malformed(offset: p) }
            let keyEnd = try skipString(p)
            // A key without escapes (all of FHIR's) is its bytes; only others need a decoder.
            let plain = !bytes[(p + 1)..<(keyEnd - 1)].contains(UInt8(ascii: "\\"))
            guard
                let key = plain
                    ? String(decoding: bytes[(p + 1)..<(keyEnd - 1)], as: UTF8.self)
                    : try? JSONDecoder().decode(String.self, from: Data(bytes[p..<keyEnd]))
            else { throw Malformed(offset: p) }
            p = skipSpace(keyEnd)
            guard p < range.upperBound, bytes[p] == UInt8(ascii: ":") else { throw Malformed(offset: p) }
            let start = skipSpace(p + 1)
            let valueEnd = try skipValue(start)
            members.append((key, start..<valueEnd))
            p = skipSpace(valueEnd)
            guard p < range.upperBound else { throw Malformed(offset: p) }
            if bytes[p] == UInt8(ascii: ",") {
                p = skipSpace(p + 1)
                continue
            }
            guard bytes[p] == UInt8(ascii: "}") else { throw Malformed(offset: p) }
            return members
        }
    }

    /// The value at `range` as Foundation objects (for the small parts: one element, one member).
    func object(_ range: Range<Int>) -> Any? {
        try? JSONSerialization.jsonObject(with: Data(bytes[range]), options: [.fragmentsAllowed])
    }

    func data(_ range: Range<Int>) -> Data { Data(bytes[range]) }

    // MARK: - Skipping

    func skipSpace(_ from: Int) -> Int {
        var p = from
        while p < bytes.count {
            switch bytes[p] {
            case 0x20, 0x09, 0x0a, 0x0d: p += 1
            default: return p
            }
        }
        return p
    }

    /// The end of the value starting at `from` (strings, numbers, literals, nested arrays and objects).
    func skipValue(_ from: Int) throws(Malformed) -> Int {
        guard from < bytes.count else { throw Malformed(offset: from) }
        switch bytes[from] {
        case UInt8(ascii: "\""):
            return try skipString(from)
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            var depth = 0
            var p = from
            while p < bytes.count {
                switch bytes[p] {
                case UInt8(ascii: "\""):
                    p = try skipString(p)
                    continue
                case UInt8(ascii: "{"), UInt8(ascii: "["):
                    depth += 1
                case UInt8(ascii: "}"), UInt8(ascii: "]"):
                    depth -= 1
                    if depth == 0 { return p + 1 }
                    if depth < 0 { throw Malformed(offset: p) }
                default:
                    break
                }
                p += 1
            }
            throw Malformed(offset: p)
        default:
            // A number or a literal: up to the next delimiter.
            var p = from
            while p < bytes.count {
                switch bytes[p] {
                case UInt8(ascii: ","), UInt8(ascii: "}"), UInt8(ascii: "]"), 0x20, 0x09, 0x0a, 0x0d:
                    guard p > from else { throw Malformed(offset: p) }
                    return p
                default:
                    p += 1
                }
            }
            return p
        }
    }

    /// The end of the string starting at `from` (just past its closing quote).
    func skipString(_ from: Int) throws(Malformed) -> Int {
        var p = from + 1
        while p < bytes.count {
            switch bytes[p] {
            case UInt8(ascii: "\\"): p += 2
            case UInt8(ascii: "\""): return p + 1
            default: p += 1
            }
        }
        throw Malformed(offset: from)
    }
}
