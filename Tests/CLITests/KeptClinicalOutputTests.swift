import Foundation
import RxTestSupport
import Testing

/// The clinical elements kept from FHIR (a lensSpecification's `color`, `duration` and `note`:
/// tint, wear duration, lens notes) on the printed page and in CSV, whose new columns come last
/// so every earlier column keeps its place.
@Suite struct KeptClinicalOutputTests {
    @Test func keptClinicalElementsArePrintedAndInCSV() throws {
        let cli = try CLIHarness()
        try cli.initVault()
        #expect(try cli.run(["import", FHIRImportTests.hl7, "--assume-expiry", "1y"]).status == 0)
        let contacts = try cli.run(["query", "--kind", "contacts", "--format", "json"])
        let id = try #require(
            ((try cli.json(contacts.stdout)["prescriptions"] as? [[String: Any]])?.first)?["id"] as? String)

        // CSV: three columns at the end; the earlier columns keep their places.
        let csv = try cli.run(["export", id, "--format", "csv", "--out", "-"])
        #expect(csv.status == 0, "\(csv)")
        let lines = csv.stdout.split(separator: "\n").map(String.init)
        let header = lines.first?.split(separator: ",").map(String.init) ?? []
        // Then `assumed_expiry` (format 7), last so that no column moves.
        #expect(Array(header.suffix(4)) == ["tint", "wear_duration", "lens_note", "assumed_expiry"], "\(header)")
        // The Contact Lens Rule's eight columns sit between `balance` and these three.
        #expect(header.firstIndex(of: "balance") == header.count - 13)
        #expect(header.firstIndex(of: "brand") == 23 && header.firstIndex(of: "note") == 25, "\(header)")
        #expect(lines.count == 3)
        for row in lines.dropFirst() {
            #expect(row.hasSuffix(",green,1 month,Shade treatment for extreme light sensitivity,"), "\(row)")
        }
        // A prescription with none has the columns, empty.
        let own = try cli.add(CLIHarness.glassesArguments)
        let plain = try cli.run(["export", own, "--format", "csv", "--out", "-"])
        #expect(plain.stdout.split(separator: "\n").dropFirst().allSatisfy { $0.hasSuffix(",,,,") }, "\(plain)")

        // The printed page.
        let out = cli.path("rx.pdf")
        #expect(try cli.run(["export", id, "--format", "pdf", "--out", out]).status == 0)
        let text = try PrintTests.poppler(cli, ["pdftotext", "-layout", out, "-"])
        #expect(text.status == 0, "\(text)")
        let flat = text.stdout.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        for value in [
            "Lens details (from FHIR)", "OD tint: green", "OS tint: green", "OD wear duration: 1 month",
            "OS wear duration: 1 month", "OD note: Shade treatment for extreme light sensitivity"
        ] {
            #expect(flat.contains(value), "the page lacks \(value): \(text.stdout)")
        }
    }
}
