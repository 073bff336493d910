import Foundation
import RxStore
import RxTestSupport
import Testing

/// Issue 47, item 10: the validity assumed for a prescription with no expiry date written. The
/// vault's `assumed-validity` setting (format 7, in the owner's key ring), and
/// `import --assume-expiry glasses=2y,contacts=1y`, which keeps its date per prescription as
/// assumed. Every output says the date is assumed; none passes it off as the prescriber's.
/// Through the binary; today is 2026-06-15.
@Suite struct AssumedValidityTests {
    func sql(_ cli: CLIHarness, _ statement: String) throws {
        try Database(path: cli.vaultPath).execute(statement)
    }

    /// `config set assumed-validity VALUE`: its output.
    func set(_ cli: CLIHarness, _ value: String) throws -> String {
        let r = try cli.run(["config", "set", "assumed-validity", value])
        #expect(r.status == 0, "\(r)")
        return r.stdout
    }

    func get(_ cli: CLIHarness) throws -> String {
        let r = try cli.run(["config", "get", "assumed-validity"])
        #expect(r.status == 0, "\(r)")
        return r.stdout
    }

    /// Glasses with no expiry: `old` of 2014 (Noor), `recent` of 2025-06-01 (Kim).
    func undatedGlasses() throws -> (CLIHarness, old: String, recent: String) {
        try CLIHarness.withUndatedGlasses(recentIssued: "2025-06-01")
    }

    func queried(_ cli: CLIHarness, _ arguments: [String]) throws -> [String] {
        let r = try cli.run(["query", "--format", "json"] + arguments)
        #expect(r.status == 0, "\(r)")
        return (try cli.json(r.stdout)["prescriptions"] as? [[String: Any]] ?? []).compactMap {
            ($0["id"] as? String).map { String($0.prefix(8)) }
        }.sorted()
    }

    func due(_ cli: CLIHarness) throws -> [[String: Any]] {
        let r = try cli.run(["due", "--format", "json"])
        #expect(r.status == 0 || r.status == 3, "\(r)")
        return try cli.json(r.stdout)["due"] as? [[String: Any]] ?? []
    }

    @Test func theSettingIsSetReadAndCleared() throws {
        let cli = try CLIHarness()
        try cli.initVault()
        #expect(try get(cli) == "none\n")
        #expect(try set(cli, "glasses=2y") == "assumed-validity: none -> glasses=2y\n")
        #expect(try get(cli) == "glasses=2y\n")
        #expect(try set(cli, "contacts=1y, glasses=2y") == "assumed-validity: glasses=2y -> glasses=2y,contacts=1y\n")
        #expect(try get(cli) == "glasses=2y,contacts=1y\n")
        let show = try cli.run(["config", "show"])
        #expect(show.status == 0 && show.stdout.contains("assumed-validity     glasses=2y,contacts=1y\n"), "\(show)")
        let json = try cli.json(try cli.run(["config", "show", "--format", "json"]).stdout)
        #expect(json["assumed-validity"] as? [String: String] == ["glasses": "2y", "contacts": "1y"], "\(json)")
        #expect(try set(cli, "none") == "assumed-validity: glasses=2y,contacts=1y -> none\n")
        #expect(try get(cli) == "none\n")
        let cleared = try cli.json(try cli.run(["config", "show", "--format", "json"]).stdout)
        #expect(cleared["assumed-validity"] as? [String: String] == [:], "\(cleared)")
        #expect(try cli.run(["config", "show"]).stdout.contains("assumed-validity     none"))
        for bad in ["2 years", "boats=2y", "glasses=2y,glasses=1y", "glasses=", "glasses=0y", ""] {
            let refused = try cli.run(["config", "set", "assumed-validity", bad])
            #expect(refused.status == 64 && refused.stderr.contains("glasses=2y"), "\(bad): \(refused)")
        }
        #expect(try get(cli) == "none\n", "a refused value changes nothing")
        let log = try cli.run(["log"]).stdout
        #expect(log.contains("assumed-validity none -> glasses=2y"), "\(log)")
        #expect(log.contains("assumed-validity glasses=2y,contacts=1y -> none"), "\(log)")
        #expect(try cli.run(["check"]).status == 0)
    }

    /// The setting is in the owner's key ring, MAC'd: changed in the file by someone without the
    /// key (a longer validity, so a lapsed prescription reads valid), every owner command
    /// refuses and `check` names the ring.
    @Test func aSettingEditedWithoutTheKeyIsRefused() throws {
        let (cli, _, _) = try undatedGlasses()
        #expect(try set(cli, "glasses=2y").hasSuffix("-> glasses=2y\n"))
        try sql(cli, "UPDATE key_ring SET content = CAST(substr(content, 1, length(content) - 2) || X'3979' AS BLOB)")
        for command in [["list"], ["due"], ["config", "get", "assumed-validity"], ["config", "show"]] {
            let refused = try cli.run(command)
            #expect(refused.status == 76 && refused.stderr.contains("key ring"), "\(command): \(refused)")
        }
        let check = try cli.run(["check"])
        #expect(check.status != 0 && check.stdout.contains("key ring"), "\(check)")
    }

    @Test func dueListsAnUndatedGlassesPrescriptionByItsAssumedDate() throws {
        let cli = try CLIHarness()
        try cli.initVault()
        let glasses = try cli.add([
            "add", "glasses", "--patient", "Noor Haddad", "--prescriber", "Dr Alvarez", "--issued", "2024-07-01",
            "--od", "-1.00", "--os", "-1.25"
        ])
        #expect(try due(cli).isEmpty, "without the setting, never due")
        _ = try set(cli, "glasses=2y")
        let items = try due(cli)
        #expect(items.count == 1, "\(items)")
        let item = items.first ?? [:]
        #expect((item["id"] as? String)?.hasPrefix(glasses) == true)
        #expect(item["expires"] is NSNull, "not passed off as written: \(item)")
        #expect(item["assumedExpiry"] as? String == "2026-07-01" && item["daysLeft"] as? Int == 16, "\(item)")
        #expect(item["status"] as? String == "expiring", "\(item)")
        let table = try cli.run(["due", "--wide"])
        #expect(
            table.status == 0 && table.stdout.contains("no expiry written (assumed to 2026-07-01), expires in 16 days"),
            "\(table)")
        let ics = try cli.run(["due", "--format", "ics"])
        #expect(ics.stdout.contains("DTSTART;VALUE=DATE:20260701") && ics.stdout.contains("assumed"), "\(ics)")
    }

    @Test func showAndListSayTheDateIsAssumed() throws {
        let (cli, old, recent) = try undatedGlasses()
        _ = try set(cli, "glasses=2y")
        let expired = try cli.run(["show", old])
        #expect(expired.stdout.contains("no expiry written (assumed to 2016-06-15), expired"), "\(expired)")
        let valid = try cli.run(["show", recent])
        let expiresLine = valid.stdout.split(separator: "\n").first { $0.hasPrefix("expires ") }
        let expiresText = expiresLine?.dropFirst(7).trimmingCharacters(in: .whitespaces)
        #expect(expiresText == "no expiry written (assumed to 2027-06-01)", "\(valid)")

        let json = try cli.json(try cli.run(["show", recent, "--format", "json"]).stdout)
        #expect(json["expires"] is NSNull && json["assumedExpiry"] as? String == "2027-06-01", "\(json)")
        #expect(json["status"] as? String == "valid")
        let oldJSON = try cli.json(try cli.run(["show", old, "--format", "json"]).stdout)
        #expect(oldJSON["status"] as? String == "expired" && oldJSON["assumedExpiry"] as? String == "2016-06-15")
        // The patient's own JSON lists the prescription the same way.
        let patient = try cli.json(try cli.run(["patient", "show", "Kim Park", "--format", "json"]).stdout)
        let listed = (patient["prescriptions"] as? [[String: Any]])?.first ?? [:]
        #expect(listed["expires"] == nil && listed["assumedExpiry"] as? String == "2027-06-01", "\(patient)")

        let list = try cli.run(["list", "--wide"])
        let row = list.stdout.split(separator: "\n").first { $0.hasPrefix(recent) }.map(String.init) ?? ""
        #expect(row.contains("no expiry written (assumed to 2027-06-01)"), "\(list)")
        let csv = try cli.run(["list", "--format", "csv"])
        let header = csv.stdout.split(separator: "\n").first?.split(separator: ",").map(String.init) ?? []
        let hex = try #require(try recentHex(cli, recent))
        let line = csv.stdout.split(separator: "\n").first { $0.hasPrefix(hex) }
        let cells = line?.split(separator: ",", omittingEmptySubsequences: false).map(String.init) ?? []
        #expect(header.last == "assumed_expiry" && header[9] == "expires", "\(header)")
        #expect(cells.count == header.count && cells[9] == "" && cells.last == "2027-06-01", "\(csv)")
        #expect(cells[3] == "valid", "\(cells)")

        // The printed page says the same, never a date as if the prescriber wrote it.
        let pdf = cli.path("recent.pdf")
        #expect(try cli.run(["export", recent, "--format", "pdf", "--out", pdf]).status == 0)
        let page = try PrintTests.poppler(cli, ["pdftotext", "-layout", pdf, "-"]).stdout
        let flat = page.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        #expect(flat.contains("Expires no expiry written (assumed to 2027-06-01)"), "\(page)")
        #expect(flat.contains("no expiry written (assumed to 2027-06-01) on 2026-06-15"), "\(page)")
    }

    func recentHex(_ cli: CLIHarness, _ short: String) throws -> String? {
        try cli.json(try cli.run(["show", short, "--format", "json"]).stdout)["id"] as? String
    }

    /// `query --valid-on` judges by the assumed date: with a year assumed, the 2025-06-01 glasses
    /// lapse on 2026-06-01; without the setting they stand for two years.
    @Test func validOnJudgesByTheAssumedDate() throws {
        let (cli, _, recent) = try undatedGlasses()
        #expect(try queried(cli, ["--valid-on", "2026-06-15"]) == [recent])
        _ = try set(cli, "glasses=1y")
        #expect(try queried(cli, ["--valid-on", "2026-06-01"]) == [recent])
        #expect(try queried(cli, ["--valid-on", "2026-06-15"]).isEmpty)
        #expect(try queried(cli, ["--expired"]).contains(recent))
        _ = try set(cli, "none")
        #expect(try queried(cli, ["--valid-on", "2026-06-15"]) == [recent])
    }

    /// A practice's FHIR Bundle of undated prescriptions (FHIR has no expiry element).
    static let bundle = """
        {"resourceType": "Bundle", "type": "collection", "entry": [
          {"fullUrl": "urn:uuid:p1", "resource": {"resourceType": "Patient", "id": "p1",
            "name": [{"family": "Lopez", "given": ["Maria"]}], "birthDate": "1988-04-02"}},
          {"fullUrl": "urn:uuid:g1", "resource": {"resourceType": "VisionPrescription", "id": "g1",
            "status": "active", "created": "2024-07-01", "dateWritten": "2024-07-01",
            "patient": {"reference": "urn:uuid:p1"}, "prescriber": {"display": "Dr Okafor"},
            "lensSpecification": [{"eye": "right", "sphere": -2.5, "product": {"coding": [{"code": "lens"}]}},
                                  {"eye": "left", "sphere": -1.25, "product": {"coding": [{"code": "lens"}]}}]}},
          {"fullUrl": "urn:uuid:g0", "resource": {"resourceType": "VisionPrescription", "id": "g0",
            "status": "active", "created": "2023-01-10", "dateWritten": "2023-01-10",
            "patient": {"reference": "urn:uuid:p1"}, "prescriber": {"display": "Dr Okafor"},
            "lensSpecification": [{"eye": "right", "sphere": -2.0, "product": {"coding": [{"code": "lens"}]}},
                                  {"eye": "left", "sphere": -1.0, "product": {"coding": [{"code": "lens"}]}}]}},
          {"fullUrl": "urn:uuid:c1", "resource": {"resourceType": "VisionPrescription", "id": "c1",
            "status": "active", "created": "2025-08-01", "dateWritten": "2025-08-01",
            "patient": {"reference": "urn:uuid:p1"}, "prescriber": {"display": "Dr Okafor"},
            "lensSpecification": [
              {"eye": "right", "power": -3.0, "backCurve": 8.6, "diameter": 14.2, "brand": "Acuvue Oasys",
               "product": {"coding": [{"code": "contact"}]}},
              {"eye": "left", "power": -3.25, "backCurve": 8.6, "diameter": 14.2, "brand": "Acuvue Oasys",
               "product": {"coding": [{"code": "contact"}]}}]}}
        ]}
        """

    @Test func anImportKeepsItsAssumptionAsAssumedAndDueListsIt() throws {
        let cli = try CLIHarness()
        try cli.initVault()
        let file = cli.path("practice.json")
        try Self.bundle.write(toFile: file, atomically: true, encoding: .utf8)
        let refused = try cli.run(["import", file])
        #expect(refused.status != 0 && refused.stderr.contains("--assume-expiry contacts=1y"), "\(refused)")
        let bad = try cli.run(["import", file, "--assume-expiry", "glasses=2y,boats=1y"])
        #expect(bad.status == 64, "\(bad)")

        let imported = try cli.run(["import", file, "--assume-expiry", "glasses=2y,contacts=1y"])
        #expect(imported.status == 0 && imported.stdout.contains("3 new"), "\(imported)")
        #expect(imported.stderr.contains("kept an assumed expiry (glasses=2y,contacts=1y"), "\(imported)")
        #expect(try get(cli) == "none\n", "the import's assumption is its own, not the vault's setting")

        // The newest glasses (2024-07-01 + 2y) and the contacts (2025-08-01 + 1y) come due; the
        // 2023 glasses are superseded by the 2024 ones.
        let items = try due(cli)
        #expect(items.compactMap { $0["assumedExpiry"] as? String } == ["2026-07-01", "2026-08-01"], "\(items)")
        #expect(items.allSatisfy { $0["expires"] is NSNull }, "\(items)")

        let listed = try cli.json(try cli.run(["list", "--format", "json"]).stdout)
        let prescriptions = listed["prescriptions"] as? [[String: Any]] ?? []
        #expect(prescriptions.count == 3)
        #expect(prescriptions.allSatisfy { $0["expires"] is NSNull && $0["assumedExpiry"] is String }, "\(listed)")

        // No export passes the assumed date off as written: FHIR leaves it out (it has no
        // element, and rxvault's expiry extension means "written"), rxvault's JSON names it
        // assumedExpiry, CSV keeps the expires column empty.
        let fhir = try cli.run(["export", "--format", "fhir", "--out", "-"])
        #expect(fhir.status == 0 && !fhir.stdout.contains("expiration-date"), "\(fhir)")
        #expect(!fhir.stdout.contains("2026-07-01") && !fhir.stdout.contains("2026-08-01"), "\(fhir)")
        let exported = try cli.json(try cli.run(["export", "--format", "json", "--out", "-"]).stdout)
        let items2 = (exported["prescriptions"] as? [[String: Any]] ?? []).compactMap {
            $0["prescription"] as? [String: Any]
        }
        #expect(items2.count == 3 && items2.allSatisfy { $0["expires"] == nil && $0["assumedExpiry"] is String })
        let csv = try cli.run(["export", "--format", "csv", "--out", "-"])
        for line in csv.stdout.split(separator: "\n").dropFirst() {
            let cells = line.split(separator: ",", omittingEmptySubsequences: false)
            #expect(cells[9] == "" && cells.last?.hasPrefix("202") == true, "\(line)")
        }
        // A written expiry replaces the assumed one.
        let id = String((prescriptions.first?["id"] as? String ?? "").prefix(8))
        #expect(try cli.run(["edit", id, "--expires", "2027-01-01"]).status == 0)
        let edited = try cli.json(try cli.run(["show", id, "--format", "json"]).stdout)
        #expect(edited["expires"] as? String == "2027-01-01" && edited["assumedExpiry"] == nil, "\(edited)")
        #expect(try cli.run(["check"]).status == 0)
    }

    /// A vault made before format 7 (0.4.0's format-4 fixture) reads the same, and the first
    /// write moves it to format 7 with nothing assumed; the setting then applies to it.
    @Test func anOlderVaultReadsTheSameAndUpgrades() throws {
        let cli = try FormatFiveCLITests().formatFourVault()
        let before = try cli.run(["list", "--format", "json"])
        #expect(before.status == 0, "\(before)")
        #expect(try get(cli) == "none\n")
        #expect(try FormatFiveCLITests().format(cli) == 4, "reading writes nothing")
        #expect(try set(cli, "none") == "assumed-validity: none -> none\n")
        #expect(try FormatFiveCLITests().format(cli) == 8)
        #expect(try cli.run(["list", "--format", "json"]).stdout == before.stdout)
        #expect(try cli.run(["check", "--read-data"]).status == 0)
        _ = try set(cli, "glasses=1y")
        #expect(try get(cli) == "glasses=1y\n")
    }
}
