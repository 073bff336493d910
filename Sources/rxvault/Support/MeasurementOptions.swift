import ArgumentParser
import RxModel
import RxVault

/// The values of a measurement on the command line (`measurement add` and `edit`): axial length
/// per eye, the device, cycloplegia and the six visual acuities. Each is read strictly here, so a
/// wrong value exits 65 naming the option before the vault is opened.
struct MeasurementValueOptions: ParsableArguments {
    @Option(
        name: .customLong("axial-length-od"),
        help: ArgumentHelp("Right eye's axial length in mm (15.00-35.00).", valueName: "mm"))
    var axialLengthOD: String?
    @Option(
        name: .customLong("axial-length-os"),
        help: ArgumentHelp("Left eye's axial length in mm (15.00-35.00).", valueName: "mm"))
    var axialLengthOS: String?
    @Option(help: ArgumentHelp("The biometer or chart used, e.g. \"IOLMaster 700\".", valueName: "name"))
    var device: String?
    @Option(name: .customLong("va-od"), help: ArgumentHelp("Right eye's acuity with correction.", valueName: "va"))
    var vaOD: String?
    @Option(name: .customLong("va-os"), help: ArgumentHelp("Left eye's acuity with correction.", valueName: "va"))
    var vaOS: String?
    @Option(name: .customLong("va-ou"), help: ArgumentHelp("Both eyes' acuity with correction.", valueName: "va"))
    var vaOU: String?
    @Option(
        name: .customLong("va-od-uncorrected"),
        help: ArgumentHelp("Right eye's acuity without correction.", valueName: "va"))
    var vaODUncorrected: String?
    @Option(
        name: .customLong("va-os-uncorrected"),
        help: ArgumentHelp("Left eye's acuity without correction.", valueName: "va"))
    var vaOSUncorrected: String?
    @Option(
        name: .customLong("va-ou-uncorrected"),
        help: ArgumentHelp("Both eyes' acuity without correction.", valueName: "va"))
    var vaOUUncorrected: String?

    /// Each acuity option given, by slot.
    var acuityTexts: [(AcuitySlot, String)] {
        let given: [(AcuitySlot, String?)] = [
            (.od, vaOD), (.os, vaOS), (.ou, vaOU), (.odUncorrected, vaODUncorrected),
            (.osUncorrected, vaOSUncorrected), (.ouUncorrected, vaOUUncorrected)
        ]
        return given.compactMap { slot, text in text.map { (slot, $0) } }
    }

    var isEmpty: Bool { axialLengthOD == nil && axialLengthOS == nil && device == nil && acuityTexts.isEmpty }

    /// Applies every option given to `m` (the others leave it as it is). Throws exit 65 naming the
    /// option and the value.
    func apply(to m: inout EyeMeasurement) throws {
        if let text = axialLengthOD { m.axialLengthRight = try Self.axialLength(text, option: "--axial-length-od") }
        if let text = axialLengthOS { m.axialLengthLeft = try Self.axialLength(text, option: "--axial-length-os") }
        if let device { m.device = device.split(whereSeparator: \.isWhitespace).joined(separator: " ") }
        for (slot, text) in acuityTexts {
            do { m.acuity[slot] = try VisualAcuity(parsing: text) } catch {
                throw CLIError(
                    .invalidInput, "\(slot.option) \(error)",
                    hint: "visual acuity is written \(VisualAcuity.forms)")
            }
        }
    }

    /// `23.45` in mm: a number with at most two decimals, in the plausible range.
    static func axialLength(_ text: String, option: String) throws -> Hundredths {
        if text.contains(",") {
            throw CLIError(.invalidInput, "\(option) '\(text)': write decimals with a dot (23.45), not a comma")
        }
        guard let value = Hundredths(parsing: text), !text.hasPrefix("+") else {
            throw CLIError(
                .invalidInput, "\(option) '\(text)' is not a length in mm (e.g. 23.45, at most two decimals)")
        }
        let range = MeasurementRules.axialLengthRange
        guard range.contains(value) else {
            throw CLIError(
                .invalidInput,
                "\(option) \(value.twoDecimals) mm is outside \(range.lowerBound.twoDecimals)-\(range.upperBound.twoDecimals) mm, the range of human eyes",
                hint: "axial length is in millimetres, e.g. 23.45")
        }
        return value
    }

    /// `2026-03-01` as a calendar date. Whether it is in the future or before the birth date is
    /// the vault's to say (`MeasurementRules`, against its clock and the patient record).
    static func date(_ text: String) throws -> CalendarDate {
        guard let day = CalendarDate(iso: text) else {
            throw CLIError(
                .invalidInput, "--date '\(text)': \(CalendarDate.problem(iso: text) ?? "not a date (YYYY-MM-DD)")")
        }
        return day
    }
}
