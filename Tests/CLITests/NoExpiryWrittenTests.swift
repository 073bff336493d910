import Foundation
import Testing

/// A prescription with no expiry date written (issue 47, 10): `valid` for two years from its issue
/// date, then `no expiry written (issued DATE)` in every output, the same word on the same day
/// (list, show, JSON, CSV, the printed page), matched by no `--valid-on` after, never due.
/// Through the binary; today is 2026-06-15.
@Suite struct NoExpiryWrittenTests {
    /// Old glasses (2014, no expiry), recent glasses of another patient (2025, no expiry).
    func vault() throws -> (CLIHarness, old: String, recent: String) {
        try CLIHarness.withUndatedGlasses(recentIssued: "2025-01-01")
    }

    func statuses(_ cli: CLIHarness, _ arguments: [String] = [], today: String? = nil) throws -> [String: String] {
        let r = try cli.run(
            [arguments.isEmpty ? "list" : "query", "--format", "json"] + arguments,
            environment: today.map { ["RXVAULT_TODAY": $0] } ?? [:])
        #expect(r.status == 0, "\(r)")
        var out: [String: String] = [:]
        for item in try cli.json(r.stdout)["prescriptions"] as? [[String: Any]] ?? [] {
            out[String((item["id"] as? String ?? "").prefix(8))] = item["status"] as? String
        }
        return out
    }

    @Test func everyOutputSaysNoExpiryWrittenOnceTwoYearsHavePassed() throws {
        let (cli, old, recent) = try vault()
        #expect(try statuses(cli) == [old: "no-expiry-written", recent: "valid"])
        // Two years by the calendar: valid on 2016-06-15, not the day after.
        #expect(try statuses(cli, today: "2016-06-15")[old] == "valid")
        #expect(try statuses(cli, today: "2016-06-16")[old] == "no-expiry-written")

        let list = try cli.run(["list", "--wide"])
        let row = list.stdout.split(separator: "\n").first { $0.hasPrefix(old) }.map(String.init) ?? ""
        #expect(row.contains("no expiry written (issued 2014-06-15)"), "\(list)")
        #expect(!row.contains("valid"), "\(row)")

        let show = try cli.run(["show", old])
        #expect(show.stdout.contains("no expiry written (issued 2014-06-15)"), "\(show)")
        #expect(!show.stdout.contains("(valid)"), "\(show)")
        let json = try cli.json(try cli.run(["show", old, "--format", "json"]).stdout)
        #expect(json["status"] as? String == "no-expiry-written")
        #expect(json["expires"] == nil, "no expiry is invented: \(json)")
        #expect(try cli.run(["show", recent]).stdout.contains("no expiry date  (valid)"))

        let csv = try cli.run(["export", old, "--format", "csv", "--out", "-"])
        let cells =
            csv.stdout.split(separator: "\n").dropFirst().first?.split(
                separator: ",", omittingEmptySubsequences: false) ?? []
        #expect(cells.count > 9 && cells[3] == "no-expiry-written" && cells[9] == "", "\(csv)")

        let pdf = cli.path("old.pdf")
        #expect(try cli.run(["export", old, "--format", "pdf", "--out", pdf]).status == 0)
        let page = try PrintTests.poppler(cli, ["pdftotext", "-layout", pdf, "-"]).stdout
        #expect(
            page.contains("no expiry written (issued 2014-06-15): over 2 years old on 2026-06-15"), "\(page)")
        #expect(!page.contains("valid on"), "\(page)")

        // The FHIR export invents no expiry.
        let fhir = try cli.run(["export", old, "--format", "fhir", "--out", "-"])
        #expect(fhir.status == 0 && !fhir.stdout.contains("expiration-date"), "\(fhir)")
    }

    @Test func validOnAndDueAgreeWithTheStatus() throws {
        let (cli, old, recent) = try vault()
        func validOn(_ day: String) throws -> [String] {
            try statuses(cli, ["--valid-on", day]).keys.sorted()
        }
        #expect(try validOn("2026-06-15") == [recent])
        #expect(try validOn("2016-06-15") == [old])
        #expect(try validOn("2016-06-16") == [])
        // Not expired either: the prescriber is to say, not the dates.
        #expect(try statuses(cli, ["--expired"]).isEmpty)
        let due = try cli.run(["due", "--within", "1y"])
        #expect(due.status == 3, "\(due)")
    }
}
