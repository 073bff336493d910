import Foundation
import RxCrypto
import RxTestSupport
import Testing

/// An import checks its items a batch at a time on all cores and seals a batch's new versions
/// together (`Vault.importBatchSize`, 256). What it stores, says and refuses must be what the
/// same import does one item at a time: `RXVAULT_TEST_IMPORT_FLUSH=1` makes every batch one item
/// (a batch is never longer than the manifest's rewrite interval), which is the reference here.
@Suite struct ImportBatchTests {
    static let oneAtATime: [String: String?] = ["RXVAULT_TEST_IMPORT_FLUSH": "1"]
    static func id(_ i: Int) -> String { String(format: "%032x", 0xba7c_4000 + i) }

    /// `count` glasses prescriptions, each its own patient but for `patients` (index -> name and
    /// birth date), with `expires` changed for the indexes in `expired` (refused by the rules) and
    /// the id of another index for those in `duplicates`, and another right sphere for those in
    /// `changed`.
    static func file(
        _ count: Int, patients: [Int: (String, String?)] = [:], expired: Set<Int> = [],
        duplicates: [Int: Int] = [:], changed: Set<Int> = []
    ) -> String {
        let entries = (0..<count).map { i -> String in
            let (name, born) = patients[i] ?? ("Pat \(i)", nil)
            let birthDate = born.map { #", "birthDate": "\#($0)""# } ?? ""
            return """
                {"id": "\(id(duplicates[i] ?? i))", "version": 1, "recorded": "2026-01-01T00:00:00Z",
                 "prescription": {"kind": "glasses", "patient": {"name": "\(name)"\(birthDate)},
                 "prescriber": {"name": "Dr Lee"}, "issued": "2025-03-01",
                 "expires": "\(expired.contains(i) ? "2020-01-01" : "2027-03-01")",
                 "right": {"sphere": \(changed.contains(i) ? "-2.50" : "-1.25")}, "left": {"sphere": -\(1 + i % 8).25}}}
                """
        }
        return
            "{\"schema\": \"rxvault/export/v1\", \"exported\": \"2026-01-01T00:00:00Z\", \"prescriptions\": [\(entries.joined(separator: ","))]}"
    }

    /// `body` on a new vault, run twice: the import in batches, then one item at a time (the
    /// environment `body` is to import with); what each gave, in that order.
    static func bothWays<T>(_ body: (CLIHarness, [String: String?]) throws -> T) throws -> [T] {
        try [[:], oneAtATime].map { environment in
            let cli = try CLIHarness()
            try cli.initVault()
            return try body(cli, environment)
        }
    }

    /// A vault's whole export (`--versions`) without what differs between two imports of the
    /// same file: patient record ids (random), recorded times, attachment ids and times.
    static func content(_ cli: CLIHarness) throws -> [String: NSDictionary] {
        let out = cli.path("content-\(UUID().uuidString).json")
        let r = try cli.run(["export", "--format", "json", "--versions", "--out", out])
        #expect(r.status == 0, "\(r)")
        let file = try cli.json(try String(contentsOfFile: out, encoding: .utf8))
        var byID: [String: NSDictionary] = [:]
        for var entry in file["prescriptions"] as? [[String: Any]] ?? [] {
            func plain(_ version: [String: Any]) -> [String: Any] {
                var version = version
                version["recorded"] = nil
                if var prescription = version["prescription"] as? [String: Any],
                    var patient = prescription["patient"] as? [String: Any]
                {
                    patient["id"] = nil
                    prescription["patient"] = patient
                    version["prescription"] = prescription
                }
                return version
            }
            entry = plain(entry)
            entry["history"] = (entry["history"] as? [[String: Any]])?.map(plain)
            entry["attachments"] = (entry["attachments"] as? [[String: Any]])?.map {
                $0.filter { $0.key != "id" && $0.key != "added" }
            }
            byID[entry["id"] as? String ?? ""] = NSDictionary(dictionary: entry)
        }
        return byID
    }

    /// A patient named again later with a birth date gets it (and every earlier prescription of
    /// theirs is refreshed, so the vault checks), whether the two are in one batch or two; a
    /// file with attachments and earlier versions at a batch's edge stores them all. Both
    /// imports store what the import one item at a time does.
    @Test func anImportInBatchesStoresWhatOneAtATimeStores() throws {
        let patients: [Int: (String, String?)] = [
            0: ("Sam Example", nil), 1: ("Sam Example", "1980-04-02"),
            10: ("Kim Example", nil), 280: ("Kim Example", "1975-01-09")
        ]
        let raw = Self.file(600, patients: patients)
        let vaults = try Self.bothWays { cli, environment in
            let r = try cli.run(["import", try cli.write(raw, to: "raw.json")], environment: environment)
            #expect(r.status == 0, "\(r)")
            #expect(r.stdout.contains("imported: 600 new"), "\(r)")
            #expect(r.stderr.contains("birth date set to 1980-04-02"), "\(r)")
            #expect(r.stderr.contains("birth date set to 1975-01-09"), "\(r)")
            let check = try cli.run(["check"])
            #expect(check.status == 0, "\(check)")
            for (i, born) in [(0, "1980-04-02"), (10, "1975-01-09")] {
                let shown = try cli.json(try cli.run(["show", Self.id(i), "--format", "json"]).stdout)
                let patient = shown["patient"] as? [String: Any]
                #expect(patient?["birthDate"] as? String == born, "\(i): \(shown)")
            }
            return cli
        }
        let batched = try Self.content(vaults[0])
        #expect(batched.count == 600)
        #expect(batched == (try Self.content(vaults[1])))

        // An export with attachments and earlier versions at a batch's edge, imported both ways.
        let source = vaults[0]
        for i in [255, 256, 257] {
            #expect(try source.run(["attach", Self.id(i), AttachmentTests.photo, "--name", "rx\(i).png"]).status == 0)
        }
        #expect(try source.run(["edit", Self.id(256), "--note", "second version"]).status == 0)
        #expect(try source.run(["edit", Self.id(511), "--note", "second version"]).status == 0)
        let exported = source.path("source.json")
        #expect(try source.run(["export", "--format", "json", "--versions", "--out", exported]).status == 0)
        let copies = try Self.bothWays { cli, environment in
            let r = try cli.run(["import", exported], environment: environment)
            #expect(r.status == 0, "\(r)")
            #expect(r.stdout.contains("imported: 600 new") && r.stdout.contains("3 attachment(s)"), "\(r)")
            #expect(try cli.run(["check"]).status == 0)
            return try Self.content(cli)
        }
        let original = try Self.content(source)
        #expect(copies[0] == original)
        #expect(copies[1] == original)
        let edited = try #require(original[Self.id(256)])
        #expect((edited["history"] as? [Any])?.count == 1)
        #expect((edited["attachments"] as? [Any])?.count == 1)
    }

    /// A second import of the same ids, some changed and some new, across batch edges: the
    /// updates (sealed with the versions a batch holds pending) and the unchanged items come out
    /// as one item at a time gives them, with the same summary.
    @Test func updatesAmongNewItemsInBatchesStoreWhatOneAtATimeStores() throws {
        let changed = Set(stride(from: 0, to: 400, by: 3))
        let first = Self.file(400)
        let second = Self.file(600, changed: changed)
        let runs = try Self.bothWays { cli, environment in
            #expect(
                try cli.run(["import", try cli.write(first, to: "first.json")], environment: environment).status == 0)
            let r = try cli.run(
                ["import", try cli.write(second, to: "second.json"), "--update-unverified"], environment: environment)
            #expect(r.status == 0, "\(r)")
            #expect(r.stdout.contains("imported: 200 new, 134 updated (new version), 266 unchanged"), "\(r.stdout)")
            let check = try cli.run(["check"])
            #expect(check.status == 0, "\(check)")
            // What the second file says, stored: an update, an unchanged item, a new one.
            let updated = try cli.json(try cli.run(["show", Self.id(255), "--format", "json"]).stdout)
            #expect(updated["version"] as? Int == 2, "\(updated)")
            #expect((updated["right"] as? [String: Any])?["sphere"] as? Double == -2.5, "\(updated)")
            for i in [256, 599] {
                let shown = try cli.json(try cli.run(["show", Self.id(i), "--format", "json"]).stdout)
                #expect(shown["version"] as? Int == 1, "\(i): \(shown)")
                #expect((shown["right"] as? [String: Any])?["sphere"] as? Double == -1.25, "\(i): \(shown)")
            }
            return (r.stdout, try Self.content(cli))
        }
        #expect(runs[0].0 == runs[1].0)
        #expect(runs[0].1.count == 600)
        #expect(runs[0].1 == runs[1].1)
    }

    /// Every problem of a refused import is listed in file order, each near miss of a patient
    /// once, whatever batch it falls in: the same lines as the import one item at a time.
    @Test func aRefusedImportInBatchesListsWhatOneAtATimeLists() throws {
        // Once an item is refused the rest are only checked, so near misses come in a file of their own.
        let invalid = Self.file(600, expired: [5, 255, 256, 599], duplicates: [300: 2])
        // The first with a line break after it, which the rules trim before the name is compared.
        let nearMisses = Self.file(600, patients: [100: (#"Sam Exampel\n"#, nil), 400: ("Sam Exampel", nil)])
        let refusals = try Self.bothWays { cli, environment in
            let known = Self.file(1, patients: [0: ("Sam Example", "1980-04-02")])
            #expect(try cli.run(["import", try cli.write(known, to: "known.json")]).status == 0)
            let before = try cli.run(["list", "--format", "json"]).stdout
            return try [invalid, nearMisses].map { raw in
                let r = try cli.run(["import", try cli.write(raw, to: "raw.json")], environment: environment)
                #expect(r.status == 65, "\(r)")
                #expect(try cli.run(["list", "--format", "json"]).stdout == before)
                // The near miss names the record by its id, random in each vault.
                return r.stderr.replacingOccurrences(
                    of: #"\([0-9a-f]{8}\)"#, with: "(id)", options: .regularExpression)
            }
        }
        #expect(refusals[0] == refusals[1])
        let lines = refusals[0][0].split(separator: "\n").map(String.init)
        let positions = [5, 255, 256, 300, 599].map { "prescriptions[\($0)]" }
        let found = positions.map { position in lines.firstIndex { $0.contains(position + ":") } }
        #expect(found.allSatisfy { $0 != nil }, "\(refusals[0][0])")
        #expect(found.compactMap { $0 } == found.compactMap { $0 }.sorted(), "in file order: \(refusals[0][0])")
        #expect(lines.contains { $0.contains("prescriptions[300]: the same prescription appears twice") })
        let near = refusals[0][1].split(separator: "\n").filter { $0.contains("did you mean 'Sam Example'") }
        #expect(near.count == 1 && near[0].contains("prescriptions[100]"), "\(refusals[0][1])")
    }

    /// An item whose import fails (its attachment refused by the validator) before an entry that
    /// does not decode: the item's refusal is the one reported, as when each was imported as it
    /// came, not the decoding problem of the entry after it in the same batch.
    @Test func anEarlierItemsRefusalComesBeforeALaterEntrysDecodingProblem() throws {
        let junk = Data("this is not a PNG".utf8)
        let hash = SHA256()
        hash.update(Array(junk))
        let attachment = """
            {"id": "\(String(repeating: "ef", count: 16))", "name": "scan.png", "type": "png", "size": \(junk.count),
             "sha256": "\(hash.finalHex())", "added": "2026-01-01T00:00:00Z", "data": "\(junk.base64EncodedString())"}
            """
        let first = Self.file(1).replacingOccurrences(
            of: "\"left\": {\"sphere\": -1.25}}}",
            with: "\"left\": {\"sphere\": -1.25}}, \"attachments\": [\(attachment)]}")
        #expect(first.contains("scan.png"))
        let raw = first.replacingOccurrences(of: "}}]}", with: "}]}, {\"id\": \"\(Self.id(1))\"}]}")
        let refusals = try Self.bothWays { cli, environment in
            let r = try cli.run(["import", try cli.write(raw, to: "raw.json")], environment: environment)
            #expect(r.status == 65, "\(r)")
            #expect(r.stderr.contains("prescriptions[0] attachment scan.png: refused"), "\(r)")
            #expect(!r.stderr.contains("prescriptions[1]"), "\(r)")
            return r.stderr
        }
        #expect(refusals[0] == refusals[1])
    }
}
