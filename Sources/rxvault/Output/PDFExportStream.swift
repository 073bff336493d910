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
        /// Which records a newer one replaces: a superseded page says by which, as `show` does.
        let supersession: ([PrescriptionRecord]) throws -> [PrescriptionID: PrescriptionID]
        private var items: [ExportItem] = []
        /// The vault's `assumed-validity` setting (the owner's; nil for a client).
        let assumedValidity: AssumedValidity?

        init(
            output: ExportOutput, today: CalendarDate, created: String,
            supersession: @escaping ([PrescriptionRecord]) throws -> [PrescriptionID: PrescriptionID] = { _ in [:] },
            assumedValidity: AssumedValidity? = nil
        ) {
            self.assumedValidity = assumedValidity
            self.output = output
            self.today = today
            self.created = created
            self.supersession = supersession
        }

        func add(_ items: [ExportItem]) throws { self.items += items }

        func finish() throws {
            let short = PrescriptionID.shortForms(items.map(\.record.id))
            let superseded = try supersession(items.map(\.record))
            let pages = items.map {
                PrescriptionPrint.page(
                    $0, shortID: short[$0.record.id] ?? $0.record.id.short, today: today,
                    supersededBy: superseded[$0.record.id], assumedValidity: assumedValidity)
            }
            do { try output.write(try PDFPrinter.pdf(pages, title: "Prescriptions", created: created)) } catch {
                throw CLIError(.failure, "cannot write the PDF: \(error)")
            }
            try output.flush()
        }
    }
}
