import Foundation

/// A visual acuity as written on the chart card, kept exactly as written, with its logMAR value
/// for charts and comparison.
///
/// Four notations are read, and only these, because a misread acuity is a wrong clinical record:
/// - Snellen in feet, `20/20`, `20/40` (numerator 20);
/// - Snellen in metres, `6/6`, `6/12`, `6/7.5`, and the 4 m and 3 m charts (`4/4`, `3/3`);
/// - decimal, `1.0`, `0.5`, `1.25` (a plain number above 0);
/// - logMAR, `logMAR 0.00`, `logMAR -0.10`, `0.30 logMAR` (the word is required: `0.3` alone is
///   decimal 0.3, which is logMAR 0.52, and guessing between the two is what this type refuses).
///
/// logMAR = log10(denominator / numerator) for Snellen and -log10(decimal) for decimal acuity
/// (the minimum angle of resolution in arc minutes is the Snellen fraction's inverse). Accepted
/// range: logMAR -0.30 (20/10, 6/3, decimal 2.0) to 2.00 (20/2000, 6/600, decimal 0.01). Count
/// fingers, hand motion and light perception have no agreed logMAR and are refused.
public struct VisualAcuity: Sendable, Hashable {
    public enum Notation: String, Sendable, Hashable {
        case snellenFeet = "snellen-feet"
        case snellenMetres = "snellen-metres"
        case decimal
        case logMAR = "logmar"
    }

    /// The text as given, white space trimmed and runs of it made one space.
    public let written: String
    public let notation: Notation
    /// The logMAR value, unrounded (Snellen and decimal convert to irrational values).
    public let logMAR: Double

    public static let minimumLogMAR = -0.30
    public static let maximumLogMAR = 2.00
    /// The notations accepted, for messages.
    public static let forms = "Snellen 20/20 (feet) or 6/6 (metres), decimal 1.0, or 'logMAR 0.00'"

    /// Reads `text` strictly; the error says what was wrong and which forms are read.
    public init(parsing text: String) throws(VisualAcuityError) {
        let written = text.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        guard !written.isEmpty else { throw VisualAcuityError("is empty; write \(Self.forms)") }
        let lower = written.lowercased()
        if ["cf", "hm", "lp", "nlp", "pl", "npl"].contains(lower) || lower.hasPrefix("cf ") {
            throw VisualAcuityError(
                "'\(written)': count fingers, hand motion and light perception have no agreed logMAR value")
        }
        if written.contains(",") {
            throw VisualAcuityError("'\(written)': write decimals with a dot (0.8), not a comma")
        }
        if lower.hasPrefix("logmar") || lower.hasSuffix("logmar") {
            let number = lower.hasPrefix("logmar") ? lower.dropFirst(6) : lower.dropLast(6)
            guard let value = Hundredths(parsing: number.trimmingCharacters(in: .whitespaces)) else {
                throw VisualAcuityError(
                    "'\(written)': a logMAR value is a number with at most two decimals, e.g. 'logMAR 0.10'")
            }
            try self.init(written: written, notation: .logMAR, logMAR: value.doubleValue)
            return
        }
        if written.contains("/") {
            try self.init(snellen: written)
            return
        }
        guard let value = Hundredths(parsing: written), !written.hasPrefix("+") else {
            throw VisualAcuityError("'\(written)' is not a visual acuity; write \(Self.forms)")
        }
        guard value.raw > 0 else {
            throw VisualAcuityError(
                "'\(written)' is no decimal acuity (those are above 0); a logMAR value is written 'logMAR \(written)'")
        }
        try self.init(written: written, notation: .decimal, logMAR: -log10(value.doubleValue))
    }

    /// `20/40`, `6/7.5`: the test distance, then the distance at which the line's letters subtend
    /// 5 arc minutes. Feet when the distance is 20, metres when it is 6, 4 or 3.
    private init(snellen written: String) throws(VisualAcuityError) {
        let parts = written.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2 else {
            throw VisualAcuityError("'\(written)': a Snellen acuity has one '/', e.g. 6/6 or 20/20")
        }
        let numeratorText = parts[0].trimmingCharacters(in: .whitespaces)
        let denominatorText = parts[1].trimmingCharacters(in: .whitespaces)
        if denominatorText.dropFirst().contains(where: { $0 == "-" || $0 == "+" }) {
            throw VisualAcuityError(
                "'\(written)': letters missed or read beyond a line ('6/6-2') are not read; write the line alone, or its logMAR value"
            )
        }
        let unsigned = [numeratorText, denominatorText].allSatisfy { !$0.hasPrefix("-") && !$0.hasPrefix("+") }
        guard unsigned, let numerator = Hundredths(parsing: numeratorText),
            let denominator = Hundredths(parsing: denominatorText), denominator.raw > 0
        else {
            throw VisualAcuityError("'\(written)': a Snellen acuity is two positive numbers, e.g. 6/6, 6/7.5 or 20/40")
        }
        let notation: Notation
        switch numerator.raw {
        case 2000: notation = .snellenFeet
        case 600, 400, 300: notation = .snellenMetres
        default:
            throw VisualAcuityError(
                "'\(written)': Snellen is written 20/x (feet) or 6/x, 4/x, 3/x (metres), the test distance first")
        }
        try self.init(
            written: written, notation: notation, logMAR: log10(denominator.doubleValue / numerator.doubleValue))
    }

    /// A stored acuity read back: the written text is parsed again, and must give the notation stored.
    public init(written: String, notation: Notation) throws(VisualAcuityError) {
        let parsed = try VisualAcuity(parsing: written)
        guard parsed.notation == notation else {
            throw VisualAcuityError("'\(written)' reads as \(parsed.notation.rawValue), not \(notation.rawValue)")
        }
        self = parsed
    }

    private init(written: String, notation: Notation, logMAR: Double) throws(VisualAcuityError) {
        // A tolerance for the conversion's rounding: 20/10 is logMAR -0.30103.
        guard logMAR >= Self.minimumLogMAR - 0.005, logMAR <= Self.maximumLogMAR + 0.005 else {
            throw VisualAcuityError(
                "'\(written)' is logMAR \(Self.text(logMAR)), outside \(Self.text(Self.minimumLogMAR)) to \(Self.text(Self.maximumLogMAR)) (20/10 to 20/2000)"
            )
        }
        self.written = written
        self.notation = notation
        self.logMAR = logMAR
    }

    /// The logMAR value with two decimals, `0.00`, `-0.10`, `0.30`, as charts print it.
    public var logMARText: String { Self.text(logMAR) }

    static func text(_ value: Double) -> String {
        let hundredths = Int((value * 100).rounded())
        return (hundredths < 0 ? "-" : "") + String(format: "%.2f", Double(abs(hundredths)) / 100)
    }
}

/// Why a visual acuity was refused; the text names the value and the forms that are read.
public struct VisualAcuityError: Error, Sendable, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
