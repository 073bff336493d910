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
    /// The printable copy: one page per prescription, drawn when the last item has come (a page
    /// names the others by their shortest unique ids, so the set must be known first).
    final class PDFExportStream: ExportStream {
        let output: ExportOutput
        let today: CalendarDate
        let created: String
        private var items: [ExportItem] = []

        init(output: ExportOutput, today: CalendarDate, created: String) {
            self.output = output
            self.today = today
            self.created = created
        }

        func add(_ items: [ExportItem]) throws { self.items += items }

        func finish() throws {
            let short = PrescriptionID.shortForms(items.map(\.record.id))
            let pages = items.map {
                PrescriptionPrint.page($0, shortID: short[$0.record.id] ?? $0.record.id.short, today: today)
            }
            do { try output.write(try PDFPrinter.pdf(pages, title: "Prescriptions", created: created)) } catch {
                throw CLIError(.failure, "cannot write the PDF: \(error)")
            }
            try output.flush()
        }
    }
}
