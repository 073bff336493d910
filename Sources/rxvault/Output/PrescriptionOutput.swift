import ArgumentParser
import Foundation
import RxModel
import RxVault

/// Printing a set of prescriptions in any of the list formats.
enum PrescriptionOutput {
    /// `superseded`: which of `records` a newer one replaces (`VaultReader.supersession`).
    static func print(
        _ records: [PrescriptionRecord], format: OutputFormat, cyl: CylinderForm?, wide: Bool = false,
        emptyMessage: String, keepOrder: Bool = false, superseded: [PrescriptionID: PrescriptionID] = [:],
        assumedValidity: AssumedValidity? = nil
    ) throws {
        let today = try Environment.clock().today()
        let views = records.map {
            PrescriptionView(
                record: $0, today: today, cylinderForm: cyl, supersededBy: superseded[$0.id],
                assumedValidity: assumedValidity)
        }
        switch format {
        case .table:
            guard !views.isEmpty else {
                Terminal.err(emptyMessage)
                return
            }
            Terminal.out(PrescriptionText.listTable(views, style: .forStandardOutput(wide: wide)))
        case .json:
            let list = PrescriptionListJSON(prescriptions: views.map(PrescriptionJSON.init))
            Terminal.out(list.text())
        case .ndjson:
            if !views.isEmpty {
                Terminal.out(views.map { PrescriptionJSON(view: $0).text(pretty: false) }.joined(separator: "\n"))
            }
        case .csv:
            Terminal.out(
                ([PrescriptionCSV.headers] + views.flatMap(PrescriptionCSV.rows)).map(CSV.line).joined(separator: "\n"))
        }
    }
}
