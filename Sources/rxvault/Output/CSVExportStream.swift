import ArgumentParser
import Foundation
import RxCrypto
import RxModel
import RxPrint
import RxVault

#if canImport(Glibc)
    import Glibc
#endif

extension RxVaultCommand {
    /// CSV written as it goes: one row per eye.
    final class CSVExportStream: ExportStream {
        let output: ExportOutput
        let today: CalendarDate
        /// Which records a newer one replaces: their status column says `superseded`, as `list` does.
        let supersession: ([PrescriptionRecord]) throws -> [PrescriptionID: PrescriptionID]
        /// The vault's `assumed-validity` setting (the owner's; nil for a client): the status and
        /// `assumed_expiry` columns go by it, `expires` never does.
        let assumedValidity: AssumedValidity?

        init(
            output: ExportOutput, today: CalendarDate,
            supersession: @escaping ([PrescriptionRecord]) throws -> [PrescriptionID: PrescriptionID] = { _ in [:] },
            assumedValidity: AssumedValidity? = nil
        ) throws {
            self.assumedValidity = assumedValidity
            self.output = output
            self.today = today
            self.supersession = supersession
            try output.write(CSV.line(PrescriptionCSV.headers) + "\n")
        }

        /// Renders the batch's rows on all cores, then writes them in order.
        func add(_ items: [ExportItem]) throws {
            let (today, validity) = (today, assumedValidity)
            let superseded = try supersession(items.map(\.record))
            let rendered = items.concurrentMap { item in
                var lines: [UInt8] = []
                let view = PrescriptionView(
                    record: item.record, today: today, cylinderForm: nil, supersededBy: superseded[item.record.id],
                    assumedValidity: validity)
                for row in PrescriptionCSV.rows(view) {
                    CSV.append(row, to: &lines)
                    lines.append(0x0A)
                }
                return lines
            }
            for lines in rendered { try output.write(lines) }
        }

        func finish() throws { try output.flush() }
    }
}
