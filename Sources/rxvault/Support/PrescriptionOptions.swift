import ArgumentParser
import RxModel

/// The add/edit flags: the contract scripts rely on (docs/guide.md, "Add prescriptions").
///
/// Values are taken as text and read by RxModel's parsers, so a bad value is reported with the
/// eye, field and value whether it came from a flag, the notation or (later) an import.
struct PrescriptionOptions: ParsableArguments {
    @Option(help: "Patient's name.") var patient: String?
    @Option(help: ArgumentHelp("Patient's date of birth.", valueName: "yyyy-mm-dd")) var dob: String?
    @Option(help: "Prescriber's name.") var prescriber: String?
    @Option(help: "Prescriber's licence or registration number.") var prescriberLicence: String?
    @Option(help: "Prescriber's address, phone or e-mail, as one text.") var prescriberContact: String?
    @Option(help: "Prescriber's postal address.") var prescriberAddress: String?
    @Option(help: "Prescriber's phone number.") var prescriberPhone: String?
    @Option(help: "Prescriber's fax number.") var prescriberFax: String?
    @Option(help: ArgumentHelp("Date of the eye examination.", valueName: "yyyy-mm-dd")) var examDate: String?
    @Option(help: ArgumentHelp("Date the prescription was issued.", valueName: "yyyy-mm-dd")) var issued: String?
    @Option(
        help: ArgumentHelp(
            "Expiry date (required for contacts), or how long from the issue date: 2y, 18m, 26w, 90d.",
            valueName: "yyyy-mm-dd|2y"))
    var expires: String?
    @Option(
        help: ArgumentHelp(
            "The medical reason a contacts prescription is valid for less than a year.", valueName: "text"))
    var shortExpiryReason: String?
    @Option(help: "A free-text note.") var note: String?

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp(
            "Right eye in prescription notation, e.g. \"-2.25 -0.75 x180 add +2.00\".", valueName: "spec"))
    var od: String?
    @Option(
        parsing: .unconditional,
        help: ArgumentHelp(
            "Left eye in prescription notation, e.g. \"plano\" or \"-3.00 bc 8.6 dia 14.2\".", valueName: "spec"))
    var os: String?

    @Option(name: .customLong("od-sphere"), parsing: .unconditional, help: .hidden) var odSphere: String?
    @Option(name: .customLong("od-cyl"), parsing: .unconditional, help: .hidden) var odCylinder: String?
    @Option(name: .customLong("od-axis"), parsing: .unconditional, help: .hidden) var odAxis: String?
    @Option(name: .customLong("od-add"), parsing: .unconditional, help: .hidden) var odAdd: String?
    @Option(name: .customLong("od-prism"), parsing: .unconditional, help: .hidden) var odPrism: String?
    @Option(name: .customLong("od-vertex"), parsing: .unconditional, help: .hidden) var odVertex: String?
    @Option(name: .customLong("od-bc"), parsing: .unconditional, help: .hidden) var odBaseCurve: String?
    @Option(name: .customLong("od-dia"), parsing: .unconditional, help: .hidden) var odDiameter: String?
    @Option(name: .customLong("od-brand"), help: .hidden) var odBrand: String?
    @Option(name: .customLong("od-manufacturer"), help: .hidden) var odManufacturer: String?
    @Option(name: .customLong("od-material"), help: .hidden) var odMaterial: String?
    @Option(name: .customLong("od-equivalent-brand"), help: .hidden) var odEquivalentBrand: String?
    @Option(name: .customLong("os-sphere"), parsing: .unconditional, help: .hidden) var osSphere: String?
    @Option(name: .customLong("os-cyl"), parsing: .unconditional, help: .hidden) var osCylinder: String?
    @Option(name: .customLong("os-axis"), parsing: .unconditional, help: .hidden) var osAxis: String?
    @Option(name: .customLong("os-add"), parsing: .unconditional, help: .hidden) var osAdd: String?
    @Option(name: .customLong("os-prism"), parsing: .unconditional, help: .hidden) var osPrism: String?
    @Option(name: .customLong("os-vertex"), parsing: .unconditional, help: .hidden) var osVertex: String?
    @Option(name: .customLong("os-bc"), parsing: .unconditional, help: .hidden) var osBaseCurve: String?
    @Option(name: .customLong("os-dia"), parsing: .unconditional, help: .hidden) var osDiameter: String?
    @Option(name: .customLong("os-brand"), help: .hidden) var osBrand: String?
    @Option(name: .customLong("os-manufacturer"), help: .hidden) var osManufacturer: String?
    @Option(name: .customLong("os-material"), help: .hidden) var osMaterial: String?
    @Option(name: .customLong("os-equivalent-brand"), help: .hidden) var osEquivalentBrand: String?

    @Option(help: ArgumentHelp("Binocular far pupillary distance (glasses).", valueName: "mm")) var pd: String?
    @Option(help: ArgumentHelp("Binocular near pupillary distance (glasses).", valueName: "mm")) var nearPd: String?
    @Option(name: .customLong("pd-od"), help: ArgumentHelp("Right monocular far PD (glasses).", valueName: "mm"))
    var pdRight: String?
    @Option(name: .customLong("pd-os"), help: ArgumentHelp("Left monocular far PD (glasses).", valueName: "mm"))
    var pdLeft: String?
    @Option(name: .customLong("near-pd-od"), help: ArgumentHelp("Right monocular near PD (glasses).", valueName: "mm"))
    var nearPdRight: String?
    @Option(name: .customLong("near-pd-os"), help: ArgumentHelp("Left monocular near PD (glasses).", valueName: "mm"))
    var nearPdLeft: String?
    @Option(help: ArgumentHelp("Vertex distance for both eyes (glasses).", valueName: "mm")) var vertex: String?
    @Option(help: "Lens brand for both eyes (contacts); --od-brand/--os-brand when they differ.") var brand: String?
    @Option(help: "Lens manufacturer for both eyes (contacts; --od-/--os-manufacturer).") var manufacturer: String?
    @Option(help: "Lens material for both eyes (contacts; --od-/--os-material).") var material: String?
    @Option(
        help: "For a private-label lens, the brand it is the same lens as (contacts; --od-/--os-equivalent-brand).")
    var equivalentBrand: String?
    @Option(
        help: ArgumentHelp(
            "Contact-lens type: soft, rgp, scleral, hybrid or ortho-k (contacts; sharpens the base-curve and diameter warnings).",
            valueName: "type")) var lensType: String?

    /// Per-eye field flags (`--od-sphere` ... `--os-brand`), by eye.
    func fieldFlags(_ eye: Eye) -> EyeFields {
        eye == .right
            ? EyeFields(
                sphere: odSphere, cylinder: odCylinder, axis: odAxis, add: odAdd, prism: odPrism,
                vertex: odVertex, baseCurve: odBaseCurve, diameter: odDiameter, brand: odBrand,
                manufacturer: odManufacturer, material: odMaterial, equivalentBrand: odEquivalentBrand)
            : EyeFields(
                sphere: osSphere, cylinder: osCylinder, axis: osAxis, add: osAdd, prism: osPrism,
                vertex: osVertex, baseCurve: osBaseCurve, diameter: osDiameter, brand: osBrand,
                manufacturer: osManufacturer, material: osMaterial, equivalentBrand: osEquivalentBrand)
    }

    func notation(_ eye: Eye) -> String? { eye == .right ? od : os }

    struct EyeFields {
        var sphere, cylinder, axis, add, prism, vertex, baseCurve, diameter, brand: String?
        var manufacturer, material, equivalentBrand: String?
        var isEmpty: Bool {
            [
                sphere, cylinder, axis, add, prism, vertex, baseCurve, diameter, brand, manufacturer, material,
                equivalentBrand
            ].allSatisfy { $0 == nil }
        }
    }

    /// Whether any field flag at all was given (edit refuses to do nothing).
    var isEmpty: Bool {
        let all: [String?] = [
            patient, dob, prescriber, prescriberLicence, prescriberContact, prescriberAddress, prescriberPhone,
            prescriberFax, examDate, issued, expires, shortExpiryReason, note, od, os, pd, nearPd, pdRight, pdLeft,
            nearPdRight, nearPdLeft, vertex, brand, manufacturer, material, equivalentBrand, lensType
        ]
        return all.allSatisfy { $0 == nil } && fieldFlags(.right).isEmpty && fieldFlags(.left).isEmpty
    }
}
