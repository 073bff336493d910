import Foundation
import RxStore
import RxTestSupport
import Testing

/// Exports and imports through the binary: round trips, a real FHIR client, age interop.
@Suite struct ExchangeTests {
    func setUp() throws -> (CLIHarness, String, String) {
        let cli = try CLIHarness()
        try cli.initVault()
        let glasses = try cli.add(CLIHarness.glassesArguments)
        let contacts = try cli.add(CLIHarness.contactsArguments)
        #expect(try cli.run(["attach", glasses, AttachmentTests.photo]).status == 0)
        #expect(try cli.run(["attach", contacts, AttachmentTests.pdf]).status == 0)
        return (cli, glasses, contacts)
    }

    /// The second vault, for round trips.
    func secondVault(_ cli: CLIHarness) throws -> [String: String?] {
        let pw = try cli.write("a second vault's passphrase\n", to: "pw2")
        let env: [String: String?] = ["RXVAULT_PATH": cli.path("second.rxv"), "RXVAULT_PASSPHRASE_FILE": pw]
        #expect(try cli.run(["init", "--kdf", "interactive"], environment: env).status == 0)
        return env
    }

    func normalizedJSON(_ cli: CLIHarness, _ env: [String: String?] = [:], _ id: String) throws -> [String: Any] {
        var object = try cli.json(try cli.run(["show", id, "--format", "json"], environment: env).stdout)
        object["recorded"] = nil
        object["version"] = nil
        // The patient record's id is the vault's own (an import finds or creates its record by name).
        var patient = object["patient"] as? [String: Any]
        #expect(patient?["id"] as? String != nil)
        patient?["id"] = nil
        object["patient"] = patient
        return object
    }

    @Test(arguments: ["json", "fhir"])
    func exportThenImportGivesTheSamePrescriptionsAndAttachments(format: String) throws {
        let (cli, glasses, contacts) = try setUp()
        let export = try cli.run(["export", "--format", format, "--out", cli.path("export.\(format)")])
        #expect(export.status == 0, "\(export)")
        let mode =
            try FileManager.default.attributesOfItem(atPath: cli.path("export.\(format)"))[.posixPermissions] as? Int
        #expect(mode == 0o600)
        let env = try secondVault(cli)
        let dry = try cli.run(["import", cli.path("export.\(format)"), "--dry-run"], environment: env)
        #expect(dry.stdout.contains("would import: 2 new"), "\(dry)")
        let imported = try cli.run(["import", cli.path("export.\(format)")], environment: env)
        #expect(
            imported.stdout.contains("imported: 2 new, 0 updated (new version), 0 unchanged, 2 attachment(s)"),
            "\(imported)")
        for id in [glasses, contacts] {
            let a = try normalizedJSON(cli, [:], id)
            let b = try normalizedJSON(cli, env, id)
            #expect(NSDictionary(dictionary: a).isEqual(to: b), "\(id) differs after the \(format) round trip")
        }
        for (id, file) in [(glasses, AttachmentTests.photo), (contacts, AttachmentTests.pdf)] {
            let name = (file as NSString).lastPathComponent
            #expect(try cli.run(["extract", id, name, "--out", cli.path("rt-\(name)")], environment: env).status == 0)
            #expect(
                FileManager.default.contents(atPath: cli.path("rt-\(name)"))
                    == FileManager.default.contents(atPath: file))
        }
        let again = try cli.run(["import", cli.path("export.\(format)")], environment: env)
        #expect(
            again.stdout.contains("0 new, 0 updated (new version), 2 unchanged, 0 attachment(s)"),
            "re-import creates no duplicates")
        let log = try cli.json(try cli.run(["log", "--format", "json"]).stdout)["entries"] as? [[String: Any]]
        #expect(
            log?.contains {
                $0["action"] as? String == "export" && ($0["detail"] as? String)?.hasPrefix(format) == true
            } == true)
    }

    /// A real FHIR client parses every resource: Python fhir.resources (R4B), installed by scripts/setup.
    @Test func fhirExportParsesWithFhirResources() throws {
        let (cli, _, _) = try setUp()
        #expect(try cli.run(["export", "--format", "fhir", "--out", cli.path("bundle.json")]).status == 0)
        let python = Repository.fhirPython
        try #require(
            FileManager.default.isExecutableFile(atPath: python),
            "no Python with fhir.resources at \(python): run scripts/setup")
        let script = """
            import json, sys
            from fhir.resources.R4B import get_fhir_model_class
            from fhir.resources.R4B.bundle import Bundle
            data = json.load(open(sys.argv[1]))
            Bundle.model_validate(data)
            kinds = []
            for entry in data["entry"]:
                resource = entry["resource"]
                get_fhir_model_class(resource["resourceType"]).model_validate(resource)
                kinds.append(resource["resourceType"])
            print(",".join(sorted(kinds)))
            """
        let checked = try Subprocess.run([python, "-c", script, cli.path("bundle.json")])
        #expect(checked.status == 0, "fhir.resources refused the bundle: \(checked.stderr)")
        #expect(
            checked.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
                == "DocumentReference,DocumentReference,Patient,VisionPrescription,VisionPrescription",
            "one patient record, so one Patient (the contacts prescription was added without a date of birth)")
    }

    func age(_ arguments: [String], in cli: CLIHarness) throws -> (Int32, Data) {
        let r = try cli.tool(["age"] + arguments)
        return (r.status, r.stdoutData)
    }

    @Test func ageEncryptedExportsForAClientAndForAPassphrase() throws {
        let (cli, glasses, contacts) = try setUp()
        let recipient = try cli.ageKeygen("shop.key")
        #expect(try cli.run(["client", "add", "shop", "--recipient", String(recipient)]).status == 0)
        // Before any grant: the file is written, but the owner is told it holds nothing.
        let empty = try cli.run(["export", "--format", "json", "--for", "shop", "--out", cli.path("empty.age")])
        #expect(empty.status == 0 && empty.stderr.contains("warning: shop is granted no prescriptions now"), "\(empty)")
        #expect(try cli.run(["grant", "shop", contacts, "--no-attachments"]).status == 0)

        // --for: only what the client is granted, and only the client (age -d -i) opens it.
        let forShop = try cli.run(["export", "--format", "json", "--for", "shop", "--out", cli.path("for-shop.age")])
        #expect(forShop.status == 0 && !forShop.stderr.contains("warning"), "\(forShop)")
        let (status, plain) = try age(["-d", "-i", "shop.key", "for-shop.age"], in: cli)
        #expect(status == 0)
        let document = try #require(try JSONSerialization.jsonObject(with: plain) as? [String: Any])
        let ids = (document["prescriptions"] as? [[String: Any]])?.compactMap { $0["id"] as? String } ?? []
        #expect(ids.count == 1 && ids[0].hasPrefix(contacts), "only the granted prescription")
        #expect(
            (document["prescriptions"] as? [[String: Any]])?.first?["attachments"] == nil,
            "the grant excludes attachments")
        #expect(!FileManager.default.contents(atPath: cli.path("for-shop.age"))!.contains("Quintessa"))
        #expect(
            try cli.run(["export", glasses, "--format", "json", "--for", "shop", "--out", cli.path("x.age")]).status
                == 65)

        // A passphrase (age scrypt) opens with age -d too, and imports back with --age-passphrase-file.
        let pass = try cli.write("export passphrase 123\n", to: "export-pass")
        #expect(
            try cli.run([
                "export", "--format", "fhir", "--age-passphrase-file", pass, "--armor", "--out", cli.path("all.age")
            ]).status == 0)
        #expect(
            String(decoding: FileManager.default.contents(atPath: cli.path("all.age"))!, as: UTF8.self).hasPrefix(
                "-----BEGIN AGE ENCRYPTED FILE-----"))
        let env = try secondVault(cli)
        let noKey = try cli.run(["import", cli.path("all.age")], environment: env)
        #expect(noKey.status == 64 && noKey.stderr.contains("age-encrypted"))
        let wrong = try cli.write("not it\n", to: "wrong-pass")
        #expect(
            try cli.run(["import", cli.path("all.age"), "--age-passphrase-file", wrong], environment: env).status == 77)
        let imported = try cli.run(["import", cli.path("all.age"), "--age-passphrase-file", pass], environment: env)
        #expect(imported.stdout.contains("2 new"), "\(imported)")

        // A file written by age itself imports.
        #expect(try cli.run(["export", "--format", "json", "--out", cli.path("plain.json")]).status == 0)
        let (agedStatus, _) = try age(["-r", String(recipient), "-o", "by-age.age", "plain.json"], in: cli)
        #expect(agedStatus == 0)
        let third: [String: String?] = ["RXVAULT_PATH": cli.path("third.rxv")]
        #expect(try cli.run(["init", "--kdf", "interactive"], environment: third).status == 0)
        let fromAge = try cli.run(
            ["import", cli.path("by-age.age"), "--age-identity", cli.path("shop.key")], environment: third)
        #expect(fromAge.stdout.contains("2 new"), "\(fromAge)")
    }

    @Test func invalidImportsAreRefusedWholeWithPositions() throws {
        let (cli, _, _) = try setUp()
        #expect(try cli.run(["export", "--format", "json", "--out", cli.path("e.json")]).status == 0)
        var text = try String(contentsOfFile: cli.path("e.json"), encoding: .utf8)
        text = text.replacingOccurrences(of: "\"axis\" : 170", with: "\"axis\" : 200")
        text = text.replacingOccurrences(of: "\"sphere\" : -2.25", with: "\"sphere\" : -42")
        try text.write(toFile: cli.path("bad.json"), atomically: true, encoding: .utf8)
        let env = try secondVault(cli)
        let r = try cli.run(["import", cli.path("bad.json")], environment: env)
        #expect(r.status == 65, "\(r)")
        #expect(r.stderr.contains("prescriptions[0]") && r.stderr.contains("prescriptions[1]"), "\(r.stderr)")
        #expect(r.stderr.contains("axis 200") && r.stderr.contains("sphere -42.00"))
        #expect(r.stderr.contains("nothing was imported"))
        #expect(try cli.run(["status"], environment: env).stdout.contains("prescriptions  0"))
        let garbage = try cli.write("{\"resourceType\": \"Observation\"}", to: "obs.json")
        #expect(try cli.run(["import", garbage], environment: env).status == 65)
        #expect(try cli.run(["--identity", cli.path("x"), "import", garbage], environment: env).status == 64)
    }
}

@Suite struct ExchangeHistoryTests {
    @Test func versionsRoundTripWhenAskedFor() throws {
        let cli = try CLIHarness()
        try cli.initVault()
        let id = try cli.add(CLIHarness.glassesArguments)
        #expect(try cli.run(["edit", id, "--note", "second"]).status == 0)
        #expect(try cli.run(["edit", id, "--note", "third"]).status == 0)
        #expect(try cli.run(["export", id, "--format", "json", "--versions", "--out", cli.path("v.json")]).status == 0)
        let pw = try cli.write("another passphrase\n", to: "pw2")
        let env: [String: String?] = ["RXVAULT_PATH": cli.path("second.rxv"), "RXVAULT_PASSPHRASE_FILE": pw]
        #expect(try cli.run(["init", "--kdf", "interactive"], environment: env).status == 0)
        #expect(try cli.run(["import", cli.path("v.json")], environment: env).status == 0)
        let history = try cli.json(try cli.run(["history", id, "--format", "json"], environment: env).stdout)
        let notes = (history["prescriptions"] as? [[String: Any]])?.map { $0["note"] as? String } ?? []
        #expect(notes == ["Varifocal lenses preferred", "second", "third"])
    }
}

/// Regressions from the review of exports and imports.
@Suite struct ExchangeRegressionTests {
    @Test func longTextSurvivesTheIndexAndARoundTrip() throws {
        let cli = try CLIHarness()
        try cli.initVault()
        // The most the rules allow: 2,000 characters and 8,000 bytes of UTF-8 (TextField.note).
        // Combining marks no longer stretch a note beyond that (one more byte is refused).
        let note = String(repeating: "\u{1F453}", count: 2000)
        var over = CLIHarness.glassesArguments
        over[over.firstIndex(of: "--note")! + 1] =
            "a\u{0301}\u{0301}\u{0301}" + String(repeating: "\u{1F453}", count: 1999)
        #expect(try cli.run(over).status == 65)
        var arguments = CLIHarness.glassesArguments
        arguments[arguments.firstIndex(of: "--note")! + 1] = note
        let id = try cli.add(arguments)
        let queried = try cli.json(try cli.run(["query", "--format", "json"]).stdout)
        let first = (queried["prescriptions"] as? [[String: Any]])?.first
        #expect((first?["note"] as? String)?.utf8.count == note.utf8.count)
        #expect(try cli.run(["check"]).status == 0)
        #expect(try cli.run(["export", id, "--format", "json", "--out", cli.path("e.json")]).status == 0)
        #expect(try cli.run(["import", cli.path("e.json")]).stdout.contains("1 unchanged"))
    }

    @Test func importedHistoryIsNormalisedAndErrorsAreDefused() throws {
        let cli = try CLIHarness()
        try cli.initVault()
        let id = String(repeating: "ab", count: 16)
        let document: [String: Any] = [
            "schema": "rxvault/export/v1", "exported": "x",
            "prescriptions": [
                [
                    "id": id, "version": 2, "recorded": "2026-01-02T00:00:00Z",
                    "prescription": [
                        "kind": "glasses", "patient": ["name": "Ada"], "prescriber": ["name": "Dr"],
                        "issued": "2026-01-01",
                        "right": ["sphere": -2]
                    ],
                    "history": [
                        [
                            "version": 1, "recorded": "\u{1B}[31mRED",
                            "prescription": [
                                "kind": "glasses", "patient": ["name": "  Ada  "], "prescriber": ["name": "Dr"],
                                "issued": "2026-01-01", "right": ["sphere": -1, "cylinder": 0]
                            ]
                        ]
                    ]
                ]
            ]
        ]
        try JSONSerialization.data(withJSONObject: document).write(to: URL(fileURLWithPath: cli.path("h.json")))
        #expect(try cli.run(["import", cli.path("h.json")]).status == 0)
        let v1 = try cli.json(try cli.run(["show", String(id.prefix(8)), "--version", "1", "--format", "json"]).stdout)
        #expect((v1["patient"] as? [String: Any])?["name"] as? String == "Ada")
        #expect((v1["right"] as? [String: Any])?["cylinder"] == nil)
        #expect((v1["recorded"] as? String)?.contains("\u{1B}") == false)

        let hostile = try cli.write(
            #"{"resourceType":"VisionPrescription","dateWritten":"2026-01-01","patient":{"reference":"\u001b]0;PWNED\u0007"},"lensSpecification":[{"product":{"coding":[{"code":"lens"}]},"eye":"right","sphere":-1}]}"#,
            to: "f.json")
        let r = try cli.run(["import", hostile])
        #expect(r.status == 65)
        #expect(!r.stderr.contains("\u{1B}"), "control characters reached the terminal")
        let numbers = try cli.write(#"{"schema":"rxvault/export/v1","prescriptions":[1, "x", null]}"#, to: "n.json")
        #expect(try cli.run(["import", numbers]).status == 65, "entries that are not objects are refused, not a crash")
    }
}

/// A large import is written in one transaction with its index and manifest rewritten along the
/// way; one bad prescription at the end must still leave the vault exactly as it was.
@Suite struct ImportAllOrNothingTests {
    func export(_ count: Int, badLast: Bool) -> String {
        let entries = (0..<count).map { i -> String in
            let expires = badLast && i == count - 1 ? "2020-01-01" : "2027-03-01"
            return """
                {"id": "\(String(format: "%032x", 0xabc000 + i))", "version": 1, "recorded": "2026-01-01T00:00:00Z",
                 "prescription": {"kind": "glasses", "patient": {"name": "Pat \(i)"}, "prescriber": {"name": "Dr Lee"},
                 "issued": "2025-03-01", "expires": "\(expires)", "right": {"sphere": -1.25}, "left": {"sphere": -1.5}}}
                """
        }
        return
            "{\"schema\": \"rxvault/export/v1\", \"exported\": \"2026-01-01T00:00:00Z\", \"prescriptions\": [\(entries.joined(separator: ","))]}"
    }

    @Test func aFailedImportLeavesTheVaultAsItWas() throws {
        let cli = try CLIHarness()
        try cli.initVault()
        let kept = try cli.add(CLIHarness.glassesArguments)
        let before = try cli.run(["list", "--format", "json"]).stdout
        // Rewritten every 8 prescriptions: the refusal comes after several rewrites.
        let flushing: [String: String?] = ["RXVAULT_TEST_IMPORT_FLUSH": "8"]
        let bad = try cli.write(export(30, badLast: true), to: "bad.json")
        let refused = try cli.run(["import", bad], environment: flushing)
        #expect(refused.status == 65, "\(refused)")
        #expect(refused.stderr.contains("prescriptions[29]"), "\(refused)")
        #expect(try cli.run(["list", "--format", "json"]).stdout == before)
        #expect(try cli.run(["check"]).status == 0)
        #expect(!(try cli.run(["log"]).stdout.contains("import")))
        // The same file without the bad one imports whole, and the vault checks.
        let good = try cli.write(export(30, badLast: false), to: "good.json")
        let imported = try cli.run(["import", good], environment: flushing)
        #expect(imported.status == 0, "\(imported)")
        #expect(imported.stdout.contains("imported: 30 new"), "\(imported)")
        #expect(try cli.run(["check"]).status == 0)
        #expect(try cli.run(["show", kept]).status == 0)
        let listed = try cli.json(try cli.run(["list", "--format", "json"]).stdout)
        #expect((listed["prescriptions"] as? [Any])?.count == 31)
    }

    /// An import takes the one owner write path, so it pauses where every owner write does, with
    /// everything written and the transaction not yet committed (`RXVAULT_TEST_WRITE_PAUSE_MS`):
    /// the reliability suite's kill aimed at that moment lands in an import too. It used to copy
    /// the write's steps and leave that out. A dry run or a refused import commits nothing, so
    /// it never gets there.
    @Test func anImportPausesBeforeItsCommitAsEveryOwnerWriteDoes() throws {
        let cli = try CLIHarness()
        try cli.initVault()
        let pausing: [String: String?] = ["RXVAULT_TEST_WRITE_PAUSE_MS": "1"]
        let pauseLine = "rxvault: test: transaction open, pausing before commit"
        let bad = try cli.write(export(3, badLast: true), to: "bad.json")
        let refused = try cli.run(["import", bad], environment: pausing)
        #expect(refused.status == 65, "\(refused)")
        #expect(!refused.stderr.contains(pauseLine), "\(refused)")
        let good = try cli.write(export(3, badLast: false), to: "good.json")
        let dry = try cli.run(["import", good, "--dry-run"], environment: pausing)
        #expect(dry.status == 0, "\(dry)")
        #expect(!dry.stderr.contains(pauseLine), "\(dry)")
        let imported = try cli.run(["import", good], environment: pausing)
        #expect(imported.status == 0, "\(imported)")
        #expect(imported.stdout.contains("imported: 3 new"), "\(imported)")
        #expect(imported.stderr.components(separatedBy: pauseLine).count == 2, "one write, one pause: \(imported)")
        #expect(try cli.run(["check"]).status == 0)
    }
}
