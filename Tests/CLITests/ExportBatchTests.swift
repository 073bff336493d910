import Foundation
import RxTestSupport
import Testing

/// A whole-vault export reads its prescriptions in batches (`Vault.exportBatchSize`, 256), opens
/// each batch on all cores and writes it in order. Each prescription must still come with its own
/// attachments, earlier versions and patient, in the order `query` lists them: the export of
/// every id named one by one (read one at a time) is the reference, entry for entry.
@Suite struct ExportBatchTests {
    @Test func aWholeVaultExportInBatchesHasWhatTheExportOfEachIdHas() throws {
        let cli = try CLIHarness()
        try cli.initVault()
        let file = try cli.write(LargeImportTests.export(), to: "large.json")
        #expect(try cli.run(["import", file]).status == 0)
        // The order `query` lists them in, read on the index alone.
        let listed = try cli.run(["query", "--format", "json"])
        #expect(listed.status == 0, "\(listed)")
        let order = (try cli.json(listed.stdout)["prescriptions"] as? [[String: Any]] ?? []).compactMap {
            $0["id"] as? String
        }
        #expect(order.count == LargeImportTests.size)

        // Attachments at the edges of batches and an edit (a second version) inside one.
        let marked = [0, 255, 256, 511, 512, order.count - 1].map { order[$0] }
        for id in marked {
            let r = try cli.run(["attach", id, AttachmentTests.photo, "--name", "rx-\(id.suffix(8)).png"])
            #expect(r.status == 0, "\(r)")
        }
        let edited = order[300]
        #expect(try cli.run(["edit", edited, "--note", "second version"]).status == 0)

        let whole = try Self.entries(
            cli, ["export", "--format", "json", "--versions", "--out", cli.path("whole.json")], "whole.json")
        let named = try Self.entries(
            cli, ["export"] + order + ["--format", "json", "--versions", "--out", cli.path("named.json")],
            "named.json")
        #expect(whole.map { $0["id"] as? String } == order)
        #expect(whole.count == named.count)
        for (a, b) in zip(whole, named) where !NSDictionary(dictionary: a).isEqual(to: b) {
            Issue.record("entry \(a["id"] ?? "?") differs between the whole export and the named one")
        }
        for entry in whole {
            let id = entry["id"] as? String ?? ""
            let names = (entry["attachments"] as? [[String: Any]] ?? []).compactMap { $0["name"] as? String }
            #expect(names == (marked.contains(id) ? ["rx-\(id.suffix(8)).png"] : []), "\(id): \(names)")
            #expect(((entry["history"] as? [Any])?.count ?? 0) == (id == edited ? 1 : 0), "\(id)")
            let patient = (entry["prescription"] as? [String: Any])?["patient"] as? [String: Any]
            let index = Int(id, radix: 16).map { $0 - 0xbee000 } ?? -1
            #expect(patient?["name"] as? String == "Pat \(index)", "\(id)")
        }

        // CSV and FHIR, written on all cores, are the same bytes as the named export's.
        // One time for both (a Bundle's id and timestamp come from it).
        let now = ["RXVAULT_NOW": "2026-06-15T10:00:00Z"]
        for format in ["csv", "fhir"] {
            let a = try cli.run(["export", "--format", format, "--out", cli.path("whole.\(format)")], environment: now)
            #expect(a.status == 0, "\(a)")
            let b = try cli.run(
                ["export"] + order + ["--format", format, "--out", cli.path("named.\(format)")], environment: now)
            #expect(b.status == 0, "\(b)")
            let whole = try Data(contentsOf: URL(fileURLWithPath: cli.path("whole.\(format)")))
            let named = try Data(contentsOf: URL(fileURLWithPath: cli.path("named.\(format)")))
            #expect(whole == named, "the whole \(format) export differs from the named one")
        }
        // Read back: a CSV row per eye, and the Bundle's prescriptions in the query's order.
        let csv = try String(contentsOfFile: cli.path("whole.csv"), encoding: .utf8)
        #expect(csv.split(separator: "\n").count == 1 + 2 * order.count)
        let bundle = try cli.json(try String(contentsOfFile: cli.path("whole.fhir"), encoding: .utf8))
        let resources = (bundle["entry"] as? [[String: Any]] ?? []).compactMap { $0["resource"] as? [String: Any] }
        let prescriptions = resources.filter { $0["resourceType"] as? String == "VisionPrescription" }
        #expect(prescriptions.count == order.count)
        #expect(resources.filter { $0["resourceType"] as? String == "Patient" }.count == order.count)
    }

    static func entries(_ cli: CLIHarness, _ arguments: [String], _ name: String) throws -> [[String: Any]] {
        let r = try cli.run(arguments)
        #expect(r.status == 0, "\(r)")
        let text = try String(contentsOfFile: cli.path(name), encoding: .utf8)
        return try cli.json(text)["prescriptions"] as? [[String: Any]] ?? []
    }
}
