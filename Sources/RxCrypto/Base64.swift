/// Base64 (RFC 4648) in the two alphabets rxvault speaks, unpadded unless asked, with strict
/// decoding: only the one canonical spelling of some bytes is accepted. age's header uses the
/// standard alphabet unpadded (and padded in armor); the API's bearer tokens and challenge ids
/// the URL-safe one (section 5), where a second spelling of the same bytes must not redeem a
/// challenge twice. Byte by byte, without Foundation: a server opens a token per request, and
/// Foundation's string replacements there cost a fifth of a read's time (docs/performance.md).
public struct Base64: Sendable {
    /// `A-Z a-z 0-9 + /` (section 4).
    public static let standard = Base64(alphabet: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
    /// `A-Z a-z 0-9 - _` (section 5, "base64url").
    public static let url = Base64(alphabet: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")

    private let alphabet: [UInt8]
    /// Each byte's 6-bit value, or -1 for a byte outside the alphabet.
    private let values: [Int8]

    private init(alphabet text: String) {
        alphabet = Array(text.utf8)
        var table = [Int8](repeating: -1, count: 256)
        for (i, c) in alphabet.enumerated() { table[Int(c)] = Int8(i) }
        values = table
    }

    /// Unpadded.
    public func encode(_ data: [UInt8]) -> String {
        var out: [UInt8] = []
        out.reserveCapacity((data.count * 4 + 2) / 3)
        var i = 0
        while i + 3 <= data.count {
            let n = Int(data[i]) << 16 | Int(data[i + 1]) << 8 | Int(data[i + 2])
            out.append(alphabet[n >> 18 & 63])
            out.append(alphabet[n >> 12 & 63])
            out.append(alphabet[n >> 6 & 63])
            out.append(alphabet[n & 63])
            i += 3
        }
        let rest = data.count - i
        if rest > 0 {
            let n = Int(data[i]) << 16 | (rest == 2 ? Int(data[i + 1]) << 8 : 0)
            out.append(alphabet[n >> 18 & 63])
            out.append(alphabet[n >> 12 & 63])
            if rest == 2 { out.append(alphabet[n >> 6 & 63]) }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Nil for padding, a byte outside the alphabet, an impossible length, or non-zero
    /// trailing bits (a non-canonical encoding).
    public func decode(_ text: [UInt8]) -> [UInt8]? { decode(text[...]) }

    /// As `decode(_:)`, of part of an array (not generic: a caller in another module would get
    /// an unspecialized copy, four times slower on a token).
    public func decode(_ text: ArraySlice<UInt8>) -> [UInt8]? {
        guard text.count % 4 != 1 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(text.count * 3 / 4)
        var accumulator = 0
        var bits = 0
        for c in text {
            let v = values[Int(c)]
            guard v >= 0 else { return nil }
            accumulator = (accumulator << 6 | Int(v)) & 0xFFFF
            bits += 6
            if bits >= 8 {
                bits -= 8
                out.append(UInt8(accumulator >> bits & 0xff))
            }
        }
        guard accumulator & ((1 << bits) - 1) == 0 else { return nil }
        return out
    }

    /// Padded to a multiple of four characters with `=` (age's armor).
    public func encodePadded(_ data: [UInt8]) -> String {
        let s = encode(data)
        return s + String(repeating: "=", count: (4 - s.utf8.count % 4) % 4)
    }

    /// Padded input, strictly: the length a multiple of four, at most two `=`, only at the end.
    public func decodePadded(_ text: [UInt8]) -> [UInt8]? {
        guard text.count % 4 == 0 else { return nil }
        var body = text[...]
        var padding = 0
        while body.last == UInt8(ascii: "="), padding < 2 {
            body.removeLast()
            padding += 1
        }
        guard !body.contains(UInt8(ascii: "=")) else { return nil }
        return decode(body)
    }
}
