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
        /// One prescription's rows, reused.
        private var line: [UInt8] = []

        init(output: ExportOutput, today: CalendarDate) throws {
            self.output = output
            self.today = today
            try output.write(CSV.line(PrescriptionCSV.headers) + "\n")
        }

        func add(_ item: ExportItem) throws {
            let view = PrescriptionView(record: item.record, today: today, cylinderForm: nil)
            line.removeAll(keepingCapacity: true)
            for row in PrescriptionCSV.rows(view) {
                CSV.append(row, to: &line)
                line.append(0x0A)
            }
            try output.write(line)
        }

        func finish() throws { try output.flush() }
    }
}
