/// A contact-lens design made to slow a child's myopia, recognised by the brand written on the
/// prescription, because the refraction trend (`Trend`) must read the two families differently:
///
/// - **Corneal reshaping (ortho-k)**: a reverse-geometry rigid lens worn overnight. The reshaping
///   is in its back-surface curves; its labelled power (near plano) is not the eye's refraction,
///   so it gives no point (issue 26: one +0.50 ortho-k record turned a -0.60 D/yr progressor
///   into -0.13 D/yr). A prescription says so with `--lens-type ortho-k`; one that names an
///   ortho-k design without saying it (an import whose source has no lens type) is read the same
///   way.
/// - **Soft myopia-control lenses** (dual-focus or extended-depth-of-focus designs): the labelled
///   power is the distance zone's, which fully corrects the eye (CooperVision's MiSight 1 day,
///   FDA-approved for myopia control in 2019, is prescribed at the distance refraction), so the
///   power is the refraction and counts. The point is marked, so a parent sees when the treatment
///   began; leaving it out would hide the very progression the treatment is watched for (IMI
///   Clinical Management Guidelines Report, Gifford et al., IOVS 2019, follows treated children
///   by refraction and axial length alike).
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
        ("misight", "MiSight"), ("naturalvue multifocal", "NaturalVue Multifocal"), ("abiliti 1 day", "Abiliti 1-Day"),
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

    /// The design of one eye's lens of a contacts prescription, nil for glasses. Ortho-k by the
    /// prescription's lens type; else by that eye's brand, when the lens type does not say
    /// otherwise: an ortho-k design when the type is absent or rigid, a soft design when it is
    /// absent or soft (a lens typed scleral is not ortho-k whatever its brand says). A soft design
    /// only for a patient not known to be 18 or older on the issue date: the same lenses are
    /// fitted to adults for other reasons (a multifocal for presbyopia), and the mark is for a
    /// child's treatment.
    public init?(_ prescription: Prescription, eye: Eye) {
        guard prescription.kind == .contacts, let lens = prescription[eye] else { return nil }
        let type = prescription.contactLensType
        let design = lens.brand.flatMap(Self.init(brand:))
        switch (design, type) {
        case (.cornealReshaping(let name)?, .orthoK?), (.cornealReshaping(let name)?, nil),
            (.cornealReshaping(let name)?, .rgp?):
            self = .cornealReshaping(name)
        case (_, .orthoK?):
            self = .cornealReshaping("ortho-k")
        case (.soft(let name)?, nil), (.soft(let name)?, .soft?):
            if let born = prescription.patient.birthDate, Self.adult(born: born, on: prescription.issued) {
                return nil
            }
            self = .soft(name)
        default:
            return nil
        }
    }

    /// 18 or older on `day`.
    static func adult(born: CalendarDate, on day: CalendarDate) -> Bool {
        (day.year - born.year - ((day.month, day.day) < (born.month, born.day) ? 1 : 0)) >= 18
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
