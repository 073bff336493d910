/// A recursive-descent parser over contiguous bytes.
struct JSONParser {
    let bytes: UnsafeBufferPointer<UInt8>
    var p = 0
    /// `JSONDecoder` refuses documents nested deeper than this.
    static let maximumDepth = 512
    var depth = 0

    init(_ bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

    func fail(_ problem: String, at offset: Int? = nil) -> JSONReadError {
        JSONReadError(offset: offset ?? p, problem: problem)
    }

    mutating func document() throws(JSONReadError) -> JSONTree {
        skipSpace()
        let value = try self.value()
        skipSpace()
        guard p == bytes.count else { throw fail("unexpected text after the value") }
        return value
    }

    mutating func skipSpace() {
        while p < bytes.count {
            switch bytes[p] {
            case 0x20, 0x09, 0x0a, 0x0d: p += 1
            default: return
            }
        }
    }

    mutating func value() throws(JSONReadError) -> JSONTree {
        guard p < bytes.count else { throw fail("unexpected end of the document") }
        switch bytes[p] {
        case UInt8(ascii: "{"): return try object()
        case UInt8(ascii: "["): return try array()
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"):
            try literal("true")
            return .bool(true)
        case UInt8(ascii: "f"):
            try literal("false")
            return .bool(false)
        case UInt8(ascii: "n"):
            try literal("null")
            return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try number())
        default: throw fail("unexpected character")
        }
    }

    mutating func literal(_ word: StaticString) throws(JSONReadError) {
        let n = word.utf8CodeUnitCount
        guard p + n <= bytes.count else { throw fail("unexpected end of the document") }
        let w = word.utf8Start
        for i in 0..<n where bytes[p + i] != w[i] { throw fail("unexpected character") }
        p += n
    }

    mutating func enter() throws(JSONReadError) {
        depth += 1
        guard depth <= Self.maximumDepth else { throw fail("nested too deeply") }
    }

    mutating func object() throws(JSONReadError) -> JSONTree {
        try enter()
        defer { depth -= 1 }
        p += 1
        var members: [JSONMember] = []
        skipSpace()
        if p < bytes.count, bytes[p] == UInt8(ascii: "}") {
            p += 1
            return .object(members)
        }
        // Keys seen, checked by a scan while the object is small (almost all are) and in a set
        // past that, so an object of many members costs no more than linear time.
        var seen: Set<String> = []
        while true {
            skipSpace()
            guard p < bytes.count, bytes[p] == UInt8(ascii: "\"") else { throw fail("expected a key") }
            let keyStart = p
            let key = try string()
            if members.count < 16 {
                if members.contains(where: { $0.key == key }) { throw duplicate(key, at: keyStart) }
                if members.count == 15 { seen = Set(members.map(\.key) + [key]) }
            } else if !seen.insert(key).inserted {
                throw duplicate(key, at: keyStart)
            }
            skipSpace()
            guard p < bytes.count, bytes[p] == UInt8(ascii: ":") else { throw fail("expected ':'") }
            p += 1
            skipSpace()
            members.append(JSONMember(key: key, value: try value()))
            skipSpace()
            guard p < bytes.count else { throw fail("unexpected end of the document") }
            if bytes[p] == UInt8(ascii: ",") {
                p += 1
                skipSpace()
                if p < bytes.count, bytes[p] == UInt8(ascii: "}") {
                    p += 1
                    return .object(members)
                }
                continue
            }
            guard bytes[p] == UInt8(ascii: "}") else { throw fail("expected ',' or '}'") }
            p += 1
            return .object(members)
        }
    }

    func duplicate(_ key: String, at offset: Int) -> JSONReadError {
        var error = fail("the key \"\(key)\" appears twice in one object", at: offset)
        error.duplicateKey = key
        return error
    }

    mutating func array() throws(JSONReadError) -> JSONTree {
        try enter()
        defer { depth -= 1 }
        p += 1
        var elements: [JSONTree] = []
        skipSpace()
        if p < bytes.count, bytes[p] == UInt8(ascii: "]") {
            p += 1
            return .array(elements)
        }
        while true {
            skipSpace()
            elements.append(try value())
            skipSpace()
            guard p < bytes.count else { throw fail("unexpected end of the document") }
            if bytes[p] == UInt8(ascii: ",") {
                p += 1
                skipSpace()
                if p < bytes.count, bytes[p] == UInt8(ascii: "]") {
                    p += 1
                    return .array(elements)
                }
                continue
            }
            guard bytes[p] == UInt8(ascii: "]") else { throw fail("expected ',' or ']'") }
            p += 1
            return .array(elements)
        }
    }

    /// A string starting at its opening quote; leaves `p` past the closing one.
    mutating func string() throws(JSONReadError) -> String {
        let start = p
        p += 1
        // Fast path: no escapes (the usual case): the bytes are the string, once validated.
        var q = p
        while q < bytes.count {
            let b = bytes[q]
            if b == UInt8(ascii: "\"") {
                let slice = UnsafeBufferPointer(rebasing: bytes[p..<q])
                guard let text = String(validating: slice, as: UTF8.self) else {
                    throw fail("a string is not valid UTF-8", at: start)
                }
                p = q + 1
                return text
            }
            if b == UInt8(ascii: "\\") { break }
            guard b >= 0x20 else { throw fail("a control character inside a string", at: q) }
            q += 1
        }
        guard q < bytes.count else { throw fail("a string is not closed", at: start) }
        // Slow path: unescape into a buffer.
        var out: [UInt8] = Array(bytes[p..<q])
        p = q
        while p < bytes.count {
            let b = bytes[p]
            switch b {
            case UInt8(ascii: "\""):
                p += 1
                guard let text = String(validating: out, as: UTF8.self) else {
                    throw fail("a string is not valid UTF-8", at: start)
                }
                return text
            case UInt8(ascii: "\\"):
                p += 1
                guard p < bytes.count else { throw fail("a string is not closed", at: start) }
                let e = bytes[p]
                p += 1
                switch e {
                case UInt8(ascii: "\""): out.append(0x22)
                case UInt8(ascii: "\\"): out.append(0x5c)
                case UInt8(ascii: "/"): out.append(0x2f)
                case UInt8(ascii: "b"): out.append(0x08)
                case UInt8(ascii: "f"): out.append(0x0c)
                case UInt8(ascii: "n"): out.append(0x0a)
                case UInt8(ascii: "r"): out.append(0x0d)
                case UInt8(ascii: "t"): out.append(0x09)
                case UInt8(ascii: "u"):
                    var scalar = try hex4()
                    if (0xD800...0xDBFF).contains(scalar) {
                        guard p + 1 < bytes.count, bytes[p] == UInt8(ascii: "\\"), bytes[p + 1] == UInt8(ascii: "u")
                        else {
                            throw fail("a lone surrogate in a string")
                        }
                        p += 2
                        let low = try hex4()
                        guard (0xDC00...0xDFFF).contains(low) else { throw fail("a lone surrogate in a string") }
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    } else if (0xDC00...0xDFFF).contains(scalar) {
                        throw fail("a lone surrogate in a string")
                    }
                    guard let u = Unicode.Scalar(scalar) else { throw fail("an invalid \\u escape") }
                    out.append(contentsOf: UTF8.encode(u)!)
                default:
                    throw fail("an invalid escape in a string", at: p - 2)
                }
            default:
                guard b >= 0x20 else { throw fail("a control character inside a string") }
                out.append(b)
                p += 1
            }
        }
        throw fail("a string is not closed", at: start)
    }

    mutating func hex4() throws(JSONReadError) -> UInt32 {
        guard p + 4 <= bytes.count else { throw fail("an invalid \\u escape") }
        var v: UInt32 = 0
        for _ in 0..<4 {
            let b = bytes[p]
            let d: UInt8
            switch b {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): d = b - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): d = b - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): d = b - UInt8(ascii: "A") + 10
            default: throw fail("an invalid \\u escape")
            }
            v = v << 4 | UInt32(d)
            p += 1
        }
        return v
    }

    /// The integer part of a number's exact decimal value (`123456789012345678.5` is
    /// 123456789012345678, `1.5e1` is 15), nil when it does not fit in an Int.
    static func integerPart(_ text: String) -> Int? {
        var t = Substring(text)
        let negative = t.hasPrefix("-")
        if negative { t = t.dropFirst() }
        var exponent = 0
        if let e = t.firstIndex(where: { $0 == "e" || $0 == "E" }) {
            guard let value = Int(t[t.index(after: e)...].drop { $0 == "+" }) else { return nil }
            exponent = value
            t = t[..<e]
        }
        let parts = t.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        var digits = String(parts[0])
        var fraction = parts.count > 1 ? String(parts[1]) : ""
        if exponent > 0 {
            guard exponent < 400 else { return nil }
            let moved = fraction.prefix(exponent)
            digits += moved + String(repeating: "0", count: exponent - moved.count)
            fraction = String(fraction.dropFirst(exponent))
        } else if exponent < 0 {
            let n = min(-exponent, digits.count)
            digits = String(digits.dropLast(n))
        }
        let trimmed = digits.drop { $0 == "0" }
        guard !trimmed.isEmpty else { return 0 }
        return Int((negative ? "-" : "") + trimmed)
    }

    /// Powers of ten a Double holds exactly (for the exact fast path).
    static let powers: [Double] = (0...22).map { n in (0..<n).reduce(1.0) { r, _ in r * 10 } }

    /// A number by the JSON grammar: `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`.
    mutating func number() throws(JSONReadError) -> JSONNumber {
        let start = p
        var negative = false
        if bytes[p] == UInt8(ascii: "-") {
            negative = true
            p += 1
        }
        func isDigit(_ b: UInt8) -> Bool { b >= 0x30 && b <= 0x39 }
        // Digits as a whole number while they fit (for the fast paths).
        var mantissa: UInt64 = 0
        var digits = 0
        var overflow = false
        guard p < bytes.count, isDigit(bytes[p]) else { throw fail("a number without digits", at: start) }
        if bytes[p] == UInt8(ascii: "0") {
            p += 1
            if p < bytes.count, isDigit(bytes[p]) { throw fail("a number with a leading zero", at: start) }
        } else {
            while p < bytes.count, isDigit(bytes[p]) {
                if digits < 19 {
                    mantissa = mantissa * 10 + UInt64(bytes[p] - 0x30)
                    digits += 1
                } else {
                    overflow = true
                }
                p += 1
            }
        }
        var fractionDigits = 0
        var isWholeText = true
        if p < bytes.count, bytes[p] == UInt8(ascii: ".") {
            isWholeText = false
            p += 1
            guard p < bytes.count, isDigit(bytes[p]) else {
                throw fail("a number with nothing after its '.'", at: start)
            }
            while p < bytes.count, isDigit(bytes[p]) {
                if digits < 19 {
                    mantissa = mantissa * 10 + UInt64(bytes[p] - 0x30)
                    digits += 1
                    fractionDigits += 1
                } else {
                    overflow = true
                }
                p += 1
            }
        }
        var hasExponent = false
        if p < bytes.count, bytes[p] == UInt8(ascii: "e") || bytes[p] == UInt8(ascii: "E") {
            isWholeText = false
            hasExponent = true
            p += 1
            if p < bytes.count, bytes[p] == UInt8(ascii: "+") || bytes[p] == UInt8(ascii: "-") { p += 1 }
            guard p < bytes.count, isDigit(bytes[p]) else { throw fail("a number with an empty exponent", at: start) }
            while p < bytes.count, isDigit(bytes[p]) { p += 1 }
        }
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<p]), as: UTF8.self)
        // The exact fast path (Clinger): mantissa and power of ten both exact in a Double.
        let double: Double
        if !overflow && !hasExponent && mantissa < (1 << 53) && fractionDigits <= 22 {
            let magnitude = Double(mantissa) / Self.powers[fractionDigits]
            double = negative ? -magnitude : magnitude
        } else {
            double = Double(text) ?? .nan
        }
        var integer: Int?
        if isWholeText && !overflow {
            integer =
                negative
                ? (mantissa <= UInt64(Int.max) + 1 ? Int(truncatingIfNeeded: 0 &- mantissa) : nil)
                : (mantissa <= UInt64(Int.max) ? Int(mantissa) : nil)
        } else if isWholeText {
            integer = Int(text)
        } else if double.isFinite && double == double.rounded(.towardZero) {
            // `JSONDecoder` reads `2.0` or `2e0` as the Int 2: a number whose Double is whole.
            // Past 2^53 every Double is whole: it then takes the exact decimal's integer part.
            integer = abs(double) < 9_007_199_254_740_992 ? Int(double) : Self.integerPart(text)
        }
        return JSONNumber(text: text, double: double, integer: integer)
    }
}
