import RxCrypto

/// A recovery code (format 4 key slots, `rxvault key add --recovery`): 160 random bits a person
/// writes down, shown as 8 groups of 5 characters such as `7K3QF-9M2XA-...`.
///
/// Each group is 4 data characters (20 bits) and 1 check character, in Crockford's base 32
/// (digits and capitals without I, L, O, U, so nothing reads as something else; I and L are read
/// as 1 and O as 0, in either case). The check character of group g (0-based) with data values
/// v0...v3 is (3·v0 + 5·v1 + 7·v2 + 9·v3 + 17·g + 1) mod 32: every weight is odd, so any single
/// mistyped character changes it, and a whole group typed at another group's place does too.
/// Two neighbouring characters swapped are caught unless they are 16 apart in the alphabet.
/// Whatever the checks miss, the code still has to open a slot: a wrong code never opens the vault.
public struct RecoveryCode: Sendable {
    public static let alphabet = Array("0123456789ABCDEFGHJKMNPQRSTVWXYZ")
    public static let groupCount = 8
    public static let dataCharactersPerGroup = 4
    public static let secretLength = 20
    static let weights = [3, 5, 7, 9]

    /// The 20 secret bytes.
    public let secret: SecretBytes

    init(secret: SecretBytes) { self.secret = secret }

    /// A new random code.
    public static func generate() -> RecoveryCode { RecoveryCode(secret: SecretBytes(randomCount: secretLength)) }

    /// What went wrong reading a typed code, in words that say where.
    public struct Mistake: Error, Equatable, CustomStringConvertible {
        public let description: String
    }

    static func checkValue(group: Int, data: [Int]) -> Int {
        var sum = 17 * group + 1
        for (value, weight) in zip(data, weights) { sum += value * weight }
        return sum % 32
    }

    /// The code as it is shown once: `XXXXX-XXXXX-...` (a String: shown, never stored).
    public var text: String {
        let values = secret.withUnsafeBytes { bytes -> [Int] in
            var values: [Int] = []
            var accumulator = 0
            var bits = 0
            for byte in bytes {
                accumulator = (accumulator << 8) | Int(byte)
                bits += 8
                while bits >= 5 {
                    bits -= 5
                    values.append((accumulator >> bits) & 31)
                }
                accumulator &= (1 << bits) - 1
            }
            return values
        }
        var groups: [String] = []
        for g in 0..<Self.groupCount {
            let data = Array(values[g * 4..<g * 4 + 4])
            groups.append(String((data + [Self.checkValue(group: g, data: data)]).map { Self.alphabet[$0] }))
        }
        return groups.joined(separator: "-")
    }

    /// Reads a typed code: spaces, dashes and line breaks are ignored, case too; every group's
    /// check character is verified and each wrong group is named.
    public static func parse(_ typed: SecretBytes) throws(Mistake) -> RecoveryCode {
        var symbols: [Int] = []
        var mistakes: [String] = []
        typed.withUnsafeBytes { bytes in
            for byte in bytes {
                var c = byte
                if c == UInt8(ascii: " ") || c == UInt8(ascii: "-") || c == UInt8(ascii: "\n")
                    || c == UInt8(ascii: "\r") || c == UInt8(ascii: "\t")
                {
                    continue
                }
                if c >= UInt8(ascii: "a") && c <= UInt8(ascii: "z") { c -= 32 }
                switch c {
                case UInt8(ascii: "O"): c = UInt8(ascii: "0")
                case UInt8(ascii: "I"), UInt8(ascii: "L"): c = UInt8(ascii: "1")
                default: break
                }
                if let index = alphabet.firstIndex(of: Character(Unicode.Scalar(c))), c < 128 {
                    symbols.append(index)
                } else if mistakes.isEmpty {
                    let group = symbols.count / 5 + 1
                    mistakes.append(
                        c < 128 && c >= 32
                            ? "'\(Character(Unicode.Scalar(c)))' in group \(group) is not a recovery-code character (digits and letters except U)"
                            : "group \(group) holds a character that is not in a recovery code")
                }
            }
        }
        defer { for i in symbols.indices { symbols[i] = 0 } }
        if let first = mistakes.first { throw Mistake(description: first) }
        guard symbols.count == groupCount * 5 else {
            throw Mistake(
                description:
                    "a recovery code is \(groupCount) groups of 5 characters (\(groupCount * 5) in all); this one has \(symbols.count)"
            )
        }
        var wrong: [String] = []
        for g in 0..<groupCount {
            let group = Array(symbols[g * 5..<g * 5 + 5])
            if checkValue(group: g, data: Array(group.prefix(4))) != group[4] { wrong.append(String(g + 1)) }
        }
        if !wrong.isEmpty {
            throw Mistake(
                description: wrong.count == 1
                    ? "group \(wrong[0]) of the recovery code is mistyped (its check character does not match)"
                    : "groups \(wrong.joined(separator: ", ")) of the recovery code are mistyped (their check characters do not match)"
            )
        }
        var data: [Int] = []
        for g in 0..<groupCount { data += symbols[g * 5..<g * 5 + 4] }
        let secret = SecretBytes(zeroedCount: secretLength)
        secret.withUnsafeMutableBytes { out in
            var accumulator = 0
            var bits = 0
            var n = 0
            for value in data {
                accumulator = (accumulator << 5) | value
                bits += 5
                if bits >= 8 {
                    bits -= 8
                    out[n] = UInt8((accumulator >> bits) & 0xff)
                    n += 1
                    accumulator &= (1 << bits) - 1
                }
            }
            accumulator = 0
        }
        for i in data.indices { data[i] = 0 }
        return RecoveryCode(secret: secret)
    }
}
