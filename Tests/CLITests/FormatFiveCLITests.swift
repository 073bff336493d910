import Foundation
import RxTestSupport
import Testing

/// Through the binary: a vault rxvault 0.4.0 wrote in format 4 (Fixtures/vaults/format4.sql,
/// three key slots: two passphrases and a recovery code) upgraded to format 5. Every slot opens
/// the upgraded vault, its clients read what they read before, its measurements and grants are
/// kept, and an agent holding the format-4 vault's root key upgrades it without the passphrase
/// and goes on serving it.
@Suite(.serialized) struct FormatFiveCLITests {
    static let recoveryCode = "T17CH-12546-R2VV5-BKD5W-ZEFD6-X44VG-QP3NC-N5BZM"

    /// A harness whose vault is the format-4 fixture, with its clients' identities beside it.
    func formatFourVault(_ cli: CLIHarness? = nil) throws -> CLIHarness {
        let cli = try cli ?? CLIHarness(passphrase: "format four fixture", today: "2026-06-20")
        try loadVaultFixture("format4", to: cli.vaultPath)
        for name in ["lens-shop", "family"] {
            let key = cli.path("\(name).key")
            try FileManager.default.copyItem(atPath: Repository.fixture("vaults/format4-\(name).age"), toPath: key)
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: key)
        }
        return cli
    }

    func format(_ cli: CLIHarness) throws -> Int? {
        try cli.json(try cli.run(["status", "--format", "json"]).stdout)["formatVersion"] as? Int
    }

    /// What each client lists, by id prefix.
    func clientReads(_ cli: CLIHarness) throws -> [String: String] {
        var reads: [String: String] = [:]
        for name in ["lens-shop", "family"] {
            let r = try cli.run(
                ["--identity", cli.path("\(name).key"), "list"], environment: ["RXVAULT_PASSPHRASE_FILE": nil])
            #expect(r.status == 0, "\(name): \(r)")
            reads[name] = r.stdout
        }
        return reads
    }

    @Test func everyKeySlotOpensTheUpgradedVaultAndNothingIsLost() throws {
        let cli = try formatFourVault()
        #expect(try format(cli) == 4)
        let readsBefore = try clientReads(cli)
        #expect(
            readsBefore["lens-shop"]?.contains("7e55752d") == true
                && readsBefore["family"]?.contains("1d52adb9") == true)
        // Owner reads (an export is logged: a write, which would upgrade).
        let shown = { () throws -> [String] in
            try ["7e55752d", "1d52adb9", "436c5bf5"].map { try cli.run(["show", $0, "--format", "json"]).stdout }
        }
        let shownBefore = try shown()
        #expect(shownBefore.allSatisfy { $0.contains("\"sphere\"") }, "\(shownBefore)")
        let measurementsBefore = try cli.run(["measurement", "list", "--format", "json"]).stdout
        let grantsBefore = try cli.run(["grants"]).stdout

        let upgrade = try cli.run(["upgrade"])
        #expect(upgrade.status == 0 && upgrade.stdout == "upgraded the vault from format 4 to format 8\n", "\(upgrade)")
        #expect(try format(cli) == 8)
        let check = try cli.run(["check"])
        #expect(check.status == 0, "\(check)")

        // The same content, the same grants, the same reads.
        #expect(try shown() == shownBefore)
        #expect(try cli.run(["measurement", "list", "--format", "json"]).stdout == measurementsBefore)
        #expect(try cli.run(["grants"]).stdout == grantsBefore)
        #expect(try clientReads(cli) == readsBefore)

        // Slot 3, the partner's passphrase, opens it; slot 1's opened it above.
        let partner = try cli.write("format four second\n", to: "partner")
        let asPartner = try cli.run(["list", "--passphrase-file", partner])
        #expect(asPartner.status == 0 && asPartner.stdout.contains("7e55752d"), "\(asPartner)")
        // Slot 2, the recovery code, sets a new passphrase, which then opens it.
        let code = try cli.write(Self.recoveryCode + "\n", to: "code")
        let fresh = try cli.write("a passphrase after recovery\n", to: "fresh")
        let recovered = try cli.run(["passwd", "--recovery-key-file", code, "--new-passphrase-file", fresh])
        #expect(recovered.status == 0, "\(recovered)")
        let asFresh = try cli.run(["list", "--passphrase-file", fresh])
        #expect(asFresh.status == 0 && asFresh.stdout.contains("7e55752d"), "\(asFresh)")
        #expect(try cli.run(["check", "--passphrase-file", fresh]).status == 0)
    }

    /// The search index's buckets are pinned by seal digests from the upgrade on: a query after
    /// a bucket is put back from the format-4 file is refused, as with whole-bucket hashes.
    @Test func aBucketFromTheFormatFourFileIsRefusedAfterTheUpgrade() throws {
        let cli = try formatFourVault()
        #expect(try cli.run(["upgrade"]).status == 0)
        let edit = try cli.run(["edit", "7e55752d", "--note", "after the upgrade"])
        #expect(edit.status == 0, "\(edit)")
        // The format-4 fixture's bucket of 7e55752d, put back.
        let old = try formatFourVault(try CLIHarness(passphrase: "format four fixture", today: "2026-06-20"))
        let python = try cli.tool([
            "python3", "-c",
            """
            import sqlite3, sys
            old = sqlite3.connect(sys.argv[1]).execute('SELECT content FROM search_index WHERE bucket = 126').fetchone()[0]
            db = sqlite3.connect(sys.argv[2]); db.execute('UPDATE search_index SET content = ? WHERE bucket = 126', (old,)); db.commit()
            """, old.vaultPath, cli.vaultPath
        ])
        #expect(python.status == 0, "\(python)")
        let query = try cli.run(["query", "--expiring-within", "900d"])
        #expect(
            query.status == 76 && query.stderr.contains("search index bucket 126 is not the one the owner wrote last"),
            "\(query)")
    }

    /// The header's format version and the schema's `user_version` set to `version` with another
    /// SQLite client (Python's), as an attacker or a careless tool would edit the file.
    static func editHeaderFormat(of cli: CLIHarness, to version: Int) throws {
        let python = try cli.tool([
            "python3", "-c",
            "import sqlite3,sys; v = int(sys.argv[2]); db = sqlite3.connect(sys.argv[1]); db.execute(f'PRAGMA user_version = {v}'); db.execute('UPDATE vault_header SET format_version = ?', (v,)); db.commit()",
            cli.vaultPath, String(version)
        ])
        #expect(python.status == 0, "\(python)")
    }

    /// An older rxvault refuses a format-5 file with "made by a newer rxvault"; this one says the
    /// same of a format it does not know.
    @Test func aNewerFormatIsNamedAsSuch() throws {
        let cli = try CLIHarness()
        try cli.initVault()
        try Self.editHeaderFormat(of: cli, to: 9)
        let list = try cli.run(["list"])
        #expect(list.status == 66 && list.stderr.contains("made by a newer rxvault"), "\(list)")
    }

    /// `status` given the owner's key verifies the state root, as every owner command does: a
    /// header edited from the current format back to 5 is refused there (76), not shown as a format-5 vault
    /// with its counts. Without a key it can only show the header, as it is.
    @Test func statusWithTheKeyRefusesAHeaderEditedBack() throws {
        let cli = try CLIHarness()
        try cli.initVault()
        _ = try cli.add(CLIHarness.glassesArguments)
        try Self.editHeaderFormat(of: cli, to: 5)
        let status = try cli.run(["status"])
        #expect(
            status.status == 76 && status.stderr.contains("the header's format version was edited"), "\(status)")
        #expect(!status.stdout.contains("prescription"), "no counts are shown for a root that does not verify")
        let headerOnly = try cli.run(["status", "--format", "json"], environment: ["RXVAULT_PASSPHRASE_FILE": nil])
        #expect(headerOnly.status == 0, "\(headerOnly)")
        #expect(try cli.json(headerOnly.stdout)["formatVersion"] as? Int == 5)
    }

    /// The agent holds a format-4 vault's root key; the first write through it upgrades the vault
    /// (no key is wrapped again, so no passphrase is needed) and the agent goes on serving it.
    @Test func anAgentUpgradesAFormatFourVaultWithoutThePassphrase() throws {
        let h = try AgentHarness()
        let cli = try formatFourVault(h.cli)
        try cli.rewritePassphraseFile("format four fixture\n")
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: cli.passphraseFile)
        let unlock = try cli.run(["unlock"])
        #expect(unlock.status == 0, "\(unlock)")
        let edit = try h.runWithoutPassphrase(["edit", "7e55752d", "--note", "through the agent"])
        #expect(edit.status == 0, "\(edit)")
        #expect(try format(cli) == 8)
        let show = try h.runWithoutPassphrase(["show", "7e55752d"])
        #expect(show.status == 0 && show.stdout.contains("through the agent"), "\(show)")
        #expect(try cli.run(["lock"]).status == 0)
        #expect(try cli.run(["check"]).status == 0)
    }

    /// A format-4 vault copied into PostgreSQL stays in format 4 there (a database made by 0.4.0
    /// is the same), and the owner's next write upgrades it in the database.
    @Test func aFormatFourDatabaseIsUpgradedInPlace() throws {
        let cli = try formatFourVault()
        let database = try PostgresServer.shared().createDatabase()
        for (key, value) in database.environment { cli.environment[key] = value }
        let copied = try cli.run(["copy", cli.vaultPath, database.url])
        #expect(copied.status == 0, "\(copied)")
        cli.environment["RXVAULT_PATH"] = database.url
        #expect(try format(cli) == 4)
        let readsBefore = try clientReads(cli)
        let grant = try cli.run(["grant", "family", "436c5bf5"])
        #expect(grant.status == 0, "\(grant)")
        #expect(try format(cli) == 8)
        let check = try cli.run(["check", "--read-data"])
        #expect(check.status == 0, "\(check)")
        let reads = try clientReads(cli)
        #expect(reads["lens-shop"] == readsBefore["lens-shop"])
        #expect(reads["family"]?.contains("436c5bf5") == true && reads["family"]?.contains("1d52adb9") == true)
    }

    /// `serve` on a vault before format 4 upgrades it as it starts, so its gateway and its audit
    /// writer (two connections) read the same format: a client's reads go on after the server's
    /// own audit writes.
    @Test func serveUpgradesAnOlderVaultBeforeItServes() throws {
        let cli = try FormatUpgradeCLITests().formatTwoVault()
        let server = try ServerProcess(cli)
        #expect(try format(cli) == 8, "upgraded before the first request")
        let token = try server.token(identity: cli.path("lens-shop.key"))
        for _ in 0..<3 {
            let search = try server.curl("GET", "/VisionPrescription", token: token)
            #expect(search.status == 200 && search.body.contains("0b6299e8"), "\(search.status) \(search.body)")
            // The audit writer appends at most once a second.
            Thread.sleep(forTimeInterval: 1.2)
        }
    }
}
