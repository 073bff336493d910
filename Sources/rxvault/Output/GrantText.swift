import ArgumentParser
import Foundation
import RxCrypto
import RxModel
import RxVault

#if canImport(Glibc)
    import Glibc
#endif

enum GrantText {
    /// EXPIRES and STATUS in red for an expired grant, yellow for one that ends within the
    /// window a prescription counts as expiring in. On a narrow terminal the times (granted,
    /// last read) go beneath the row, then whether attachments and measurements are shared: names
    /// stay whole.
    static func table(_ grants: [GrantSummary], today: CalendarDate, style: TableStyle = .plain) -> String {
        Table.render(
            headers: [
                "CLIENT", "PRESCRIPTION", "GRANTED", "EXPIRES", "ATTACHMENTS", "MEASUREMENTS", "STATUS", "LAST READ",
                "API ID"
            ],
            rows: grants.map { g in
                [
                    g.client.name, g.prescriptionID.short, g.granted, g.expires?.description ?? "-",
                    g.includesAttachments ? "yes" : "no", g.includesMeasurements ? "yes" : "no",
                    g.isActive(on: today) ? "active" : "expired", g.lastRead ?? "never",
                    FHIR.prescriptionResourceID(g.prescriptionID)
                ]
            },
            tones: grants.map { g in
                !g.isActive(on: today)
                    ? .expired
                    : g.expires.map { today.days(until: $0) <= PrescriptionStatus.defaultWarningDays } == true
                        ? .expiring : nil
            }, tinted: [3, 6],
            overflow: [.init(columns: [8]), .init(columns: [2, 7]), .init(columns: [4, 5]), .init(columns: [3, 6])],
            style: style)
    }

    /// "2026-12-31", or a duration from today: "30d", "12w", "6m". The end must be a day the
    /// vault can store and read back: 9999-12-31 at the latest (CalendarDate).
    static func parseExpiry(_ text: String, today: CalendarDate) throws -> CalendarDate {
        if let date = CalendarDate(iso: text) { return date }
        if let days = Duration.days(text), days > 0 {
            guard let end = today.adding(days: days) else {
                throw CLIError(
                    .invalidInput,
                    "--expires '\(text)': \(days) days from \(today) is after \(CalendarDate.latest), the last day a grant can have",
                    hint: "give a date up to \(CalendarDate.latest), or --no-expiry")
            }
            return end
        }
        if let problem = CalendarDate.problem(iso: text), problem.hasPrefix("outside") {
            throw CLIError(
                .invalidInput, "--expires '\(text)': \(problem)",
                hint: "give a date up to \(CalendarDate.latest), or --no-expiry")
        }
        throw CLIError(
            .invalidInput,
            "--expires '\(text)': give a date YYYY-MM-DD, a duration such as 30d, 12w, 6m (at most \(Duration.maxDays) days), or never"
        )
    }
}
