/// A decimal quantity held exactly as a whole number of hundredths.
///
/// Lens powers come in 0.25 D steps and lengths in tenths of a millimetre; binary floating point
/// cannot hold 0.1 exactly, and a vault must print back exactly what was written on the paper.
/// Every lens value in rxvault is therefore stored, compared and validated as hundredths.
public struct Hundredths: Hashable, Comparable, Sendable {
    /// The value times 100 (`-2.25` is `-225`).
    public let raw: Int

    public init(raw: Int) { self.raw = raw }
    public init(_ whole: Int) { self.raw = whole * 100 }

    public static let zero = Hundredths(raw: 0)
    public static func < (a: Hundredths, b: Hundredths) -> Bool { a.raw < b.raw }

    public var isZero: Bool { raw == 0 }
    public var negated: Hundredths { Hundredths(raw: -raw) }
    public static func + (a: Hundredths, b: Hundredths) -> Hundredths { Hundredths(raw: a.raw + b.raw) }

    /// Whether the value is a whole multiple of `step` (given in hundredths, e.g. 25 for 0.25).
    public func isMultiple(of step: Int) -> Bool { raw % step == 0 }

    /// The value as a Double, for arithmetic that is not stored (spherical equivalent, vertex conversion).
    public var doubleValue: Double { Double(raw) / 100 }

    /// Parses `-2.25`, `+2`, `.5`, `14.20`. At most two significant decimals (trailing zeros are fine);
    /// anything else (`1.234`, `2,5`, `1e3`, empty) is `nil`.
    public init?(parsing text: Substring) {
        var chars = text[...]
        var negative = false
        if let first = chars.first, first == "+" || first == "-" || first == "\u{2212}" {
            negative = first != "+"
            chars = chars.dropFirst()
        }
        let parts = chars.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        guard let wholePart = parts.first else { return nil }
        let fractionPart = parts.count == 2 ? parts[1] : ""
        guard !(wholePart.isEmpty && fractionPart.isEmpty),
            wholePart.allSatisfy(\.isASCIIDigit), fractionPart.allSatisfy(\.isASCIIDigit),
            wholePart.count <= 6
        else { return nil }
        let significant = fractionPart.count > 2 ? fractionPart.prefix(2) : fractionPart
        guard fractionPart.dropFirst(2).allSatisfy({ $0 == "0" }) else { return nil }
        let whole = Int(wholePart) ?? 0
        let fraction = Int(significant.padding(toLength: 2)) ?? 0
        let magnitude = whole * 100 + fraction
        self.raw = negative ? -magnitude : magnitude
    }

    public init?(parsing text: String) { self.init(parsing: text[...]) }

    /// Converts a JSON number, refusing values that are not whole hundredths (`1.234`).
    public init?(exactly value: Double) {
        guard value.isFinite, abs(value) < 1_000_000 else { return nil }
        let scaled = (value * 100).rounded()
        guard abs(scaled - value * 100) < 1e-6 else { return nil }
        self.raw = Int(scaled)
    }

    /// `+2.00`, `-0.75`, `0.00`: the signed two-decimal form used for dioptres.
    public var signedPower: String {
        let sign = raw > 0 ? "+" : raw < 0 ? "-" : ""
        return sign + Self.digits(abs(raw), minimumDecimals: 2)
    }

    /// `14.2`, `8.65`, `63.0`: the unsigned form used for millimetres and prism dioptres.
    public var plain: String {
        (raw < 0 ? "-" : "") + Self.digits(abs(raw), minimumDecimals: 1)
    }

    /// `1.5`, `2`, `0.25`: as short as possible (for messages and notation).
    public var short: String {
        (raw < 0 ? "-" : "") + Self.digits(abs(raw), minimumDecimals: 0)
    }

    /// The whole part and two decimals, trailing zeros dropped down to `minimumDecimals` (0 to 2).
    private static func digits(_ magnitude: Int, minimumDecimals: Int) -> String {
        let whole = magnitude / 100
        let fraction = magnitude % 100
        let needed = fraction == 0 ? 0 : fraction % 10 == 0 ? 1 : 2
        switch max(needed, minimumDecimals) {
        case 0: return String(whole)
        case 1: return "\(whole).\(fraction / 10)"
        default: return "\(whole).\(fraction / 10)\(fraction % 10)"
        }
    }
}

extension Character {
    /// 0-9 only. Not `("0"..."9").contains(self)`: that also matches a digit carrying a combining
    /// mark ("2\u{0301}"), which `Int` then cannot read.
    var isASCIIDigit: Bool {
        guard let ascii = asciiValue else { return false }
        return ascii >= 0x30 && ascii <= 0x39
    }
}

extension StringProtocol {
    func padding(toLength length: Int, leftPadding: Bool = false) -> String {
        let pad = String(repeating: "0", count: Swift.max(0, length - count))
        return leftPadding ? pad + self : String(self) + pad
    }
}
