/// The parts of one eye's lens specification, by the names messages and `history` use.
///
/// One list serves three jobs that must agree: what a notation gave (so an edit replaces only
/// that), what an edit may remove by name (`--no-od-prism`), and what changed between versions.
public enum LensField: String, CaseIterable, Hashable, Sendable {
    case sphere, cylinder, axis, add, prism
    case vertexDistance = "vertex distance"
    case farPD = "PD"
    case nearPD = "near PD"
    case baseCurve = "base curve"
    case diameter, brand, manufacturer, material
    case equivalentBrand = "equivalent brand"
    case addDesignation = "add designation"
    case dominance
    case balance = "balance lens"

    /// The name in messages ("OD prism").
    public var label: String { rawValue }

    /// Free text (names): `history` names the field without quoting it.
    public var isText: Bool { [.brand, .manufacturer, .material, .equivalentBrand].contains(self) }

    /// The value as written in messages and history (`-1.25`, `180`, `1.5 BI`, `14.2`), nil when absent.
    public func text(in lens: LensSpecification) -> String? {
        switch self {
        case .sphere: return lens.sphere.signedPower
        case .cylinder: return lens.cylinder?.signedPower
        case .axis: return lens.axis.map(String.init)
        case .add: return lens.add?.signedPower
        case .prism: return lens.prism?.notation
        case .vertexDistance: return lens.vertexDistance?.plain
        case .farPD: return lens.farPD?.plain
        case .nearPD: return lens.nearPD?.plain
        case .baseCurve: return lens.baseCurve?.plain
        case .diameter: return lens.diameter?.plain
        case .brand: return lens.brand
        case .manufacturer: return lens.manufacturer
        case .material: return lens.material
        case .equivalentBrand: return lens.equivalentBrand
        case .addDesignation: return lens.addDesignation?.rawValue
        case .dominance: return lens.dominance?.rawValue
        case .balance: return lens.balance ? "BAL" : nil
        }
    }

    /// Sets this field of `lens` to its value in `source` (absent included).
    public func copy(from source: LensSpecification, to lens: inout LensSpecification) {
        switch self {
        case .sphere: lens.sphere = source.sphere
        case .cylinder: lens.cylinder = source.cylinder
        case .axis: lens.axis = source.axis
        case .add: lens.add = source.add
        case .prism: lens.prism = source.prism
        case .vertexDistance: lens.vertexDistance = source.vertexDistance
        case .farPD: lens.farPD = source.farPD
        case .nearPD: lens.nearPD = source.nearPD
        case .baseCurve: lens.baseCurve = source.baseCurve
        case .diameter: lens.diameter = source.diameter
        case .brand: lens.brand = source.brand
        case .manufacturer: lens.manufacturer = source.manufacturer
        case .material: lens.material = source.material
        case .equivalentBrand: lens.equivalentBrand = source.equivalentBrand
        case .addDesignation: lens.addDesignation = source.addDesignation
        case .dominance: lens.dominance = source.dominance
        case .balance: lens.balance = source.balance
        }
    }

    /// Removes this field from `lens`. A cylinder goes with its axis (one without the other is
    /// no prescription), an add with its designation and dominance (`--no-od-add` removes the
    /// whole multifocal add); the sphere cannot be removed (plano is a sphere of 0), so nothing happens.
    public func remove(from lens: inout LensSpecification) {
        let empty = LensSpecification(sphere: lens.sphere)
        copy(from: empty, to: &lens)
        if self == .cylinder { LensField.axis.copy(from: empty, to: &lens) }
        if self == .add {
            LensField.addDesignation.copy(from: empty, to: &lens)
            LensField.dominance.copy(from: empty, to: &lens)
        }
    }
}
