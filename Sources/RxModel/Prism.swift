/// Prism prescribed for one eye, in prism dioptres.
///
/// Written either as base directions (`1.5 BI`, or a vertical and a horizontal part such as
/// `1 BU 2 BO`) or, in 360-degree notation, as one amount and the angle of its base. Both
/// describe the same lens; rxvault keeps the form that was written on the paper.
public enum Prism: Hashable, Sendable {
    /// Rectangular form: a vertical part (base up or down) and/or a horizontal part (base in or out).
    case rectangular(vertical: Part<VerticalBase>?, horizontal: Part<HorizontalBase>?)
    /// Polar form: amount and base angle in degrees (0 to 360; 360 is the same as 0).
    case polar(amount: Hundredths, angle: Int)

    public struct Part<Base: Hashable & Sendable & Codable>: Hashable, Sendable, Codable {
        public var amount: Hundredths
        public var base: Base
        public init(amount: Hundredths, base: Base) {
            self.amount = amount
            self.base = base
        }
    }

    public enum VerticalBase: String, Hashable, Sendable, CaseIterable, Codable { case up, down }
    /// `in` is toward the nose, `out` toward the temple.
    public enum HorizontalBase: String, Hashable, Sendable, CaseIterable, Codable { case `in`, out }

    /// `1.5 BI`, `1 BU 2 BO`, `2 @ 45`: the notation read back by `LensNotation`.
    public var notation: String {
        switch self {
        case .rectangular(let vertical, let horizontal):
            var parts: [String] = []
            if let v = vertical { parts.append("\(v.amount.short) \(v.base == .up ? "BU" : "BD")") }
            if let h = horizontal { parts.append("\(h.amount.short) \(h.base == .in ? "BI" : "BO")") }
            return parts.joined(separator: " ")
        case .polar(let amount, let angle):
            return "\(amount.short) @ \(angle)"
        }
    }

    /// Every amount in the prism, for range checks.
    public var amounts: [Hundredths] {
        switch self {
        case .rectangular(let v, let h): return [v?.amount, h?.amount].compactMap { $0 }
        case .polar(let amount, _): return [amount]
        }
    }
}
