import Foundation
import RxStore
import RxTestSupport
import Testing

/// Through the binary: what a dump of the vault file shows before and after the upgrade
/// to format 3, `rxvault upgrade`, and clients reading a format-2 file and its upgrade.
@Suite struct FormatUpgradeCLITests {
    static func fixture(_ name: String) -> String { Repository.fixture("vaults/\(name)") }

    /// A harness whose vault is the format-2 fixture (made by rxvault at 5f9d212).
    func formatTwoVault() throws -> CLIHarness {
        let cli = try CLIHarness(passphrase: "format two fixture", today: "2026-06-20")
        try loadVaultFixture("format2", to: cli.vaultPath)
        for name in ["lens-shop", "family"] {
            try FileManager.default.copyItem(
                atPath: Self.fixture("format2-\(name).age"), toPath: cli.path("\(name).key"))
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: cli.path("\(name).key"))
        }
        return cli
    }

    /// `sqlite3 vault.rxv .dump`, as anyone holding the file can run it (Python's sqlite3 here:
    /// the same SQL text, without needing the sqlite3 shell installed).
    func dump(_ cli: CLIHarness) throws -> String {
        let python = try cli.tool([
            "python3", "-c", "import sqlite3,sys\nfor l in sqlite3.connect(sys.argv[1]).iterdump(): print(l)",
            cli.vaultPath
        ])
        #expect(python.status == 0, "\(python)")
        return python.stdout
    }

    /// The public key of an age identity file, as the hex a dump writes blobs in (X'...').
    func publicKeyHex(_ cli: CLIHarness, _ name: String) throws -> String {
        let text = try String(contentsOfFile: cli.path("\(name).key"), encoding: .utf8)
        let line = try #require(text.split(separator: "\n").first { $0.hasPrefix("# public key: ") })
        let recipient = String(line.dropFirst("# public key: ".count))
        // Bech32 decoding of the recipient (BIP 173), to the 32 key bytes.
        let python = try cli.tool([
            "python3", "-c",
            """
            import sys
            s = sys.argv[1].lower(); data = s[s.rfind('1') + 1:-6]
            v = [ 'qpzry9x8gf2tvdw0s3jn54khce6mua7l'.index(c) for c in data ]
            acc = bits = 0; out = []
            for x in v:
                acc = (acc << 5) | x; bits += 5
                while bits >= 8: bits -= 8; out.append((acc >> bits) & 255)
            print(bytes(out).hex().upper())
            """, recipient
        ])
        let hex = python.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(hex.count == 64)
        return hex
    }

    @Test func upgradeHidesTheGrantGraphAndClientKeysAndClientsStillRead() throws {
        let cli = try formatTwoVault()
        let noPassphrase: [String: String?] = ["RXVAULT_PASSPHRASE_FILE": nil]
        #expect(try cli.run(["status"], environment: noPassphrase).stdout.contains("format version 2"))
        let shopKey = try publicKeyHex(cli, "lens-shop")
        let familyKey = try publicKeyHex(cli, "family")

        // Format 2: a dump shows both clients' keys and which prescription each grant is for.
        let before = try dump(cli)
        #expect(before.contains(shopKey) && before.contains(familyKey))
        let grantLines = { (dump: String) in
            dump.split(separator: "\n").filter { $0.hasPrefix("INSERT INTO \"access_grant\"") }
        }
        #expect(
            grantLines(before).contains { $0.contains("0b6299e8") }, "the format-2 file names the granted prescription")
        let asShop = ["--identity", cli.path("lens-shop.key"), "list", "--format", "json"]
        let readBefore = try cli.run(asShop, environment: noPassphrase)
        #expect(readBefore.status == 0 && readBefore.stdout.contains("0b6299e8"), "\(readBefore)")

        let upgrade = try cli.run(["upgrade"])
        #expect(upgrade.status == 0, "\(upgrade)")
        #expect(upgrade.stdout == "upgraded the vault from format 2 to format 8\n")
        let again = try cli.run(["upgrade", "--format", "json"])
        #expect(again.status == 0)
        let json = try cli.json(again.stdout)
        #expect(json["upgraded"] as? Bool == false && json["to"] as? Int == 8)
        #expect(try cli.run(["status"], environment: noPassphrase).stdout.contains("format version 8"))

        // Format 3: no client key, and no grant row names a prescription.
        let after = try dump(cli)
        #expect(!after.contains(shopKey) && !after.contains(familyKey), "a client's public key is still in the file")
        #expect(grantLines(after).count == 2)
        for id in ["0b6299e8", "450f2f2a"] { #expect(!grantLines(after).contains { $0.contains(id) }) }
        #expect(!after.contains("public_key BLOB NOT NULL UNIQUE"), "the format-2 client table is gone")

        // Each client reads what it was granted; the owner sees the same grants; check passes.
        let readAfter = try cli.run(asShop, environment: noPassphrase)
        #expect(
            readAfter.status == 0 && readAfter.stdout.contains("0b6299e8") && !readAfter.stdout.contains("450f2f2a"),
            "\(readAfter)")
        let family = try cli.run(["--identity", cli.path("family.key"), "list"], environment: noPassphrase)
        #expect(
            family.status == 0 && family.stdout.contains("450f2f2a") && !family.stdout.contains("0b6299e8"), "\(family)"
        )
        let grants = try cli.run(["grants"])
        #expect(
            grants.status == 0 && grants.stdout.contains("lens-shop  0b6299e8")
                && grants.stdout.contains("family     450f2f2a"), "\(grants)")
        let check = try cli.run(["check", "--read-data"])
        #expect(check.status == 0, "\(check)")
    }

    @Test func upgradeNeedsThePassphraseAndRefusesADamagedVault() throws {
        let cli = try formatTwoVault()
        let noInput = try cli.run(["upgrade", "--no-input"], environment: ["RXVAULT_PASSPHRASE_FILE": nil])
        #expect(noInput.status == 64, "\(noInput)")
        let wrong = try cli.write("not the passphrase\n", to: "wrong")
        #expect(
            try cli.run(["upgrade", "--passphrase-file", wrong], environment: ["RXVAULT_PASSPHRASE_FILE": nil]).status
                == 77)
        // A grant row deleted from the format-2 file: its manifest sees it, and the upgrade (which
        // would make the damage current) is refused, the file left in format 2.
        let db = try Database(path: cli.vaultPath)
        try db.execute("DELETE FROM access_grant WHERE prescription_id LIKE '450f2f2a%'")
        let refused = try cli.run(["upgrade"])
        #expect(refused.status == 76 && refused.stderr.contains("deleted"), "\(refused)")
        #expect(
            try cli.run(["status"], environment: ["RXVAULT_PASSPHRASE_FILE": nil]).stdout.contains("format version 2"))
    }

    /// A backup made by rxvault 0.2.0 holds a format-2 vault: it verifies and restores as it is,
    /// and the restored vault is upgraded by its first write. (The backup is made here with
    /// Debian's age around the fixture, as 0.2.0's `backup --recipient` made them.)
    @Test func aFormatTwoBackupVerifiesRestoresAndIsUpgradedByItsFirstWrite() throws {
        let cli = try formatTwoVault()
        let recipient = try cli.ageKeygen("backup.key")
        let age = try cli.tool(["age", "-r", recipient, "-o", cli.path("old.age"), cli.vaultPath])
        #expect(age.status == 0, "\(age)")
        let verify = try cli.run(["backup", "verify", cli.path("old.age"), "--age-identity", cli.path("backup.key")])
        #expect(verify.status == 0, "\(verify)")
        let restored = cli.path("restored.rxv")
        #expect(
            try cli.run(["restore", cli.path("old.age"), "--to", restored, "--age-identity", cli.path("backup.key")])
                .status == 0)
        let noPassphrase: [String: String?] = ["RXVAULT_PASSPHRASE_FILE": nil]
        #expect(
            try cli.run(["status", "--vault", restored], environment: noPassphrase).stdout.contains("format version 2"))
        #expect(
            try cli.run(
                ["--vault", restored, "--identity", cli.path("lens-shop.key"), "list"], environment: noPassphrase
            ).stdout.contains("0b6299e8"))
        let edit = try cli.run(["edit", "0b6299e8", "--vault", restored, "--note", "after the restore"])
        #expect(edit.status == 0, "\(edit)")
        #expect(
            try cli.run(["status", "--vault", restored], environment: noPassphrase).stdout.contains("format version 8"))
        let read = try cli.run(
            ["--vault", restored, "--identity", cli.path("lens-shop.key"), "show", "0b6299e8", "--format", "json"],
            environment: noPassphrase)
        #expect(read.status == 0 && read.stdout.contains("after the restore"), "\(read)")
        #expect(try cli.run(["check", "--vault", restored, "--read-data"]).status == 0)
    }
}
