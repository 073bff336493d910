import ArgumentParser
import RxModel

/// `edit`'s flags that remove one part of one eye's lens: `--no-od-cyl` (with its axis),
/// `--no-od-add`, `--no-od-prism`, `--no-od-vertex`, `--no-od-bc`, `--no-od-dia`,
/// `--no-od-brand`, and the same with `--no-os-`. An edit drops a stored value only when the
/// person names it like this (docs/guide.md, "Edit, history, remove"); writing the eye again in
/// notation keeps what the notation does not mention.
enum LensRemovalFlag: String, EnumerableFlag, CaseIterable {
    case odCyl = "no-od-cyl"
    case odAdd = "no-od-add"
    case odPrism = "no-od-prism"
    case odVertex = "no-od-vertex"
    case odBaseCurve = "no-od-bc"
    case odDiameter = "no-od-dia"
    case odBrand = "no-od-brand"
    case osCyl = "no-os-cyl"
    case osAdd = "no-os-add"
    case osPrism = "no-os-prism"
    case osVertex = "no-os-vertex"
    case osBaseCurve = "no-os-bc"
    case osDiameter = "no-os-dia"
    case osBrand = "no-os-brand"

    static func name(for value: LensRemovalFlag) -> NameSpecification { .customLong(value.rawValue) }
    static func help(for value: LensRemovalFlag) -> ArgumentHelp? { .hidden }

    var eye: Eye { rawValue.hasPrefix("no-od") ? .right : .left }

    var field: LensField {
        switch self {
        case .odCyl, .osCyl: return .cylinder
        case .odAdd, .osAdd: return .add
        case .odPrism, .osPrism: return .prism
        case .odVertex, .osVertex: return .vertexDistance
        case .odBaseCurve, .osBaseCurve: return .baseCurve
        case .odDiameter, .osDiameter: return .diameter
        case .odBrand, .osBrand: return .brand
        }
    }

    var flag: String { "--" + rawValue }
}
