/// Reads and writes one eye's lens specification in the notation people copy from the paper:
///
///     -2.25 -0.75 x180 add +2.00        plano        +1.50 DS
///     -1.00 -0.50 x 090 prism 1.5 BI    -3.00 bc 8.6 dia 14.2
///     -2.75 -1.25 x 170 bc 8.7 dia 14.5  0.50 DS prism 1 BU 2 BO   +1.00 prism 2 @ 45
///     -2.25/-0.75x180    SPH -1.00 CYL -0.50 AXIS 045    x180°    Add: +2.50    BAL
///     -1.50 add HIGH D    -1.25 add +1.50 N    -2.00 0.00 x180 (a zero cylinder: spherical)
///
/// Words are case-insensitive and may touch the numbers (`x180`, `BC8.6`, `ADD+2.00`). The
/// parser reads only values; it does not judge them: ranges and steps are `PrescriptionRules`'
/// job, so a refused value gets the same message whichever way it was entered.
/// `format` writes the canonical form, which `parse` reads back to the same specification.
public enum LensNotation {
    /// Why a notation could not be read; `description` says which word and what was expected.
    public struct Unreadable: Error, Sendable, CustomStringConvertible {
        public let problem: String
        public var description: String { problem }
    }

    public static func parse(_ text: String) throws(Unreadable) -> LensSpecification {
        try read(text).lens
    }

    /// Reads `text` and says which parts it wrote, so an edit can replace only those
    /// (`Reading.applied(to:)`).
    public static func read(_ text: String) throws(Unreadable) -> Reading {
        var reader = Reader(tokens: boxOrder(try tokenize(text)))
        return try reader.readSpecification()
    }

    /// Labels that name the power on a lens box and on order forms (`PWR -3.00`, `POWER -3.00`).
    static let powerLabels: Set<String> = ["pwr", "power", "pow", "p"]

    /// The order printed on contact-lens boxes and foil labels puts the fitting first and the
    /// power after it, each with its label: `BC 8.6 DIA 14.2 PWR -3.00`, `BC 8.7 DIA 14.5
    /// PWR -2.75 CYL -1.25 AX 170`, `BC 8.6 DIA 14.2 SPH -3.00`. Read as the prescription order
    /// (`-2.75 -1.25 x170 bc 8.7 dia 14.5`): the labelled power, cylinder and axis are moved to the
    /// front, everything else stays in its order. Tokens without such labels are returned as they are.
    static func boxOrder(_ tokens: [Token]) -> [Token] {
        func labelled(_ labels: Set<String>, in list: [Token]) -> Int? {
            list.indices.first { i in
                guard case .word(let w) = list[i], labels.contains(w), i + 1 < list.count,
                    case .number = list[i + 1]
                else { return false }
                return true
            }
        }
        let fittingFirst: Bool
        if case .word(let w)? = tokens.first {
            fittingFirst = Reader.canonicalField(w) != nil
        } else {
            fittingFirst = false
        }
        let sphereLabels = fittingFirst ? powerLabels.union(Reader.sphereLabels) : powerLabels
        guard let power = labelled(sphereLabels, in: tokens) else { return tokens }
        var rest = tokens
        var front = [rest[power + 1]]
        rest.removeSubrange(power...(power + 1))
        if let cylinder = labelled(Reader.cylinderLabels, in: rest) {
            front.append(rest[cylinder + 1])
            rest.removeSubrange(cylinder...(cylinder + 1))
            if let axis = labelled(Reader.axisWords, in: rest) {
                front += [.word("x"), rest[axis + 1]]
                rest.removeSubrange(axis...(axis + 1))
            }
        }
        return front + rest
    }

    /// The canonical notation of `lens`: sphere, cylinder and axis (or `BAL` for a balance lens),
    /// then add (number, LOW/MED/HIGH, D/N), prism, bc, dia. Brand, PD and vertex distance are not
    /// part of it (they have their own columns and flags). A zero cylinder is not written: the
    /// lens is spherical (`-2.00 0.00 x180` prints as `-2.00 DS`).
    public static func format(_ lens: LensSpecification) -> String {
        var parts: [String] = []
        if lens.balance {
            parts.append("BAL")
        } else if lens.sphere.isZero {
            parts.append("plano")
        } else {
            parts.append(lens.sphere.signedPower)
        }
        if let cylinder = lens.cylinder, !cylinder.isZero {
            parts.append(cylinder.signedPower)
            if let axis = lens.axis { parts.append("x" + String(axis).padding(toLength: 3, leftPadding: true)) }
        }
        if lens.add != nil || lens.addDesignation != nil || lens.dominance != nil {
            parts.append(
                (["add", lens.add?.signedPower, lens.addDesignation?.rawValue, lens.dominance?.rawValue] as [String?])
                    .compactMap { $0 }.joined(separator: " "))
        }
        if let prism = lens.prism { parts.append("prism \(prism.notation)") }
        if let bc = lens.baseCurve { parts.append("bc \(bc.plain)") }
        if let dia = lens.diameter { parts.append("dia \(dia.plain)") }
        // A sphere standing alone is marked DS ("+1.50 DS"), as prescribers write it.
        if parts.count == 1 && !lens.sphere.isZero { parts.append("DS") }
        return parts.joined(separator: " ")
    }

    // MARK: - Lexing

    /// A comma between two digits (`-1,50`), which is a decimal comma in much of Europe and
    /// would otherwise be read as a separator (`-1,5 x 90` as -1.00 +5.00 x90). Refused, never
    /// guessed: the message shows the number with a dot. A comma between fields (`-2.00, -0.50`,
    /// `-2.00,-0.50`) has no digit on both sides and stays a separator.
    public static func decimalComma(in text: String) -> Unreadable? {
        let chars = Array(text)
        for i in chars.indices
        where chars[i] == "," && i > 0 && i + 1 < chars.count
            && chars[i - 1].isASCIIDigit && chars[i + 1].isASCIIDigit
        {
            var start = i - 1
            while start > 0, chars[start - 1].isASCIIDigit || chars[start - 1] == "." { start -= 1 }
            if start > 0, ["+", "-", "\u{2212}"].contains(chars[start - 1]) { start -= 1 }
            var end = i + 1
            while end < chars.count, chars[end].isASCIIDigit { end += 1 }
            let written = String(chars[start..<end])
            let dotted = String(written.map { $0 == "," ? "." : $0 == "\u{2212}" ? "-" : $0 })
            return Unreadable(
                problem:
                    "'\(written)': a decimal comma is not accepted (a comma separates fields): write a dot (\(dotted))")
        }
        return nil
    }

    enum Token: Equatable {
        case number(Substring)
        case word(String)
    }

    static func tokenize(_ text: String) throws(Unreadable) -> [Token] {
        if let problem = decimalComma(in: text) { throw problem }
        var tokens: [Token] = []
        var index = text.startIndex
        func isNumberStart(_ c: Character, next: Character?) -> Bool {
            if c.isASCIIDigit || c == "." { return true }
            if c == "+" || c == "-" || c == "\u{2212}" { return next.map { $0.isASCIIDigit || $0 == "." } ?? false }
            return false
        }
        while index < text.endIndex {
            let c = text[index]
            let next = text.index(after: index) < text.endIndex ? text[text.index(after: index)] : nil
            if c.isWhitespace || c == "," || c == ";" || c == "/" || c == ":" {
                // "/" separates sphere and cylinder ("-2.25/-0.75x180"), ":" follows a label ("Add: +2.50").
                index = text.index(after: index)
            } else if c == "\u{00B0}" {
                // A degree sign after an axis or angle ("x180°") is only the unit.
                guard case .number? = tokens.last else {
                    throw Unreadable(problem: "unexpected '°' (it may follow an axis: x180°)")
                }
                index = text.index(after: index)
            } else if isNumberStart(c, next: next) {
                let start = index
                index = text.index(after: index)
                while index < text.endIndex, text[index].isASCIIDigit || text[index] == "." {
                    index = text.index(after: index)
                }
                tokens.append(.number(text[start..<index]))
            } else if c == "\u{0394}" || c == "\u{25B3}" {
                // Δ marks prism dioptres: before an amount ("Δ1.5 BI", "+1.00 Δ 0.5 BU") it stands
                // for the word prism; after one ("1.5Δ BI") it is only the unit.
                index = text.index(after: index)
                let following = text[index...].first { !$0.isWhitespace }
                let amountFollows = following.map { $0.isASCIIDigit || $0 == "." || $0 == "+" || $0 == "-" } ?? false
                if case .number? = tokens.last, !amountFollows {} else { tokens.append(.word("prism")) }
            } else if c == "@" || c == "\u{00D7}" {
                // "@" introduces a prism base angle, "×" an axis.
                tokens.append(.word(c == "@" ? "@" : "x"))
                index = text.index(after: index)
            } else if c.isLetter {
                let start = index
                // Dots inside a word are abbreviations ("b.c."), but a dot followed by a digit
                // starts the next number ("add.75" is add 0.75).
                // A hyphen between letters joins a word ("non-dominant").
                func joinsWord(_ i: String.Index) -> Bool {
                    text[i] == "-" && text.index(after: i) < text.endIndex && text[text.index(after: i)].isLetter
                }
                while index < text.endIndex,
                    text[index].isLetter || joinsWord(index)
                        || (text[index] == "."
                            && !(text.index(after: index) < text.endIndex
                                && text[text.index(after: index)].isASCIIDigit))
                {
                    index = text.index(after: index)
                }
                let word = text[start..<index].lowercased().filter { $0 != "." }
                tokens.append(.word(word))
            } else {
                throw Unreadable(problem: "unexpected character '\(c)'")
            }
        }
        return tokens
    }

    // MARK: - Reading

    struct Reader {
        var tokens: [Token]
        var position = 0

        var peek: Token? { position < tokens.count ? tokens[position] : nil }
        mutating func next() -> Token? {
            defer { position += 1 }
            return peek
        }

        static let sphereMarks: Set<String> = ["ds", "sph", "sphere", "d"]
        static let planoWords: Set<String> = ["plano", "pl", "pln"]
        static let axisWords: Set<String> = ["x", "axis", "ax"]
        static let balanceWords: Set<String> = ["bal", "balance"]
        /// Labels written before a value ("SPH -1.00 CYL -0.50 AXIS 045").
        static let sphereLabels: Set<String> = ["sph", "sphere"]
        static let cylinderLabels: Set<String> = ["cyl", "cylinder"]

        /// The token after the next one.
        var peekSecond: Token? { position + 1 < tokens.count ? tokens[position + 1] : nil }

        mutating func readSpecification() throws(Unreadable) -> Reading {
            if case .word(let w)? = peek, Self.balanceWords.contains(w) {
                // A balance lens: no power at all (the rules refuse one given a cylinder or add).
                position += 1
                var given: Set<LensField> = [.sphere, .balance]
                var lens = LensSpecification.balanceLens
                try readFields(into: &lens, given: &given)
                return Reading(lens: lens, given: given, sphereOnly: true)
            }
            var lens = LensSpecification(sphere: try readSphere())
            var given: Set<LensField> = [.sphere]
            var sphereOnly = false
            if case .word(let w)? = peek, Self.sphereMarks.contains(w) {
                position += 1
                sphereOnly = true
            }
            if !sphereOnly, case .word(let w)? = peek, Self.cylinderLabels.contains(w), case .number? = peekSecond {
                position += 1
            }
            // After "DS" (sphere only) a further number cannot be a cylinder.
            if !sphereOnly, case .number(let text)? = peek {
                position += 1
                lens.cylinder = try value(text, "cylinder")
                given.insert(.cylinder)
                if case .word(let w)? = peek, w == "dc" || w == "cyl" { position += 1 }
            }
            if case .word(let w)? = peek, Self.axisWords.contains(w) {
                position += 1
                lens.axis = try readAxis()
                given.insert(.axis)
            }
            // A zero cylinder without an axis is no cylinder (as the rules store it), so notation
            // round-trips. With an axis ("-2.00 0.00 x180") both stay, for the rules to store the
            // lens as spherical and say so.
            if lens.cylinder?.isZero == true && lens.axis == nil { lens.cylinder = nil }
            try readFields(into: &lens, given: &given)
            return Reading(lens: lens, given: given, sphereOnly: sphereOnly)
        }

        /// The words after the refraction: add, prism, bc, dia, vertex, pd, npd, each once.
        mutating func readFields(into lens: inout LensSpecification, given: inout Set<LensField>) throws(Unreadable) {
            var seen: Set<String> = []
            while let token = next() {
                guard case .word(let word) = token else {
                    // "-2.00 -0.50 180", as many printed forms leave out the x: say how it reads.
                    if seen.isEmpty, given.contains(.cylinder), !given.contains(.axis), let axis = Int(token.text),
                        (0...180).contains(axis)
                    {
                        throw Unreadable(
                            problem:
                                "unexpected number '\(token.text)' after the cylinder: an axis is written with x, as x\(axis)"
                        )
                    }
                    throw Unreadable(
                        problem: "unexpected number '\(token.text)': expected a word such as add, prism, bc or dia")
                }
                let field = Self.canonicalField(word)
                guard let field else {
                    throw Unreadable(problem: "unknown word '\(word)': expected add, prism, bc, dia, vertex or pd")
                }
                guard seen.insert(field).inserted else { throw Unreadable(problem: "'\(word)' given twice") }
                switch field {
                case "add":
                    try readAdd(into: &lens)
                    if lens.addDesignation != nil { given.insert(.addDesignation) }
                    if lens.dominance != nil { given.insert(.dominance) }
                case "prism": lens.prism = try readPrism()
                case "bc": lens.baseCurve = try readNumber("base curve")
                case "dia": lens.diameter = try readNumber("diameter")
                case "vertex": lens.vertexDistance = try readNumber("vertex distance")
                case "pd": lens.farPD = try readNumber("PD")
                case "npd": lens.nearPD = try readNumber("near PD")
                default: break
                }
                given.insert(Self.lensField[field]!)
            }
        }

        /// `add +2.00`, `add HIGH`, `add +1.50 HIGH`, `add MED D`, `add +2.00 N`: a number, a
        /// designation (LOW/MED/HIGH) or both, then optionally the design (D dominant, N non-dominant).
        mutating func readAdd(into lens: inout LensSpecification) throws(Unreadable) {
            if case .number(let text)? = peek {
                position += 1
                lens.add = try value(text, "add")
            }
            if case .word(let w)? = peek, let designation = AddDesignation(text: w) {
                position += 1
                lens.addDesignation = designation
            }
            guard lens.add != nil || lens.addDesignation != nil else {
                let found = peek.map { " (found '\($0.text)')" } ?? ""
                throw Unreadable(
                    problem:
                        "expected an add after 'add': a number (add +2.00) or a code (\(AddDesignation.acceptedText))\(found)"
                )
            }
            if case .word(let w)? = peek, let dominance = LensDominance(word: w) {
                position += 1
                lens.dominance = dominance
            }
        }

        static let lensField: [String: LensField] = [
            "add": .add, "prism": .prism, "bc": .baseCurve, "dia": .diameter,
            "vertex": .vertexDistance, "pd": .farPD, "npd": .nearPD
        ]

        static func canonicalField(_ word: String) -> String? {
            switch word {
            case "add", "addition": return "add"
            case "prism", "pr": return "prism"
            case "bc", "basecurve", "bcr": return "bc"
            case "dia", "diam", "diameter": return "dia"
            case "vertex", "bvd", "vd": return "vertex"
            case "pd": return "pd"
            case "npd", "nearpd": return "npd"
            default: return nil
            }
        }

        mutating func readSphere() throws(Unreadable) -> Hundredths {
            switch next() {
            case .number(let text)?: return try value(text, "sphere")
            case .word(let w)? where Self.planoWords.contains(w): return .zero
            case .word(let w)? where Self.sphereLabels.contains(w):
                // "SPH -1.00": the label, then the sphere.
                if case .word(let p)? = peek, Self.planoWords.contains(p) {
                    position += 1
                    return .zero
                }
                guard case .number(let text)? = peek else {
                    throw Unreadable(problem: "expected a sphere after '\(w)'")
                }
                position += 1
                return try value(text, "sphere")
            case .word(let w)? where w == "ds": throw Unreadable(problem: "expected a sphere before '\(w)'")
            case .word(let w)?:
                throw Unreadable(problem: "expected a sphere first (a number such as -2.25, or plano), found '\(w)'")
            case nil: throw Unreadable(problem: "empty: expected a sphere (a number such as -2.25, or plano)")
            }
        }

        mutating func readAxis() throws(Unreadable) -> Int {
            guard case .number(let text)? = next() else {
                throw Unreadable(problem: "expected an axis in whole degrees after 'x'")
            }
            guard text.allSatisfy(\.isASCIIDigit), text.count <= 3, let axis = Int(text) else {
                throw Unreadable(problem: "axis '\(text)': expected whole degrees 1 to 180")
            }
            return axis
        }

        mutating func readNumber(_ field: String) throws(Unreadable) -> Hundredths {
            guard case .number(let text)? = next() else {
                throw Unreadable(problem: "expected a number after \(field)")
            }
            return try value(text, field)
        }

        func value(_ text: Substring, _ field: String) throws(Unreadable) -> Hundredths {
            guard let value = Hundredths(parsing: text) else {
                throw Unreadable(problem: "\(field) '\(text)': expected a number with at most two decimals")
            }
            return value
        }

        /// `1.5 BI`, `1.5 base in`, `1 BU 2 BO`, `2 @ 45`, `2 base 45`.
        mutating func readPrism() throws(Unreadable) -> Prism {
            var vertical: Prism.Part<Prism.VerticalBase>?
            var horizontal: Prism.Part<Prism.HorizontalBase>?
            while case .number(let text)? = peek {
                position += 1
                let amount = try value(text, "prism")
                if case .word("base")? = peek { position += 1 }
                guard let token = next() else {
                    throw Unreadable(problem: "prism \(text): expected a base (BU, BD, BI, BO) or @ angle")
                }
                switch token {
                case .word("@"), .word("at"):
                    guard vertical == nil, horizontal == nil, case .number(let angleText)? = next(),
                        angleText.allSatisfy(\.isASCIIDigit), let angle = Int(angleText)
                    else {
                        throw Unreadable(problem: "prism \(text) @: expected a base angle in whole degrees 0 to 360")
                    }
                    return .polar(amount: amount, angle: angle)
                case .number(let angleText):
                    // "prism 2 base 45": a bare number after "base" is an angle.
                    guard vertical == nil, horizontal == nil, angleText.allSatisfy(\.isASCIIDigit),
                        let angle = Int(angleText)
                    else {
                        throw Unreadable(problem: "prism \(text): expected a base (BU, BD, BI, BO) or @ angle")
                    }
                    return .polar(amount: amount, angle: angle)
                case .word(let base):
                    switch base {
                    case "bu", "up", "u":
                        guard vertical == nil else { throw Unreadable(problem: "prism has two vertical parts") }
                        vertical = .init(amount: amount, base: .up)
                    case "bd", "down", "d":
                        guard vertical == nil else { throw Unreadable(problem: "prism has two vertical parts") }
                        vertical = .init(amount: amount, base: .down)
                    case "bi", "in", "i":
                        guard horizontal == nil else { throw Unreadable(problem: "prism has two horizontal parts") }
                        horizontal = .init(amount: amount, base: .in)
                    case "bo", "out", "o":
                        guard horizontal == nil else { throw Unreadable(problem: "prism has two horizontal parts") }
                        horizontal = .init(amount: amount, base: .out)
                    default:
                        throw Unreadable(problem: "prism base '\(base)': expected BU, BD, BI, BO or @ angle")
                    }
                }
            }
            guard vertical != nil || horizontal != nil else {
                throw Unreadable(problem: "expected a prism amount and base after prism (e.g. prism 1.5 BI)")
            }
            return .rectangular(vertical: vertical, horizontal: horizontal)
        }
    }
}

extension LensNotation.Token {
    var text: String {
        switch self {
        case .number(let s): return String(s)
        case .word(let w): return w
        }
    }
}

extension Prism {
    /// Reads a prism on its own, as given to `--od-prism` (`1.5 BI`, `1 BU 2 BO`, `2 @ 45`).
    public static func parse(_ text: String) throws(LensNotation.Unreadable) -> Prism {
        var reader = LensNotation.Reader(tokens: try LensNotation.tokenize(text))
        if case .word("prism")? = reader.peek { reader.position += 1 }
        let prism = try reader.readPrism()
        if let extra = reader.peek {
            throw LensNotation.Unreadable(problem: "unexpected '\(extra.text)' after the prism")
        }
        return prism
    }
}
