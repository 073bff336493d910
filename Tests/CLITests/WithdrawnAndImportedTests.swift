import Foundation
import Testing

/// Through the binary: a foreign FHIR import leaves the vault
/// checkable, backed up and restorable; a withdrawn prescription (cancelled, draft,
/// entered-in-error) is never valid in any output, filter or export; `backup` refuses a vault
/// that would not restore; `backup prune` keeps every backup newer than the newest that verifies.
@Suite struct WithdrawnAndImportedTests {
    static let clinic = FHIRImportTests.clinic

    /// The README's own example: the clinic Bundle imports, then check, backup, verify and
    /// restore on a fresh HOME all pass and give back the same prescriptions.
    @Test func foreignImportChecksBacksUpAndRestores() throws {
        let cli = try CLIHarness()
        try cli.initVault()
        let imported = try cli.run(["import", Self.clinic, "--assume-expiry", "1y"])
        #expect(imported.status == 0, "\(imported)")
        let check = try cli.run(["check"])
        #expect(check.status == 0, "\(check)")
        // An edit keeps the kept elements; the vault still checks.
        let id = try #require(
            (try cli.json(try cli.run(["list", "--format", "json"]).stdout)["prescriptions"] as? [[String: Any]])?
                .first?["id"] as? String)
        #expect(try cli.run(["edit", String(id.prefix(8)), "--note", "checked by phone"]).status == 0)
        #expect(try cli.run(["check"]).status == 0)

        let backup = cli.path("b.age")
        let made = try cli.run(["backup", backup])
        #expect(made.status == 0, "\(made)")
        let verified = try cli.run(["backup", "verify", backup])
        #expect(verified.status == 0, "\(verified)")
        let before = try cli.run(["export", "--format", "json", "--out", "-"])
        #expect(before.status == 0, "\(before)")

        // A new machine: another HOME, the backup restored to the default path there.
        let home = cli.path("newhome")
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        let fresh: [String: String?] = ["HOME": home, "RXVAULT_PATH": nil, "XDG_STATE_HOME": nil, "XDG_DATA_HOME": nil]
        let restored = try cli.run(["restore", backup], environment: fresh)
        #expect(restored.status == 0, "\(restored)")
        #expect(try cli.run(["check"], environment: fresh).status == 0)
        let after = try cli.run(["export", "--format", "json", "--out", "-"], environment: fresh)
        #expect(after.status == 0, "\(after)")
        #expect(try Self.prescriptions(cli, before.stdout) == Self.prescriptions(cli, after.stdout))
    }

    /// The prescriptions of an export, without the export's own time.
    static func prescriptions(_ cli: CLIHarness, _ json: String) throws -> String {
        let object = try cli.json(json)
        let items = object["prescriptions"] ?? object
        return String(
            decoding: try JSONSerialization.data(withJSONObject: items, options: [.sortedKeys]), as: UTF8.self)
    }

    /// Imported with every status, the cancelled, draft and entered-in-error prescriptions say
    /// so in list, show, JSON, CSV and the printed page, and no validity filter finds them.
    @Test func withdrawnImportsAreNeverValid() throws {
        let cli = try CLIHarness()
        try cli.initVault()
        #expect(
            try cli.run([
                "import", Self.clinic, "--assume-expiry", "1y", "--status", "active,cancelled,draft,entered-in-error"
            ]).status == 0)
        let list = try #require(
            try cli.json(try cli.run(["list", "--format", "json"]).stdout)["prescriptions"] as? [[String: Any]])
        let statuses = Dictionary(grouping: list, by: { $0["status"] as? String ?? "?" }).mapValues(\.count)
        #expect(
            statuses["cancelled"] == 1 && statuses["draft"] == 1 && statuses["entered-in-error"] == 1, "\(statuses)")
        let withdrawn = list.filter { ["cancelled", "draft", "entered-in-error"].contains($0["status"] as? String) }
            .compactMap { $0["id"] as? String }
        #expect(withdrawn.count == 3)

        let valid =
            try cli.json(try cli.run(["query", "--valid-on", "2026-06-15", "--format", "json"]).stdout)["prescriptions"]
            as? [[String: Any]] ?? []
        #expect(!valid.isEmpty)
        #expect(valid.allSatisfy { !withdrawn.contains($0["id"] as? String ?? "") }, "\(valid)")
        let expiring =
            try cli.json(try cli.run(["query", "--expiring-within", "3000d", "--format", "json"]).stdout)[
                "prescriptions"] as? [[String: Any]] ?? []
        #expect(!expiring.isEmpty)
        #expect(expiring.allSatisfy { !withdrawn.contains($0["id"] as? String ?? "") })
        let cancelledOnly =
            try cli.json(try cli.run(["query", "--status", "cancelled", "--format", "json"]).stdout)["prescriptions"]
            as? [[String: Any]] ?? []
        #expect(cancelledOnly.count == 1 && cancelledOnly.first?["status"] as? String == "cancelled")
        #expect(try cli.run(["query", "--status", "revoked"]).status == 65)

        for id in withdrawn {
            let show = try cli.run(["show", String(id.prefix(8))])
            #expect(show.status == 0)
            #expect(!show.stdout.contains("(valid)") && !show.stdout.contains("expiring in"), "\(show)")
            let csv = try cli.run(["export", String(id.prefix(8)), "--format", "csv", "--out", "-"])
            #expect(csv.stdout.split(separator: "\n").dropFirst().allSatisfy { !$0.contains(",valid,") }, "\(csv)")
        }
        #expect(try cli.run(["check"]).status == 0)
    }

    /// The owner withdraws and reinstates one: stored as versions, seen in every output, and
    /// written to FHIR as its status.
    @Test func editWithdrawsAndReinstates() throws {
        let cli = try CLIHarness()
        try cli.initVault()
        let id = try cli.add(CLIHarness.glassesArguments)
        let cancel = try cli.run(["edit", id, "--status", "cancelled"])
        #expect(cancel.status == 0, "\(cancel)")
        #expect(cancel.stdout.contains("version 2"))
        let show = try cli.json(try cli.run(["show", id, "--format", "json"]).stdout)
        #expect(show["status"] as? String == "cancelled")
        #expect(try cli.run(["query", "--valid-on", "2026-06-15"]).stdout.contains(id) == false)
        let fhir = try cli.json(try cli.run(["export", id, "--format", "fhir", "--out", "-"]).stdout)
        let resources = (fhir["entry"] as? [[String: Any]] ?? []).compactMap { $0["resource"] as? [String: Any] }
        let rx = try #require(resources.first { $0["resourceType"] as? String == "VisionPrescription" })
        #expect(rx["status"] as? String == "cancelled", "\(rx)")
        #expect(try cli.run(["check"]).status == 0)
        // Round trip through rxvault JSON keeps the status.
        #expect(try cli.run(["export", id, "--format", "json", "--out", cli.path("out.json")]).status == 0)
        let other = try CLIHarness()
        try other.initVault()
        #expect(try other.run(["import", cli.path("out.json")]).status == 0)
        let reimported =
            try other.json(try other.run(["list", "--format", "json"]).stdout)["prescriptions"] as? [[String: Any]]
            ?? []
        #expect(reimported.first?["status"] as? String == "cancelled", "\(reimported)")

        #expect(try cli.run(["edit", id, "--status", "active"]).status == 0)
        #expect(try cli.json(try cli.run(["show", id, "--format", "json"]).stdout)["status"] as? String == "valid")
        #expect(try cli.run(["query", "--valid-on", "2026-06-15"]).stdout.contains(id))
        #expect(try cli.run(["edit", id, "--status", "withdrawn"]).status == 64)
        #expect(try cli.run(["check"]).status == 0)
    }

    /// The printed page of a withdrawn prescription says it is not valid, not "valid on".
    @Test func printedPageOfWithdrawn() throws {
        let cli = try CLIHarness()
        try cli.initVault()
        let id = try cli.add(CLIHarness.glassesArguments)
        #expect(try cli.run(["edit", id, "--status", "cancelled"]).status == 0)
        let pdf = cli.path("rx.pdf")
        let printed = try cli.run(["export", id, "--format", "pdf", "--out", pdf])
        #expect(printed.status == 0, "\(printed)")
        let text = try CLIHarness.spawn(
            ["/usr/bin/pdftotext", "-layout", pdf, "-"], environment: ["PATH": "/usr/bin:/bin"],
            directory: cli.directory)
        #expect(text.stdout.contains("NOT VALID"), "\(text.stdout)")
        #expect(!text.stdout.contains("valid on"), "\(text.stdout)")
    }

    /// A vault that does not pass check is not backed up: 76, the reason, nothing written, and
    /// no audit entry for a backup that did not happen.
    @Test func backupRefusesAVaultThatWouldNotRestore() throws {
        let cli = try CLIHarness()
        try cli.initVault()
        _ = try cli.add(CLIHarness.glassesArguments)
        // Damage that the vault still opens with but check finds: a search index bucket's
        // ciphertext changed (sqlite3's blob literal flips its bytes).
        let damaged = try CLIHarness.spawn(
            [
                "/usr/bin/env", "python3", "-c",
                """
                import sqlite3, sys
                db = sqlite3.connect(sys.argv[1])
                (bucket, blob) = db.execute("select bucket, content from search_index limit 1").fetchone()
                db.execute("update search_index set content=? where bucket=?", (bytes([blob[0] ^ 1]) + blob[1:], bucket))
                db.commit()
                """, cli.vaultPath
            ], environment: ["PATH": "/usr/bin:/bin"], directory: cli.directory)
        try #require(damaged.status == 0, "\(damaged)")
        try #require(try cli.run(["check"]).status == 76)
        let folder = cli.path("backups")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let refused = try cli.run(["backup", folder])
        #expect(refused.status == 76, "\(refused)")
        #expect(refused.stderr.contains("would not restore"), "\(refused)")
        #expect(!refused.stdout.contains("wrote"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder).isEmpty)
        let file = try cli.run(["backup", cli.path("b.age")])
        #expect(file.status == 76)
        #expect(!FileManager.default.fileExists(atPath: cli.path("b.age")))
    }

    /// A vault rxvault 0.4.0 wrote with withdrawn imports: its index holds no status, and the
    /// records do. They read as withdrawn all the same (list, validity and expiry filters, trend,
    /// a client with its identity); `check` passes with a note, `--repair-index` stores the
    /// statuses, and a backup is written.
    @Test func anIndexWrittenBy040StillReadsWithdrawnPrescriptionsAsWithdrawn() throws {
        let cli = try CLIHarness(passphrase: "format four status fixture")
        try cli.loadVault(sql: Life.fixture("vaults/format4-withdrawn.sql"))
        func statuses(_ arguments: [String]) throws -> [String] {
            let r = try cli.run(arguments + ["--format", "json"])
            #expect(r.status == 0, "\(r)")
            return (try cli.json(r.stdout)["prescriptions"] as? [[String: Any]] ?? []).compactMap {
                $0["status"] as? String
            }.sorted()
        }
        #expect(try statuses(["list"]) == ["cancelled", "draft", "entered-in-error", "valid", "valid"])
        #expect(try statuses(["query", "--valid-on", "2026-06-15"]) == ["valid", "valid"])
        #expect(try statuses(["query", "--expiring-within", "3000d"]).allSatisfy { $0 == "valid" || $0 == "expiring" })
        let trend = try cli.run(["trend", "Maria Lopez", "--format", "json"])
        #expect(trend.status == 0, "\(trend)")
        #expect(
            trend.stdout.contains("entered-in-error"),
            "the entered-in-error one is left out, and said so: \(trend.stdout)")

        let check = try cli.run(["check"])
        #expect(check.status == 0, "\(check)")
        #expect(check.stdout.contains("written by an earlier rxvault without the prescription's status"), "\(check)")
        #expect(try cli.run(["backup", cli.path("b.age")]).status == 0)
        let repaired = try cli.run(["check", "--repair-index"])
        #expect(repaired.status == 0, "\(repaired)")
        let after = try cli.run(["check"])
        #expect(after.status == 0 && !after.stdout.contains("without the prescription's status"), "\(after)")
        #expect(try statuses(["list"]) == ["cancelled", "draft", "entered-in-error", "valid", "valid"])
    }

    /// Found by the whole-life test (seed 3768137233): `add` that gives an existing patient its
    /// birth date left that patient's other prescriptions' index entries stale, so `check` (and
    /// with it `backup`) refused the vault. It holds now.
    @Test func addingABirthDateToAPatientKeepsTheVaultCheckable() throws {
        let cli = try CLIHarness()
        try cli.initVault()
        let first = try cli.add(CLIHarness.contactsArguments) // the patient, no birth date
        let added = try cli.run(CLIHarness.glassesArguments)
        #expect(added.status == 0 && added.stderr.contains("birth date set to 1980-04-02"), "\(added)")
        let check = try cli.run(["check"])
        #expect(check.status == 0, "\(check)")
        let listed =
            try cli.json(try cli.run(["list", "--format", "json"]).stdout)["prescriptions"] as? [[String: Any]] ?? []
        let patient = listed.first { ($0["id"] as? String)?.hasPrefix(first) == true }?["patient"] as? [String: Any]
        #expect(patient?["birthDate"] as? String == "1980-04-02", "\(listed)")
        #expect(try cli.run(["backup", cli.path("b.age")]).status == 0)
    }

    static func identifier(_ resource: [String: Any]) -> String {
        (resource["identifier"] as? [[String: Any]] ?? []).compactMap { $0["value"] as? String }.first {
            $0.count == 32
        } ?? ""
    }
}
