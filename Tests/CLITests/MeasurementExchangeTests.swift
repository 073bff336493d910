import Foundation
import RxTestSupport
import Testing

/// The owner's rxvault JSON export carries the patient records with measurements (revision 1.2):
/// they come through `export` then `import` into another vault as they come through a backup,
/// also a patient's with no prescription left; updates of a measurement follow the rules of a prescription's
/// (`--update`, the owner's binding); a hostile file's patients are refused by position.
@Suite struct MeasurementExchangeTests {
    /// Mia with two prescriptions and two visits; Leo with a visit and no prescription left; Ana,
    /// a record with neither (her only prescription removed), which no export carries.
    func household(_ cli: CLIHarness) throws {
        try MeasurementTests().child(cli)
        _ = try cli.add([
            "measurement", "add", "Mia Chen", "--date", "2025-03-01", "--axial-length-od", "23.80",
            "--axial-length-os", "23.71", "--device", "IOLMaster 700", "--va-od", "6/6", "--va-os-uncorrected", "20/40"
        ])
        _ = try cli.add([
            "measurement", "add", "Mia Chen", "--date", "2026-03-01", "--axial-length-od", "24.10", "--cycloplegic",
            "--va-ou", "logMAR -0.10"
        ])
        for name in ["Leo Park", "Ana Lima"] {
            let rx = try cli.add([
                "add", "glasses", "--patient", name, "--prescriber", "Dr Ana Lee", "--issued", "2026-03-01",
                "--expires", "2028-03-01", "--od", "-0.50", "--os", "-0.50"
            ])
            if name == "Leo Park" {
                _ = try cli.add(["measurement", "add", "Leo Park", "--date", "2026-03-01", "--axial-length-od", "23.00"]
                )
            }
            #expect(try cli.run(["remove", rx, "--yes"]).status == 0)
        }
    }

    /// `measurement list --format json` without the patient ids (another vault makes its own).
    func measurements(_ cli: CLIHarness, vault: String? = nil) throws -> [[String: String]] {
        let r = try cli.run(["measurement", "list", "--format", "json"] + (vault.map { ["--vault", $0] } ?? []))
        #expect(r.status == 0, "\(r)")
        return (try cli.json(r.stdout)["measurements"] as? [[String: Any]] ?? []).map { m in
            var flat: [String: String] = [:]
            // Values as sorted JSON text (a dictionary's description is in hash order, which differs by process).
            for (key, value) in m where key != "patient" {
                if let text = value as? String {
                    flat[key] = text
                } else {
                    let data = try? JSONSerialization.data(withJSONObject: [value], options: [.sortedKeys])
                    flat[key] = data.map { String(decoding: $0, as: UTF8.self) } ?? "\(value)"
                }
            }
            flat["patient"] = (m["patient"] as? [String: Any])?["name"] as? String
            return flat
        }
    }

    func patientNames(_ cli: CLIHarness, vault: String) throws -> [String] {
        let r = try cli.run(["patients", "--format", "json", "--vault", vault])
        #expect(r.status == 0, "\(r)")
        return (try cli.json(r.stdout)["patients"] as? [[String: Any]] ?? []).compactMap { $0["name"] as? String }
    }

    @Test func anExportCarriesMeasurementsIntoAnotherVault() throws {
        let cli = try CLIHarness()
        try household(cli)
        let file = cli.path("all.json")
        let export = try cli.run(["export", "--format", "json", "--out", file])
        #expect(export.status == 0, "\(export)")
        #expect(
            export.stderr.contains("exported 2 prescription(s) and 2 patient record(s) with 3 measurement(s)"),
            "\(export)")
        let written = try cli.json(try String(contentsOfFile: file, encoding: .utf8))
        let records = written["patients"] as? [[String: Any]] ?? []
        #expect(records.map { $0["name"] as? String } == ["Leo Park", "Mia Chen"])
        #expect((written["vault"] as? [String: Any])?["patientsMac"] is String)

        let other = cli.path("other.rxv")
        try createVault(at: other, passphrase: cli.passphrase)
        let dry = try cli.run(["import", file, "--dry-run", "--vault", other])
        #expect(dry.status == 0, "\(dry)")
        #expect(dry.stdout.contains("patients[1].measurements[1] (Mia Chen, 2026-03-01)"), "\(dry)")
        #expect(try measurements(cli, vault: other).isEmpty, "a dry run writes nothing")
        let imported = try cli.run(["import", file, "--vault", other])
        #expect(imported.status == 0, "\(imported)")
        #expect(
            imported.stdout.contains(
                "imported: 2 new, 0 updated (new version), 0 unchanged, 0 attachment(s); "
                    + "measurements: 3 new, 0 updated, 0 unchanged"), "\(imported)")
        #expect(try measurements(cli, vault: other) == measurements(cli))
        #expect(try patientNames(cli, vault: other) == ["Leo Park", "Mia Chen"])
        // Mia's measurements are on the record her prescriptions were linked to, not a second Mia.
        let trend = try cli.run(["trend", "Mia Chen", "--format", "json", "--vault", other])
        #expect(trend.status == 0, "\(trend)")
        let trendJSON = try cli.json(trend.stdout)
        let refraction = (trendJSON["eyes"] as? [[String: Any]])?.first?["points"] as? [Any]
        let axial = (trendJSON["axialLength"] as? [[String: Any]])?.first?["points"] as? [Any]
        #expect(refraction?.count == 2 && axial?.count == 2, "\(trend.stdout)")
        #expect(try cli.run(["check", "--vault", other]).status == 0)

        // Again: nothing changes; the log says what came in.
        let again = try cli.run(["import", file, "--vault", other])
        #expect(again.stdout.contains("measurements: 0 new, 0 updated, 3 unchanged"), "\(again)")
        let log = try cli.run(["log", "--vault", other])
        #expect(log.stdout.contains("measurements: 3 new"), "\(log)")
        #expect(try cli.run(["log"]).stdout.contains("json, 2 patient record(s) with 3 measurement(s)"))

        // The new vault's backup restores with them.
        let backup = cli.path("other.age")
        #expect(try cli.run(["backup", backup, "--vault", other]).status == 0)
        let restored = cli.path("restored.rxv")
        #expect(try cli.run(["restore", backup, "--to", restored, "--vault", other]).status == 0)
        #expect(try measurements(cli, vault: restored) == measurements(cli))
        #expect(try cli.run(["check", "--vault", restored]).status == 0)

        // Leo renamed here, the same file again: his measurement is found on the renamed record
        // (it holds the measurement), not a new "Leo Park" refused for taking it.
        #expect(try cli.run(["patient", "rename", "Leo Park", "Leo Parker", "--vault", other]).status == 0)
        let renamed = try cli.run(["import", file, "--vault", other])
        #expect(renamed.status == 0 && renamed.stdout.contains("3 unchanged"), "\(renamed)")
        #expect(try patientNames(cli, vault: other) == ["Leo Parker", "Mia Chen"])

        // The file's record named otherwise than her prescriptions (an edited file): it goes with
        // the record her prescriptions (same record id in the file) were linked to, not by name.
        let text = try String(contentsOfFile: file, encoding: .utf8)
        let edited = try cli.write(
            text.replacingOccurrences(of: "\"name\" : \"Mia Chen\"\n    }", with: "\"name\" : \"Mia C.\"\n    }"),
            to: "edited.json")
        #expect(try String(contentsOfFile: edited, encoding: .utf8).contains("Mia C."))
        let third = cli.path("third.rxv")
        try createVault(at: third, passphrase: cli.passphrase)
        let linked = try cli.run(["import", edited, "--vault", third])
        #expect(linked.status == 0, "\(linked)")
        #expect(try patientNames(cli, vault: third) == ["Leo Park", "Mia Chen"], "no 'Mia C.' record")
        #expect(try measurements(cli, vault: third) == measurements(cli))
    }

    @Test func aChangedMeasurementIsAnUpdateOnlyFromTheOwnersUnchangedExport() throws {
        let cli = try CLIHarness()
        try household(cli)
        let file = cli.path("all.json")
        #expect(try cli.run(["export", "--format", "json", "--out", file]).status == 0)
        let id = try #require(try measurements(cli).first { $0["date"] == "2025-03-01" }?["id"])
        #expect(try cli.run(["measurement", "edit", String(id.prefix(8)), "--axial-length-od", "23.90"]).status == 0)

        let refused = try cli.run(["import", file])
        #expect(refused.status == 65, "\(refused)")
        #expect(
            refused.stderr.contains(
                "patients[1].measurements[0]: measurement \(id.prefix(8)) of Mia Chen exists in this vault with other content (axial length OD 23.90 → 23.80)"
            ), "\(refused)")
        #expect(refused.stderr.contains("pass --update"), "\(refused)")
        let dry = try cli.run(["import", file, "--dry-run", "--update"])
        #expect(dry.status == 0 && dry.stdout.contains("update     \(id.prefix(8))"), "\(dry)")
        #expect(try measurements(cli).contains { $0["axialLengthOD"] == "[23.9]" }, "a dry run writes nothing")

        // The file changed after export: its patients no longer verify, so --update refuses them.
        let text = try String(contentsOfFile: file, encoding: .utf8)
        let altered = try cli.write(text.replacingOccurrences(of: "\"23.71\"", with: "\"23.72\""), to: "altered.json")
        let notBound = try cli.run(["import", altered, "--update"])
        #expect(notBound.status == 65, "\(notBound)")
        #expect(notBound.stderr.contains("its binding to this vault does not verify"), "\(notBound)")
        #expect(try measurements(cli).contains { $0["axialLengthOD"] == "[23.9]" })

        let updated = try cli.run(["import", file, "--update"])
        #expect(updated.status == 0, "\(updated)")
        #expect(updated.stdout.contains("measurements: 0 new, 1 updated, 2 unchanged"), "\(updated)")
        #expect(try measurements(cli).contains { $0["axialLengthOD"] == "[23.8]" && $0["id"] == id })
        #expect(
            try cli.run(["log"]).stdout.contains(
                "1 updated, 2 unchanged (updated: \(id.prefix(8))) from this vault's export"))
        let unverified = try cli.run(["import", altered, "--update-unverified"])
        #expect(unverified.status == 0, "\(unverified)")
        #expect(try measurements(cli).contains { $0["axialLengthOS"] == "[23.72]" })
        #expect(try cli.run(["log"]).stdout.contains("(unverified file: its binding"))
        #expect(try cli.run(["check"]).status == 0)
    }

    /// A stored name keeps a run of spaces as typed; the binding covers it as written, so the
    /// owner's own unchanged export still verifies for --update.
    @Test func aNameWithARunOfSpacesStillVerifies() throws {
        let cli = try CLIHarness()
        try cli.initVault()
        _ = try cli.add([
            "add", "glasses", "--patient", "Noor  Haddad", "--prescriber", "Dr Ana Lee", "--issued", "2026-03-01",
            "--expires", "2028-03-01", "--od", "-0.50", "--os", "-0.50"
        ])
        _ = try cli.add(["measurement", "add", "Noor Haddad", "--date", "2026-03-01", "--axial-length-od", "23.00"])
        let file = cli.path("noor.json")
        #expect(try cli.run(["export", "--format", "json", "--out", file]).status == 0)
        #expect(try String(contentsOfFile: file, encoding: .utf8).contains("\"Noor  Haddad\""))
        let id = try #require(try measurements(cli).first?["id"])
        #expect(try cli.run(["measurement", "edit", String(id.prefix(8)), "--axial-length-od", "23.10"]).status == 0)
        let updated = try cli.run(["import", file, "--update"])
        #expect(updated.status == 0 && updated.stdout.contains("1 updated"), "\(updated)")
        #expect(try measurements(cli).first?["axialLengthOD"] == "[23]")
    }

    @Test func onlyTheOwnersExportsOfThePatientCarryTheRecord() throws {
        let cli = try CLIHarness()
        try household(cli)
        func records(_ arguments: [String]) throws -> [String]? {
            let file = cli.path("part.json")
            let r = try cli.run(["export", "--format", "json", "--out", file, "--force"] + arguments)
            #expect(r.status == 0, "\(r)")
            let json = try cli.json(try String(contentsOfFile: file, encoding: .utf8))
            return (json["patients"] as? [[String: Any]])?.compactMap { $0["name"] as? String }
        }
        #expect(try records(["--patient", "Mia"]) == ["Mia Chen"])
        #expect(try records(["--kind", "contacts"]) == nil, "no prescription, so no patient")
        // A client's own export has no patient records: it is granted prescriptions only.
        let recipient = try cli.ageKeygen("shop.key")
        #expect(try cli.run(["client", "add", "shop", "--recipient", recipient]).status == 0)
        let ids = try cli.json(try cli.run(["list", "--format", "json"]).stdout)["prescriptions"] as? [[String: Any]]
        #expect(try cli.run(["grant", "shop", String((ids?.first?["id"] as? String ?? "").prefix(8))]).status == 0)
        let clientFile = cli.path("client.json")
        let asClient = try cli.run([
            "--identity", cli.path("shop.key"), "export", "--format", "json", "--out", clientFile
        ])
        #expect(asClient.status == 0, "\(asClient)")
        let clientText = try String(contentsOfFile: clientFile, encoding: .utf8)
        #expect(!clientText.contains("\"patients\"") && !clientText.contains("23.80"), "\(clientText)")
        // Nor the owner's export for the client (--for), age-encrypted to it.
        let forShop = cli.path("for-shop.age")
        #expect(try cli.run(["export", "--format", "json", "--for", "shop", "--out", forShop]).status == 0)
        let opened = try cli.tool(["age", "-d", "-i", cli.path("shop.key"), forShop])
        #expect(opened.status == 0 && opened.stdout.contains("\"prescriptions\""), "\(opened)")
        #expect(!opened.stdout.contains("\"patients\"") && !opened.stdout.contains("23.80"), "\(opened)")
    }

    @Test func aHostileFilesPatientsAreRefusedByPosition() throws {
        let cli = try CLIHarness()
        try household(cli)
        let file = cli.path("all.json")
        #expect(try cli.run(["export", "--format", "json", "--out", file]).status == 0)
        let text = try String(contentsOfFile: file, encoding: .utf8)
        let before = try measurements(cli)
        func refused(_ edited: String, _ expected: [String], status: Int32 = 65) throws {
            let path = try cli.write(edited, to: "hostile.json")
            let r = try cli.run(["import", path, "--update-unverified"])
            #expect(r.status == status, "\(r)")
            for line in expected { #expect(r.stderr.contains(line), "\(line) in \(r.stderr)") }
            #expect(try measurements(cli) == before, "nothing imported")
        }
        try refused(
            text.replacingOccurrences(of: "\"23.80\"", with: "\"23.8.0\""),
            ["patients[1].measurements[0]: axialLengthOD '23.8.0' is not millimetres"])
        try refused(
            text.replacingOccurrences(of: "\"23.00\"", with: "\"3.00\""),
            ["patients[0].measurements[0]: OD axial length 3.00 mm is outside 15.00-35.00 mm"])
        try refused(
            text.replacingOccurrences(of: "\"os-uncorrected\"", with: "\"os-blurry\""),
            ["patients[1].measurements[0]: acuity 'os-blurry' is not a slot"])
        try refused(
            text.replacingOccurrences(of: "\"20/40\"", with: "\"counting fingers\""),
            ["patients[1].measurements[0]: acuity os-uncorrected:"])
        try refused(
            text.replacingOccurrences(of: "\"name\" : \"Leo Park\"", with: "\"name\" : 7"),
            ["patients[0]: .name has the wrong type"])
        // Leo's measurement given Mia's id: the same measurement twice.
        let mia = try #require(before.first { $0["date"] == "2025-03-01" }?["id"])
        let leo = try #require(before.first { $0["patient"] == "Leo Park" }?["id"])
        try refused(
            text.replacingOccurrences(of: leo, with: mia),
            ["the same measurement appears twice"])
        // A measurement id moved to another patient's record in the file: it belongs to Mia here.
        var json = try cli.json(text)
        var records = json["patients"] as? [[String: Any]] ?? []
        let moved = (records[1]["measurements"] as? [[String: Any]] ?? [])[0]
        records[0]["measurements"] = [moved]
        records[1]["measurements"] = Array((records[1]["measurements"] as? [[String: Any]] ?? []).dropFirst())
        json["patients"] = records
        let data = try JSONSerialization.data(withJSONObject: json)
        try refused(
            String(decoding: data, as: UTF8.self),
            ["patients[0].measurements[0]: measurement \(mia.prefix(8)) belongs to another patient here"])
        #expect(try cli.run(["check"]).status == 0)
    }

    /// A vault in format 3 has no patient records to put measurements in: the owner's write of
    /// the import upgrades it to format 4 first (as every owner write does), then takes the
    /// file's patients with their measurements, beside the fixture's own prescriptions. A file
    /// patient with no measurements (no export writes one; an edited file can) makes no record.
    @Test func aFormatThreeVaultTakesPatientsAndAnEmptyFilePatientMakesNoRecord() throws {
        let cli = try CLIHarness(passphrase: "format three fixture", today: "2026-06-20")
        try household(cli)
        let file = cli.path("all.json")
        #expect(try cli.run(["export", "--format", "json", "--out", file]).status == 0)

        let old = try loadVaultFixture("format3", to: cli.path("old.rxv"))
        let imported = try cli.run(["import", file, "--vault", old])
        #expect(imported.status == 0, "\(imported)")
        #expect(imported.stdout.contains("measurements: 3 new, 0 updated, 0 unchanged"), "\(imported.stdout)")
        let status = try cli.run(["status", "--format", "json", "--vault", old])
        #expect(try cli.json(status.stdout)["formatVersion"] as? Int == 8, "\(status)")
        let listed = try cli.json(try cli.run(["list", "--format", "json", "--vault", old]).stdout)
        #expect((listed["prescriptions"] as? [Any])?.count == 4, "the fixture's two and the file's two")
        #expect(try measurements(cli, vault: old) == (try measurements(cli)))
        #expect(try cli.run(["check", "--vault", old]).status == 0)

        // Leo's record in the file without its measurements: Mia's still come in, Leo's do not.
        var json = try cli.json(try String(contentsOfFile: file, encoding: .utf8))
        var records = json["patients"] as? [[String: Any]] ?? []
        let leo = try #require(records.firstIndex { $0["name"] as? String == "Leo Park" })
        records[leo]["measurements"] = nil
        json["patients"] = records
        let edited = try cli.write(
            String(decoding: try JSONSerialization.data(withJSONObject: json), as: UTF8.self), to: "edited.json")
        let fresh = cli.path("fresh.rxv")
        try createVault(at: fresh, passphrase: cli.passphrase)
        let r = try cli.run(["import", edited, "--vault", fresh])
        #expect(r.status == 0, "\(r)")
        #expect(r.stdout.contains("measurements: 2 new, 0 updated, 0 unchanged"), "\(r.stdout)")
        #expect(!r.stderr.contains("Leo Park"), "no record made for Leo: \(r.stderr)")
        #expect(try patientNames(cli, vault: fresh) == ["Mia Chen"])
        let mine = try measurements(cli).filter { $0["patient"] == "Mia Chen" }
        #expect(try measurements(cli, vault: fresh) == mine)
        #expect(try cli.run(["check", "--vault", fresh]).status == 0)
    }
}
