/// The kind of contact lens a prescription is for (DESIGN.md, "Prescription rules"). Optional: most
/// prescriptions do not say, and then only the outer ranges apply. When given it sharpens the
/// warnings about base curves and diameters unusual for the lens (`PrescriptionRules`): a 6.5 mm
/// base curve is routine for a rigid lens and odd for a soft one; 18 mm is a scleral diameter.
public enum ContactLensType: String, Hashable, Sendable, CaseIterable, Codable {
    case soft
    /// Rigid gas-permeable (corneal).
    case rgp
    case scleral
    /// A rigid centre with a soft skirt.
    case hybrid
    /// Orthokeratology: rigid lenses worn overnight to reshape the cornea.
    case orthoK = "ortho-k"

    /// How `show` names it: `rgp (rigid gas-permeable)`.
    public var label: String {
        switch self {
        case .soft: return "soft"
        case .rgp: return "rgp (rigid gas-permeable)"
        case .scleral: return "scleral"
        case .hybrid: return "hybrid"
        case .orthoK: return "ortho-k (orthokeratology)"
        }
    }

    /// The names accepted on the command line and in files, for messages.
    public static let acceptedText = "soft, rgp, scleral, hybrid or ortho-k"

    /// Reads `soft`, `rgp` (or `rigid`, `gp`), `scleral`, `hybrid`, `ortho-k` (or `orthok`,
    /// `ok`), in any case.
    public init?(text: String) {
        switch text.lowercased() {
        case "soft": self = .soft
        case "rgp", "gp", "rigid", "rigid gas-permeable", "rigid gas permeable": self = .rgp
        case "scleral": self = .scleral
        case "hybrid": self = .hybrid
        case "ortho-k", "orthok", "ok", "orthokeratology": self = .orthoK
        default: return nil
        }
    }

    /// Base curves usual for the type (mm); outside them is a warning, not a refusal. Nil when
    /// the type has no usual range worth a warning.
    ///
    /// Soft 8.0-9.5, RGP 6.5-8.5, scleral 7.0-9.0 (domain.md). Hybrid lenses have a rigid centre:
    /// the RGP range. Ortho-k lenses are fitted flatter than the cornea: 7.0-9.5 (rxvault's choice).
    public var usualBaseCurve: ClosedRange<Hundredths> {
        switch self {
        case .soft: return Hundredths(8)...Hundredths(raw: 950)
        case .rgp, .hybrid: return Hundredths(raw: 650)...Hundredths(raw: 850)
        case .scleral: return Hundredths(7)...Hundredths(9)
        case .orthoK: return Hundredths(7)...Hundredths(raw: 950)
        }
    }

    /// Diameters usual for the type (mm): soft 13.0-15.0, RGP corneal 8.0-11.5, hybrid 14.0-14.5,
    /// scleral 15.0-24.0 (domain.md); ortho-k 9.5-12.0 (rxvault's choice: they are corneal RGPs,
    /// a little larger).
    public var usualDiameter: ClosedRange<Hundredths> {
        switch self {
        case .soft: return Hundredths(13)...Hundredths(15)
        case .rgp: return Hundredths(8)...Hundredths(raw: 1150)
        case .scleral: return Hundredths(15)...Hundredths(24)
        case .hybrid: return Hundredths(14)...Hundredths(raw: 1450)
        case .orthoK: return Hundredths(raw: 950)...Hundredths(12)
        }
    }
}

/// A multifocal contact lens's add written as a range rather than (or beside) a number, in the
/// code the manufacturer prints on the box: Johnson & Johnson (Acuvue) LOW, MID, HGH; Alcon
/// (Air Optix, Dailies, Total30) LO, MED, HI; Bausch + Lomb and CooperVision (clariti) LOW, HIGH;
/// CooperVision (MyDay) LO, MED, HI. Kept as written, because a lens is ordered by the code on its
/// box: rxvault never turns one code into another (MID is not MED to an order form) nor into
/// dioptres (each brand means something different by it).
///
/// The cases are stored by their order in the search index (`RecordCodec`): new codes are
/// appended, never inserted.
public enum AddDesignation: String, Hashable, Sendable, CaseIterable, Codable {
    case low = "LOW"
    case medium = "MED"
    case high = "HIGH"
    /// Alcon's and MyDay's low.
    case lo = "LO"
    /// Acuvue's medium.
    case mid = "MID"
    /// Acuvue's high.
    case hgh = "HGH"
    /// Alcon's and MyDay's high.
    case hi = "HI"

    /// The codes accepted, for messages.
    public static let acceptedText = "LOW, LO, MED, MID, HIGH, HI or HGH"

    public init?(text: String) {
        self.init(rawValue: text.uppercased())
    }
}

/// Which design of a multifocal contact lens an eye gets: `D` (dominant: distance-biased) or `N`
/// (non-dominant: near-biased), as some brands prescribe them. Kept as written.
public enum LensDominance: String, Hashable, Sendable, CaseIterable {
    case dominant = "D"
    case nonDominant = "N"

    /// `dominant` or `non-dominant`, for JSON and FHIR.
    public var word: String { self == .dominant ? "dominant" : "non-dominant" }

    public init?(word: String) {
        switch word.lowercased() {
        case "d", "dominant", "dom": self = .dominant
        case "n", "non-dominant", "nondominant", "nondom": self = .nonDominant
        default: return nil
        }
    }
}
