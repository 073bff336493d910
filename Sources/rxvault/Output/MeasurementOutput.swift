import RxModel
import RxVault

/// `measurement list` as a table or JSON (`rxvault/measurements/v1`, docs/format.md). Acuities are
/// shown as written, with their logMAR value in JSON.
enum MeasurementOutput {
    /// On a terminal narrower than the table, the notes, the acuities (several make the row over
    /// 100 columns), then the axial lengths go beneath their row, as `list` moves the lenses.
    static func text(_ records: [MeasurementRecord], style: TableStyle = .plain) -> String {
        let rows: [[String]] = records.map { r in
            let m = r.measurement
            let acuities = AcuitySlot.allCases.compactMap { slot in
                m.acuity[slot].map { "\(slot.eyeLabel) \(slot.corrected ? "cc" : "sc") \($0.written)" }
            }
            return [
                m.short, r.patient.name, m.date.description, m.axialLengthRight.map(length) ?? "-",
                m.axialLengthLeft.map(length) ?? "-", acuities.isEmpty ? "-" : acuities.joined(separator: ", "),
                [m.device, m.cycloplegic ? "cycloplegic" : nil].compactMap { $0 }.joined(separator: ", ")
            ]
        }
        return Table.render(
            headers: ["ID", "PATIENT", "DATE", "AL OD", "AL OS", "VA", "NOTES"], rows: rows,
            overflow: [.init(columns: [6]), .init(columns: [5]), .init(columns: [3, 4])], style: style)
    }

    /// `23.45 mm`, always two decimals (as biometers print it).
    static func length(_ value: Hundredths) -> String { millimetres(value) + " mm" }

    static func millimetres(_ value: Hundredths) -> String { value.twoDecimals }

    static func json(_ records: [MeasurementRecord]) -> JSONValue {
        .object([
            ("schema", .string("rxvault/measurements/v1")), ("measurements", .array(records.map(record)))
        ])
    }

    static func record(_ r: MeasurementRecord) -> JSONValue {
        let m = r.measurement
        var pairs: [(String, JSONValue)] = [
            ("id", .string(m.id)),
            ("patient", .object([("id", .string(r.patient.id.hex)), ("name", .string(r.patient.name))])),
            ("date", .string(m.date.description))
        ]
        if let value = m.axialLengthRight { pairs.append(("axialLengthOD", .number(millimetres(value)))) }
        if let value = m.axialLengthLeft { pairs.append(("axialLengthOS", .number(millimetres(value)))) }
        if let device = m.device { pairs.append(("device", .string(device))) }
        pairs.append(("cycloplegic", .bool(m.cycloplegic)))
        let acuities: [JSONValue] = AcuitySlot.allCases.compactMap { slot in
            m.acuity[slot].map { va in
                .object([
                    ("eye", .string(slot.eyeLabel.lowercased())), ("corrected", .bool(slot.corrected)),
                    ("written", .string(va.written)), ("notation", .string(va.notation.rawValue)),
                    ("logMAR", .number(va.logMARText))
                ])
            }
        }
        pairs.append(("acuity", .array(acuities)))
        return .object(pairs)
    }
}
