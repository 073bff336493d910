/// Bech32 (BIP 173) as age uses it for keys: `age1...` recipients and `AGE-SECRET-KEY-1...`
/// identities. Unlike BIP 173, age places no 90-character limit on the string.
public enum Bech32 {
    static let charset = Array("qpzry9x8gf2tvdw0s3jn54khce6mua7l".utf8)
    static let generator: [UInt32] = [0x3b6a_57b2, 0x2650_8e6d, 0x1ea1_19fa, 0x3d42_33dd, 0x2a14_62b3]

    static func polymod(_ values: [UInt8]) -> UInt32 {
        var checksum: UInt32 = 1
        for value in values {
            let top = checksum >> 25
            checksum = (checksum & 0x1ff_ffff) << 5 ^ UInt32(value)
            for i in 0..<5 where (top >> UInt32(i)) & 1 == 1 { checksum ^= generator[i] }
        }
        return checksum
    }

    static func expand(_ hrp: [UInt8]) -> [UInt8] { hrp.map { $0 >> 5 } + [0] + hrp.map { $0 & 31 } }

    static func convert(_ data: [UInt8], from: Int, to: Int, pad: Bool) -> [UInt8]? {
        var accumulator = 0
        var bits = 0
        var out: [UInt8] = []
        let maxValue = (1 << to) - 1
        for value in data {
            guard Int(value) >> from == 0 else { return nil }
            accumulator = accumulator << from | Int(value)
            bits += from
            while bits >= to {
                bits -= to
                out.append(UInt8((accumulator >> bits) & maxValue))
            }
        }
        if pad {
            if bits > 0 { out.append(UInt8((accumulator << (to - bits)) & maxValue)) }
        } else if bits >= from || (accumulator << (to - bits)) & maxValue != 0 {
            return nil
        }
        return out
    }

    /// Encodes `data` under the human-readable part `hrp` (lower case).
    public static func encode(hrp: String, data: [UInt8]) -> String {
        let hrpBytes = Array(hrp.lowercased().utf8)
        let values = convert(data, from: 8, to: 5, pad: true)!
        let checksumValue = polymod(expand(hrpBytes) + values + [0, 0, 0, 0, 0, 0]) ^ 1
        let checksum = (0..<6).map { UInt8((checksumValue >> (5 * (5 - UInt32($0)))) & 31) }
        return String(
            decoding: hrpBytes + [UInt8(ascii: "1")] + (values + checksum).map { charset[Int($0)] }, as: UTF8.self)
    }

    /// Decodes a Bech32 string (all lower or all upper case). Returns the lower-case hrp and data.
    public static func decode(_ text: String) -> (hrp: String, data: [UInt8])? {
        let bytes = Array(text.utf8)
        let hasLower = bytes.contains { (97...122).contains($0) }
        let hasUpper = bytes.contains { (65...90).contains($0) }
        guard !(hasLower && hasUpper), bytes.allSatisfy({ (33...126).contains($0) }) else { return nil }
        let lowered = Array(text.lowercased().utf8)
        guard let separator = lowered.lastIndex(of: UInt8(ascii: "1")), separator >= 1, lowered.count - separator >= 7
        else { return nil }
        let hrp = Array(lowered[..<separator])
        var values: [UInt8] = []
        for byte in lowered[(separator + 1)...] {
            guard let index = charset.firstIndex(of: byte) else { return nil }
            values.append(UInt8(index))
        }
        guard polymod(expand(hrp) + values) == 1,
            let data = convert(Array(values.dropLast(6)), from: 5, to: 8, pad: false)
        else { return nil }
        return (String(decoding: hrp, as: UTF8.self), data)
    }
}
