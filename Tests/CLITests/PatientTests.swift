import Foundation
import RxStore
import Testing

/// "Patients as records", through the binary: `add --patient` finds the patient's record
/// (or asks, refuses, creates), `patients`, `patient show|rename|merge`, the FHIR export's one
/// Patient per record, what a client sees of a patient, and the upgrade of every released format.
@Suite struct PatientTests {
    static let noPassphrase: [String: String?] = ["RXVAULT_PASSPHRASE_FILE": nil]

    func patients(_ cli: CLIHarness) throws -> [[String: Any]] {
        let r = try cli.run(["patients", "--format", "json"])
        #expect(r.status == 0, "\(r)")
        #expect(try cli.json(r.stdout)["schema"] as? String == "rxvault/patients/v1")
        return try #require(try cli.json(r.stdout)["patients"] as? [[String: Any]])
    }

    static func prescriptionIDs(_ patient: [String: Any]) -> [String] {
        (patient["prescriptions"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
    }

    /// The README's two examples: the contacts one names "Sam Rivera" without a birth date and is
    /// the same patient (it used to become a second Patient in the FHIR export).
    @Test func readmeExamplesMakeOnePatientAndOneFHIRPatient() throws {
        let cli = try CLIHarness()
        try cli.initVault()
        let first = try cli.run([
            "add", "glasses", "--patient", "Sam Rivera", "--dob", "1984-05-12",
            "--prescriber", "Dr Ana Lee", "--prescriber-licence", "OD-20417",
            "--issued", "2026-03-01", "--expires", "2028-03-01",
            "--od", "-2.25 -0.75 x180 add +2.00", "--os", "-2.00 -0.50 x170 add +2.00 prism 1.5 BI",
            "--pd", "63", "--near-pd", "60", "--vertex", "12"
        ])
        #expect(first.status == 0, "\(first)")
        #expect(first.stderr.contains("rxvault: new patient ") && first.stderr.contains("Sam Rivera (born 1984-05-12)"))
        let second = try cli.run([
            "add", "contacts", "--patient", "Sam Rivera", "--prescriber", "Dr Ana Lee",
            "--issued", "2026-03-01", "--expires", "2027-03-01",
            "--od", "-3.00 bc 8.6 dia 14.2", "--os", "-2.75 -1.25 x170 bc 8.7 dia 14.5", "--brand", "Acuvue Oasys"
        ])
        #expect(second.status == 0, "\(second)")
        #expect(!second.stderr.contains("new patient"), "the existing record is used: \(second.stderr)")

        let all = try patients(cli)
        #expect(all.count == 1)
        #expect(all.first?["name"] as? String == "Sam Rivera" && all.first?["birthDate"] as? String == "1984-05-12")
        #expect(Self.prescriptionIDs(all[0]).count == 2)
        let patientID = try #require(all.first?["id"] as? String)

        // The contacts prescription shows the record's birth date, and names the record.
        let show = try cli.run([
            "show", second.stdout.trimmingCharacters(in: .whitespacesAndNewlines), "--format", "json"
        ])
        let shown = try #require(try cli.json(show.stdout)["patient"] as? [String: Any])
        #expect(shown["birthDate"] as? String == "1984-05-12" && shown["id"] as? String == patientID)

        let export = try cli.run(["export", "--format", "fhir", "--out", "-"])
        #expect(export.status == 0, "\(export)")
        let entries = try #require(try cli.json(export.stdout)["entry"] as? [[String: Any]])
        let resources = entries.compactMap { $0["resource"] as? [String: Any] }
        let fhirPatients = resources.filter { $0["resourceType"] as? String == "Patient" }
        #expect(fhirPatients.count == 1)
        let fullURL = try #require(
            entries.first { ($0["resource"] as? [String: Any])?["resourceType"] as? String == "Patient" }?["fullUrl"]
                as? String)
        let references = resources.filter { $0["resourceType"] as? String == "VisionPrescription" }
            .compactMap { ($0["patient"] as? [String: Any])?["reference"] as? String }
        #expect(references == [fullURL, fullURL])

        // Stable: a second export names the Patient the same way.
        let again = try cli.run(["export", "--format", "fhir", "--out", "-"])
        #expect(again.stdout.contains(fullURL))

        // Nothing about the patient is readable in the file.
        let bytes = cli.vaultFileBytes()
        #expect(!bytes.contains("Sam Rivera") && !bytes.contains("1984-05-12"))
        #expect(try cli.run(["check"]).status == 0)
    }

    /// Two records of one name: `add` without an id refuses (no terminal), listing both; an id
    /// prefix picks one; a different birth date creates a new record.
    @Test func ambiguousNameIsRefusedListingThePatientsAndAnIdPrefixChooses() throws {
        let cli = try CLIHarness()
        try cli.initVault()
        let base = ["--prescriber", "Dr B", "--issued", "2026-03-01", "--od", "-1.00", "--os", "-1.00"]
        _ = try cli.add(["add", "glasses", "--patient", "Ana Lima", "--dob", "1980-04-02"] + base)
        _ = try cli.add(["add", "glasses", "--patient", "ana  LIMA", "--dob", "1990-01-01"] + base)
        let all = try patients(cli)
        #expect(all.count == 2)

        let refused = try cli.run(["add", "glasses", "--patient", "Ana Lima"] + base)
        #expect(refused.status == 64, "\(refused)")
        #expect(
            refused.stderr.contains("matches 2 patients") && refused.stderr.contains("(born 1980-04-02)")
                && refused.stderr.contains("(born 1990-01-01)"))
        #expect(try patients(cli).flatMap(Self.prescriptionIDs).count == 2, "nothing was written")

        let older = try #require(all.first { $0["birthDate"] as? String == "1980-04-02" }?["id"] as? String)
        let chosen = try cli.run(["add", "glasses", "--patient", String(older.prefix(8))] + base)
        #expect(chosen.status == 0 && !chosen.stderr.contains("new patient"), "\(chosen)")
        let after = try patients(cli)
        #expect(Self.prescriptionIDs(try #require(after.first { $0["id"] as? String == older })).count == 2)

        // With a birth date, the name and that date pick one record.
        let byDate = try cli.run(["add", "glasses", "--patient", "ANA LIMA", "--dob", "1990-01-01"] + base)
        #expect(byDate.status == 0 && !byDate.stderr.contains("new patient"), "\(byDate)")
        #expect(try patients(cli).count == 2)
        let show = try cli.run(["patient", "show", "ana lima"])
        #expect(show.status == 64 && show.stderr.contains("matches 2 patients"))
        let missing = try cli.run(["patient", "show", "Nobody Here"])
        #expect(missing.status == 67 && missing.stderr.contains("no patient"), "\(missing)")
        // The short id, as every other view shows it; JSON keeps the whole one.
        let full = try #require(try patients(cli).first?["id"] as? String)
        #expect(full.count == 32)
        let shown = try cli.run(["patient", "show", String(full.prefix(8))])
        #expect(shown.stdout.hasPrefix("patient  \(full.prefix(8))\n"), "\(shown)")
        #expect(!shown.stdout.contains(full), "\(shown)")
    }

    /// On a terminal, `add` asks which of two matching patients is meant; `patient merge` asks
    /// for confirmation, and a no changes nothing (exit 2).
    @Test func onATerminalAddAsksWhichPatientAndMergeConfirms() throws {
        let cli = try CLIHarness()
        try cli.initVault()
        let base = ["--prescriber", "Dr B", "--issued", "2026-03-01", "--od", "-1.00", "--os", "-1.00"]
        _ = try cli.add(["add", "glasses", "--patient", "Ana Lima", "--dob", "1980-04-02"] + base)
        _ = try cli.add(["add", "glasses", "--patient", "Ana Lima", "--dob", "1990-01-01"] + base)
        let younger = try #require(
            try patients(cli).first { $0["birthDate"] as? String == "1990-01-01" }?["id"] as? String)
        let secret = try String(contentsOfFile: cli.passphraseFile, encoding: .utf8).trimmingCharacters(in: .newlines)
        let prompts = PromptTests()

        let asked = try prompts.drive(
            cli, ["add", "glasses", "--patient", "ana lima"] + base, answers: [secret, String(younger.prefix(8))])
        #expect(asked.status == 0, "\(asked)")
        #expect(asked.stdout.contains("matches 2 patients") && asked.stdout.contains("Which one?"), "\(asked)")
        #expect(
            Self.prescriptionIDs(try #require(try patients(cli).first { $0["id"] as? String == younger })).count == 2)
        let cancelled = try prompts.drive(
            cli, ["add", "glasses", "--patient", "ana lima"] + base, answers: [secret, ""])
        #expect(cancelled.status == 2, "\(cancelled)")
        #expect(try patients(cli).flatMap(Self.prescriptionIDs).count == 3)

        let declined = try prompts.drive(
            cli, ["patient", "merge", String(younger.prefix(8)), "ana lima 1980"], answers: [secret, "n"])
        #expect(declined.status == 67, "an unknown patient is reported before anything is asked: \(declined)")
        let older = try #require(
            try patients(cli).first { $0["birthDate"] as? String == "1980-04-02" }?["id"] as? String)
        let no = try prompts.drive(
            cli, ["patient", "merge", String(younger.prefix(8)), String(older.prefix(8))], answers: [secret, "n"])
        #expect(no.status == 2 && no.stdout.contains("[y/N]"), "\(no)")
        #expect(try patients(cli).count == 2)
    }

    /// Rename and birth date changes reach every prescription (list, query, show) and a grantee;
    /// merge moves B's prescriptions to A, confirms unless --yes, and keeps older versions readable.
    @Test func renameAndMergeReachEveryPrescriptionAndTheClient() throws {
        let cli = try CLIHarness()
        try cli.initVault()
        let glasses = try cli.add(CLIHarness.glassesArguments)
        let typo = try cli.add([
            "add", "contacts", "--patient", "Quintesa Marlowe", "--prescriber", "Dr I. F.",
            "--issued", "2026-03-01", "--expires", "2026-12-01", "--od", "-3.25 bc 8.6 dia 14.2",
            "--os", "-2.75 bc 8.6 dia 14.2", "--brand", "Zylofocus",
            // A near miss of "Quintessa Marlowe": made as a second patient on purpose, to be merged.
            "--new-patient"
        ])
        let recipient = try cli.ageKeygen("shop.key")
        #expect(try cli.run(["client", "add", "lens-shop", "--recipient", recipient]).status == 0)
        #expect(try cli.run(["grant", "lens-shop", typo]).status == 0)
        #expect(try patients(cli).count == 2)

        let renamed = try cli.run(["patient", "rename", "quintesa marlowe", "Quintessa M.", "--dob", "1980-04-02"])
        #expect(renamed.status == 0 && renamed.stdout.contains("Quintessa M. (born 1980-04-02)"), "\(renamed)")
        let asClient = ["--identity", cli.path("shop.key")]
        let clientShow = try cli.run(asClient + ["show", typo], environment: Self.noPassphrase)
        #expect(clientShow.status == 0 && clientShow.stdout.contains("Quintessa M. (born 1980-04-02)"), "\(clientShow)")
        #expect(try cli.run(["query", "--patient", "quintessa m."]).stdout.contains(typo))

        // Merge: without a terminal and without --yes it is refused, and nothing changes.
        let unconfirmed = try cli.run(["patient", "merge", "Quintessa Marlowe", "Quintessa M."])
        #expect(unconfirmed.status == 64 && unconfirmed.stderr.contains("--yes"), "\(unconfirmed)")
        #expect(try patients(cli).count == 2)
        let merged = try cli.run(["patient", "merge", "Quintessa Marlowe", "Quintessa M.", "--yes"])
        #expect(merged.status == 0 && merged.stdout.contains("1 prescription(s) moved"), "\(merged)")
        let all = try patients(cli)
        #expect(all.count == 1 && all[0]["name"] as? String == "Quintessa Marlowe")
        #expect(Set(Self.prescriptionIDs(all[0]).map { String($0.prefix(8)) }) == [glasses, typo])
        #expect((all[0]["merged"] as? [String])?.count == 1)

        // Every version still opens; the client sees the patient it now belongs to, and not the
        // other prescription of that patient.
        #expect(try cli.run(["history", typo]).status == 0)
        #expect(try cli.run(["show", typo, "--version", "1"]).stdout.contains("Quintessa Marlowe"))
        let afterMerge = try cli.run(asClient + ["show", typo], environment: Self.noPassphrase)
        #expect(afterMerge.stdout.contains("Quintessa Marlowe (born 1980-04-02)"), "\(afterMerge)")
        let clientList = try cli.run(asClient + ["list", "--format", "json"], environment: Self.noPassphrase)
        let clientIDs =
            (try cli.json(clientList.stdout)["prescriptions"] as? [[String: Any]])?.compactMap { $0["id"] as? String }
            ?? []
        #expect(clientIDs.count == 1 && clientIDs[0].hasPrefix(typo))
        #expect(try cli.run(asClient + ["patients"], environment: Self.noPassphrase).status == 64)
        #expect(try cli.run(["check"]).status == 0)

        let same = try cli.run([
            "patient", "merge", "quintessa marlowe", String(try #require(all[0]["id"] as? String).prefix(8)), "--yes"
        ])
        #expect(same.status == 64, "\(same)")
    }

    /// FHIR import maps incoming patients to existing records by add's rule, or creates them.
    @Test func fhirImportUsesTheExistingPatient() throws {
        let source = try CLIHarness()
        try source.initVault()
        _ = try source.add(CLIHarness.glassesArguments)
        #expect(try source.run(["export", "--format", "fhir", "--out", source.path("out.json")]).status == 0)

        let cli = try CLIHarness()
        try cli.initVault()
        _ = try cli.add([
            "add", "glasses", "--patient", "quintessa  marlowe", "--prescriber", "Dr B",
            "--issued", "2026-01-01", "--od", "-1.00", "--os", "-1.00"
        ])
        let imported = try cli.run(["import", source.path("out.json")])
        #expect(imported.status == 0, "\(imported)")
        let all = try patients(cli)
        #expect(all.count == 1 && Self.prescriptionIDs(all[0]).count == 2)
        #expect(all[0]["birthDate"] as? String == "1980-04-02", "the record gains the birth date the import brings")
        #expect(imported.stderr.contains("birth date set to 1980-04-02"), "\(imported)")
    }

    // MARK: - Upgrades from every released format

    func fixtureVault(_ format: Int, passphrase: String) throws -> CLIHarness {
        let cli = try CLIHarness(passphrase: passphrase, today: "2026-06-20")
        #expect(
            FileManager.default.createFile(atPath: cli.vaultPath, contents: nil, attributes: [.posixPermissions: 0o600])
        )
        let database = try Database(path: cli.vaultPath)
        try database.execute(
            try String(contentsOfFile: FormatUpgradeCLITests.fixture("format\(format).sql"), encoding: .utf8))
        return cli
    }

    /// Format 1, 2 and 3 vaults upgrade to format 4: one record per patient, every prescription
    /// and version still there, clients still read their grant with its patient, check passes.
    @Test(arguments: [(1, "format one fixture"), (2, "format two fixture"), (3, "format three fixture")])
    func everyReleasedFormatUpgrades(format: Int, passphrase: String) throws {
        let cli = try fixtureVault(format, passphrase: passphrase)
        let before = try cli.run(["list", "--format", "json"])
        #expect(before.status == 0, "\(before)")
        let listed = try #require(try cli.json(before.stdout)["prescriptions"] as? [[String: Any]])
        let names = Dictionary(
            uniqueKeysWithValues: listed.map {
                ($0["id"] as! String, ($0["patient"] as! [String: Any])["name"] as! String)
            })
        let versions = Dictionary(uniqueKeysWithValues: listed.map { ($0["id"] as! String, $0["version"] as! Int) })
        let notYet = try cli.run(["patients"])
        #expect(notYet.status == 65 && notYet.stderr.contains("rxvault upgrade"), "\(notYet)")

        let upgrade = try cli.run(["upgrade"])
        #expect(upgrade.status == 0 && upgrade.stdout.contains("to format 8"), "\(upgrade)")
        #expect(try cli.run(["status"]).stdout.contains("format version 8"))
        let all = try patients(cli)
        #expect(all.count == Set(names.values).count)
        for patient in all {
            for id in Self.prescriptionIDs(patient) { #expect(names[id] == patient["name"] as? String) }
        }
        #expect(Set(all.flatMap(Self.prescriptionIDs)) == Set(names.keys))
        let after = try #require(
            try cli.json(try cli.run(["list", "--format", "json"]).stdout)["prescriptions"] as? [[String: Any]])
        for record in after {
            let id = record["id"] as! String
            #expect(record["version"] as? Int == versions[id]! + 1, "one version naming the record")
            let history = try cli.run(["history", id, "--format", "json"])
            #expect(history.status == 0, "\(history)")
            #expect((try cli.json(history.stdout)["prescriptions"] as? [[String: Any]])?.count == versions[id]! + 1)
        }
        let check = try cli.run(["check"])
        #expect(check.status == 0, "\(check)")

        // The clients of the fixture still read what they were granted, with its patient.
        let identities = format == 1 ? ["format1-client.age"] : ["format\(format)-lens-shop.age"]
        for name in identities {
            try FileManager.default.copyItem(atPath: FormatUpgradeCLITests.fixture(name), toPath: cli.path(name))
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: cli.path(name))
            let read = try cli.run(
                ["--identity", cli.path(name), "list", "--format", "json"], environment: Self.noPassphrase)
            #expect(read.status == 0, "\(read)")
            let seen = try #require(try cli.json(read.stdout)["prescriptions"] as? [[String: Any]])
            #expect(seen.count == 1)
            for record in seen {
                let patient = try #require(record["patient"] as? [String: Any])
                #expect(patient["name"] as? String == names[record["id"] as! String])
                #expect(patient["id"] as? String != nil)
            }
        }
    }
}
