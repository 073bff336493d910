/// A contact-lens design made to slow a child's myopia, recognised by the brand written on the
/// prescription, because the refraction trend (`Trend`) must read the two families differently:
///
/// - **Corneal reshaping (ortho-k)**: a reverse-geometry rigid lens worn overnight. Its power is
///   the target it flattens the cornea to, not the eye's refraction, so it gives no point (issue
///   26: one +0.50 ortho-k record turned a -0.60 D/yr progressor into -0.13 D/yr). A prescription
///   says so with `--lens-type ortho-k`; one that names an ortho-k design without saying it (an
///   import whose source has no lens type) is read the same way.
/// - **Soft myopia-control lenses** (dual-focus or extended-depth-of-focus designs): the labelled
///   power is the distance zone's, which fully corrects the eye (CooperVision's MiSight 1 day,
///   FDA-approved for myopia control in 2019, is prescribed at the distance refraction), so the power is the
///   refraction and counts. The point is marked, so a parent sees when the treatment began;
///   leaving it out would hide the very progression the treatment is watched for (IMI Clinical
///   Management Guidelines Report, Gifford et al., IOVS 2019, follows treated children by
///   refraction and axial length alike).
///
/// Spectacle myopia-control lenses (DIMS, HAL, DOT designs) are a dispensing choice made on a
/// glasses prescription whose powers are the refraction: nothing to recognise.
///
/// The names are rxvault's list of designs sold for myopia control (not exhaustive); matching
/// ignores case, hyphens and runs of spaces, and needs the whole name, so "Night & Day" (an
/// extended-wear soft lens) is not "Bloom Night".
public enum MyopiaControlDesign: Sendable, Equatable {
    /// The design's name as rxvault writes it (`Paragon CRT`).
    case cornealReshaping(String)
    case soft(String)

    public var name: String {
        switch self {
        case .cornealReshaping(let name), .soft(let name): return name
        }
    }

    static let cornealReshaping: [(match: String, name: String)] = [
        ("paragon crt", "Paragon CRT"), ("crt 100", "Paragon CRT"), ("abiliti overnight", "Abiliti Overnight"),
        ("menicon z night", "Menicon Z Night"), ("bloom night", "Menicon Bloom Night"), ("euclid", "Euclid"),
        ("moonlens", "MoonLens"), ("dreamlens", "DreamLens"), ("orthokeratology", "ortho-k"),
        ("ortho k", "ortho-k"), ("orthok", "ortho-k")
    ]
    static let soft: [(match: String, name: String)] = [
        ("misight", "MiSight"), ("naturalvue", "NaturalVue"), ("abiliti 1 day", "Abiliti 1-Day"),
        ("bloom day", "Menicon Bloom Day"), ("mylo", "mylo")
    ]

    /// The design a brand names, or nil.
    public init?(brand: String) {
        let words = Self.words(brand)
        if let hit = Self.cornealReshaping.first(where: { Self.contains(words, $0.match) }) {
            self = .cornealReshaping(hit.name)
        } else if let hit = Self.soft.first(where: { Self.contains(words, $0.match) }) {
            self = .soft(hit.name)
        } else {
            return nil
        }
    }

    /// The design of a contacts prescription: ortho-k by its lens type, else what either eye's
    /// brand names (a corneal-reshaping design first). Nil for glasses.
    public init?(_ prescription: Prescription) {
        guard prescription.kind == .contacts else { return nil }
        if prescription.contactLensType == .orthoK {
            let named = Eye.allCases.compactMap { prescription[$0]?.brand.flatMap(Self.init(brand:)) }
            self = .cornealReshaping(
                named.first { if case .cornealReshaping = $0 { true } else { false } }?.name ?? "ortho-k")
            return
        }
        let designs = Eye.allCases.compactMap { prescription[$0]?.brand.flatMap(Self.init(brand:)) }
        guard
            let design = designs.first(where: { if case .cornealReshaping = $0 { true } else { false } })
                ?? designs.first
        else { return nil }
        self = design
    }

    /// Lower case, hyphens and other punctuation as spaces, one space between words.
    static func words(_ text: String) -> [String] {
        text.lowercased().split { !$0.isLetter && !$0.isNumber }.map(String.init)
    }

    /// Whether `match`'s words appear in `words` one after another.
    static func contains(_ words: [String], _ match: String) -> Bool {
        let wanted = match.split(separator: " ").map(String.init)
        guard wanted.count <= words.count else { return false }
        return (0...(words.count - wanted.count)).contains { Array(words[$0..<($0 + wanted.count)]) == wanted }
    }
}
