/// What is prescribed for one eye.
///
/// One type serves glasses and contacts, as on the paper: the refraction (sphere, cylinder,
/// axis, add) is common to both, and the fields of the other kind stay empty. `PrescriptionRules`
/// refuses a field that does not belong to the prescription's kind, so a glasses record never
/// carries a base curve and a contacts record never carries prism.
public struct LensSpecification: Hashable, Sendable {
    /// Spherical power in dioptres; `0` is plano.
    public var sphere: Hundredths
    /// Cylindrical power in dioptres, in the form it was written (minus- or plus-cyl); nil means none.
    public var cylinder: Hundredths?
    /// Axis of the cylinder in whole degrees, 1...180.
    public var axis: Int?
    /// Near addition in dioptres (positive).
    public var add: Hundredths?

    // Glasses only.
    public var prism: Prism?
    /// Back vertex distance in millimetres.
    public var vertexDistance: Hundredths?
    /// Monocular far pupillary distance (pupil to the middle of the nose) in millimetres.
    public var farPD: Hundredths?
    /// Monocular near pupillary distance in millimetres.
    public var nearPD: Hundredths?

    // Contacts only.
    /// Base curve (back optic radius) in millimetres.
    public var baseCurve: Hundredths?
    /// Overall diameter in millimetres.
    public var diameter: Hundredths?
    /// The prescribed lens brand; contact-lens prescriptions name one per eye.
    public var brand: String?
    /// The lens's manufacturer and material (16 CFR 315.2: "material or manufacturer or both").
    public var manufacturer: String?
    public var material: String?
    /// For a private-label lens (a store's own name on another maker's lens), the brand it is
    /// the same lens as (16 CFR 315.2: "the manufacturer, trade name of the private label
    /// brand, and, if applicable, trade name of equivalent brand name").
    public var equivalentBrand: String?
    /// A multifocal contact lens's add as a range (`add HIGH`), instead of or beside `add`.
    public var addDesignation: AddDesignation?
    /// A multifocal contact lens's dominant or non-dominant design (`D`, `N`).
    public var dominance: LensDominance?

    /// A balance lens (`BAL`): no prescribed power, matched to the other lens for appearance and
    /// weight (glasses, one eye only). Its sphere is 0 and it carries no other power.
    public var balance: Bool = false

    public init(
        sphere: Hundredths, cylinder: Hundredths? = nil, axis: Int? = nil, add: Hundredths? = nil,
        prism: Prism? = nil, vertexDistance: Hundredths? = nil, farPD: Hundredths? = nil,
        nearPD: Hundredths? = nil, baseCurve: Hundredths? = nil, diameter: Hundredths? = nil,
        brand: String? = nil
    ) {
        self.sphere = sphere
        self.cylinder = cylinder
        self.axis = axis
        self.add = add
        self.prism = prism
        self.vertexDistance = vertexDistance
        self.farPD = farPD
        self.nearPD = nearPD
        self.baseCurve = baseCurve
        self.diameter = diameter
        self.brand = brand
    }

    /// A balance lens (`BAL`) with only the fields a balance lens may have.
    public static var balanceLens: LensSpecification {
        var lens = LensSpecification(sphere: .zero)
        lens.balance = true
        return lens
    }

    /// Whether the lens corrects astigmatism.
    public var hasCylinder: Bool { !(cylinder?.isZero ?? true) }
}
