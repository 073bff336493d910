import Foundation
import Testing

/// A person who lost the laptop and forgot the passphrase has their backups too. A backup carries
/// every way into the vault of its day (a stanza per key slot: BackupWaysIn), so the recovery
/// code opens it as it opens the vault, and so does any passphrase slot; recipients come on top.
/// A backup locked with a passphrase alone (`--passphrase-only`, or made before 0.5.0) says so,
/// and when it was made, to a recovery code.
@Suite struct RecoveryBackupTests {
    /// A vault with a prescription and a recovery code (in `code.txt`); returns the id and the code file.
    func withRecoveryCode(_ cli: CLIHarness) throws -> (id: String, code: String) {
        try cli.initVault()
        let id = try cli.add(CLIHarness.glassesArguments)
        let added = try cli.run(["key", "add", "--recovery"])
        #expect(added.status == 0, "\(added)")
        return (id, try cli.write(added.stdout, to: "code.txt"))
    }

    /// The passphrase of the day, kept aside before it is forgotten (the harness's file changes).
    func remember(_ cli: CLIHarness) throws -> String { try cli.write(cli.passphrase + "\n", to: "remembered") }

    func forgetThePassphrase(_ cli: CLIHarness) throws {
        try cli.rewritePassphraseFile("something else entirely\n")
    }

    /// A shell command line as the README writes it: rxvault on PATH, in the harness's folder.
    func readme(_ cli: CLIHarness, _ line: String) throws -> CLIHarness.Result {
        let bin = cli.path("bin")
        if !FileManager.default.fileExists(atPath: bin) {
            try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: false)
            try FileManager.default.createSymbolicLink(atPath: bin + "/rxvault", withDestinationPath: CLIHarness.binary)
        }
        return try cli.shell(line, environment: ["PATH": bin + ":/usr/bin:/bin"])
    }

    func only(_ folder: String) throws -> String {
        let names = try FileManager.default.contentsOfDirectory(atPath: folder)
        try #require(names.count == 1, "\(names)")
        return folder + "/" + names[0]
    }

    /// Issue 47's family: `key add --recovery`, the README's backup, then the laptop and the
    /// passphrase lost. The recovery code restores the backup, sets a new passphrase, and the
    /// prescriptions are there; the passphrase of that day restores it too.
    @Test func theReadmesBackupRestoresWithTheRecoveryCodeOnceTheVaultIsGone() throws {
        let cli = try CLIHarness()
        let (id, code) = try withRecoveryCode(cli)
        let remembered = try remember(cli)
        let made = try readme(cli, "mkdir -p backups && rxvault backup backups")
        #expect(made.status == 0, "\(made)")
        #expect(made.stdout.contains("opens with: passphrase of slot 1, recovery code of slot 2)"), "\(made)")
        let backup = try only(cli.path("backups"))
        let header = String(
            decoding: try #require(FileManager.default.contents(atPath: backup)).prefix(2000), as: UTF8.self)
        #expect(!header.contains("-> scrypt") && header.contains("-> rxvault-slot v1 "), "\(header)")

        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: cli.vaultPath + suffix) }
        try forgetThePassphrase(cli)
        let restored = try cli.run(["restore", backup, "--recovery-key-file", code])
        #expect(restored.status == 0, "\(restored)")
        #expect(restored.stderr.contains("the recovery code opened it"), "\(restored)")
        let fresh = try cli.write("a passphrase we will remember\n", to: "fresh")
        #expect(
            try cli.run(["passwd", "--recovery-key-file", code, "--new-passphrase-file", fresh]).status == 0)
        let listed = try cli.run(["list", "--passphrase-file", fresh])
        #expect(
            listed.status == 0 && listed.stdout.contains("Quintessa Marlowe") && listed.stdout.contains(id), "\(listed)"
        )

        // The passphrase of that day opens the same backup.
        let side = cli.path("with-passphrase.rxv")
        let withPassphrase = try cli.run(["restore", backup, "--to", side, "--passphrase-file", remembered])
        #expect(withPassphrase.status == 0, "\(withPassphrase)")
        #expect(
            try cli.run(["show", id, "--vault", side, "--passphrase-file", remembered]).stdout.contains(
                "Quintessa Marlowe"))
        let verified = try cli.run(["backup", "verify", backup, "--recovery-key-file", code])
        #expect(
            verified.status == 0
                && verified.stdout.contains("opens with: passphrase of slot 1, recovery code of slot 2\n"),
            "\(verified)")
        // A wrong passphrase is told with the ways that do open it.
        let wrong = try cli.run(["restore", backup, "--to", cli.path("x.rxv"), "--passphrase-file", cli.passphraseFile])
        #expect(
            wrong.status == 77 && wrong.stderr.contains("opens none of the key slots")
                && wrong.stderr.contains("(it opens with: passphrase of slot 1, recovery code of slot 2)")
                && wrong.stderr.contains("--recovery-key-file"), "\(wrong)")
        #expect(!FileManager.default.fileExists(atPath: cli.path("x.rxv")))
    }

    /// `--recipient` adds a way in: Debian's age opens the backup with the identity (it skips
    /// rxvault's stanzas), and the vault's keys open it without the identity.
    @Test func aBackupToARecipientOpensWithAgeAndWithTheVaultsKeys() throws {
        let cli = try CLIHarness()
        try cli.initVault()
        let id = try cli.add(CLIHarness.glassesArguments)
        let recipient = try cli.ageKeygen("backup.key")
        // Made before the recovery code existed: no recovery slot, inside or in its header.
        #expect(try cli.run(["backup", cli.path("before-code.age"), "--recipient", recipient]).status == 0)
        let added = try cli.run(["key", "add", "--recovery"])
        #expect(added.status == 0, "\(added)")
        let code = try cli.write(added.stdout, to: "code.txt")
        let folder = cli.path("backups")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let made = try cli.run(["backup", folder, "--recipient", recipient])
        #expect(
            made.status == 0
                && made.stdout.contains(
                    "opens with: passphrase of slot 1, recovery code of slot 2, 1 recipient's identity"),
            "\(made)")
        let backup = try only(folder)

        let opened = try cli.tool(["age", "-d", "-i", cli.path("backup.key"), "-o", cli.path("inner.rxv"), backup])
        #expect(opened.status == 0, "Debian's age refused a backup with rxvault's stanzas: \(opened)")
        #expect(
            FileManager.default.contents(atPath: cli.path("inner.rxv"))?.starts(with: Data("SQLite format 3\0".utf8))
                == true)
        try forgetThePassphrase(cli)
        #expect(try cli.run(["list"]).status == 77)

        // The identity and the code, as before; the code alone, now.
        let key = ["--age-identity", cli.path("backup.key"), "--recovery-key-file", code]
        let verified = try cli.run(["backup", "verify", backup] + key)
        #expect(
            verified.status == 0 && verified.stdout.contains("the backup verifies: it restores vault"), "\(verified)")
        let listed = try cli.run(["backup", "list", folder, "--verify", "--recovery-key-file", code])
        #expect(listed.status == 0 && listed.stdout.contains("ok"), "\(listed)")
        let target = cli.path("restored/vault.rxv")
        let restored = try cli.run(["restore", backup, "--to", target, "--recovery-key-file", code])
        #expect(restored.status == 0, "\(restored)")
        #expect(
            restored.stderr.contains(
                "the recovery code opened it; set a new passphrase with 'rxvault passwd --recovery --vault \(target)'"),
            "\(restored)")
        let fresh = try cli.write("a passphrase I will remember\n", to: "new")
        #expect(
            try cli.run(["passwd", "--vault", target, "--recovery-key-file", code, "--new-passphrase-file", fresh])
                .status == 0)
        let shown = try cli.run(["show", id, "--vault", target, "--passphrase-file", fresh])
        #expect(shown.status == 0 && shown.stdout.contains("Quintessa Marlowe"), "\(shown)")

        // A backup from before the code: neither its header nor the vault inside has a recovery slot.
        let older = try cli.run(["backup", "verify", cli.path("before-code.age")] + key)
        #expect(
            older.status == 77 && older.stderr.contains("the recovery code does not open the vault inside")
                && older.stderr.contains("made before 'rxvault key add --recovery'"), "\(older)")
        let olderAlone = try cli.run([
            "restore", cli.path("before-code.age"), "--to", cli.path("x.rxv"), "--recovery-key-file", code
        ])
        #expect(
            olderAlone.status == 77 && olderAlone.stderr.contains("(it opens with: passphrase of slot 1)")
                && olderAlone.stderr.contains("the vault had no recovery code when this backup was made"),
            "\(olderAlone)")
        #expect(!FileManager.default.fileExists(atPath: cli.path("x.rxv")))
    }

    /// `--passphrase-only` writes the old kind on purpose and says the code cannot open it; the
    /// code is then refused (77) with the day whose passphrase opens it, before it is asked for.
    /// `backup list` tells the two kinds apart without a key, and `--verify` with the code.
    @Test func aPassphraseOnlyBackupSaysWhichPassphraseOpensIt() throws {
        let cli = try CLIHarness()
        let (_, code) = try withRecoveryCode(cli)
        let folder = cli.path("backups")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let old = try cli.run(
            ["backup", folder, "--passphrase-only"], environment: ["RXVAULT_NOW": "2026-03-01T08:00:00Z"])
        #expect(old.status == 0, "\(old)")
        #expect(
            old.stdout.contains("opens only with the vault's passphrase as it is now")
                && old.stderr.contains("--passphrase-only") && old.stderr.contains("the recovery code cannot open it"),
            "\(old)")
        #expect(
            try cli.run(["backup", folder], environment: ["RXVAULT_NOW": "2026-03-02T08:00:00Z"]).status == 0)
        let backup =
            folder + "/"
            + (try #require(
                try FileManager.default.contentsOfDirectory(atPath: folder).first { $0.contains("20260301") }))
        #expect(
            try cli.run(["backup", folder, "--passphrase-only", "--recipient", try cli.ageKeygen("k")]).status == 64)

        let table = try cli.run(["backup", "list", folder])
        let rows = table.stdout.split(separator: "\n").map(String.init)
        #expect(table.status == 0 && rows.count == 3, "\(table)")
        #expect(rows[1].contains("passphrase of 2026-03-01 only"), "\(table)")
        #expect(rows[2].contains("passphrase of slot 1, recovery code of slot 2"), "\(table)")
        let json = try cli.json(try cli.run(["backup", "list", folder, "--format", "json"]).stdout)
        let items = try #require(json["backups"] as? [[String: Any]])
        #expect(items[0]["key"] as? String == "passphrase" && items[0]["labelled"] as? Bool == false)
        #expect(items[1]["key"] as? String == "slots" && items[1]["labelled"] as? Bool == true)
        let slots = try #require(items[1]["slots"] as? [[String: Any]])
        #expect(slots.map { $0["kind"] as? String } == ["passphrase", "recovery"], "\(slots)")

        try forgetThePassphrase(cli)
        for command in [["restore", backup, "--to", cli.path("r.rxv")], ["backup", "verify", backup]] {
            let refused = try cli.run(command + ["--recovery-key-file", code])
            #expect(refused.status == 77, "\(refused)")
            #expect(
                refused.stderr.contains("opens only with the passphrase the vault had on 2026-03-01")
                    && refused.stderr.contains("never with a recovery code"), "\(refused)")
            #expect(refused.stderr.contains("hint:") && refused.stderr.contains("--passphrase-only"), "\(refused)")
        }
        // Refused before the code is asked for: no terminal here, yet the answer is the refusal.
        let asked = try cli.run(["restore", backup, "--to", cli.path("r.rxv"), "--recovery"])
        #expect(asked.status == 77 && asked.stderr.contains("never with a recovery code"), "\(asked)")
        // Standard input cannot be looked at first: told once its header is read.
        let piped = try cli.shell("\"$RXVAULT\" restore - --to r.rxv --recovery-key-file code.txt < '\(backup)'")
        #expect(piped.status == 77 && piped.stderr.contains("never with a recovery code"), "\(piped)")
        #expect(!FileManager.default.fileExists(atPath: cli.path("r.rxv")))
        let listed = try cli.run(["backup", "list", folder, "--verify", "--recovery-key-file", code])
        let verifiedRows = listed.stdout.split(separator: "\n").map(String.init)
        #expect(listed.status == 77 && verifiedRows.count == 3, "\(listed)")
        #expect(
            verifiedRows[1].contains("not opened: opens only with the passphrase the vault had on 2026-03-01"),
            "\(listed)")
        #expect(verifiedRows[2].hasSuffix("ok"), "\(listed)")
        // The code and a passphrase on the same command line: which one is meant is not guessed.
        let both = try cli.run([
            "backup", "verify", backup, "--recovery-key-file", code, "--passphrase-file", cli.passphraseFile
        ])
        #expect(both.status == 64 && both.stderr.contains("not both"), "\(both)")
    }

    /// Each slot's stanza holds what the vault file holds, bound by the wrapped key's associated
    /// data and the header MAC: an edited cost opens nothing (77 with the passphrase, 76 once the
    /// code gives the file key and the MAC shows the edit), and a cost rxvault never writes is
    /// refused before any derivation (76).
    @Test func anEditedSlotStanzaIsRefused() throws {
        let cli = try CLIHarness()
        let (_, code) = try withRecoveryCode(cli)
        #expect(try cli.run(["backup", cli.path("b.age")]).status == 0)
        let original = try #require(FileManager.default.contents(atPath: cli.path("b.age")))
        let text = String(decoding: original.prefix(4000), as: UTF8.self)
        let line = try #require(
            text.split(separator: "\n").first { $0.hasPrefix("-> rxvault-slot v1 4 ") && $0.contains(" 1 passphrase ") }
        )
        var fields = line.split(separator: " ").map(String.init)
        // -> rxvault-slot v1 FORMAT VAULT ID KIND ALGORITHM OPS MEM SALT
        #expect(fields.count == 11, "\(line)")
        func edited(_ replacement: String, _ name: String) throws -> String {
            var changed = original
            let range = try #require(changed.range(of: Data(line.utf8)))
            changed.replaceSubrange(range, with: Data(replacement.utf8))
            try changed.write(to: URL(fileURLWithPath: cli.path(name)))
            return cli.path(name)
        }
        let ops = Int(fields[8])!
        fields[8] = String(ops == 1 ? 2 : ops - 1)
        let cheaper = try edited(fields.joined(separator: " "), "cheaper.age")
        let withPassphrase = try cli.run(["restore", cheaper, "--to", cli.path("a.rxv")])
        #expect(
            withPassphrase.status == 77 && withPassphrase.stderr.contains("opens none of the key slots"),
            "\(withPassphrase)")
        let withCode = try cli.run(["restore", cheaper, "--to", cli.path("a.rxv"), "--recovery-key-file", code])
        #expect(withCode.status == 76 && withCode.stderr.contains("damaged"), "\(withCode)")
        fields[8] = String(ops)
        fields[9] = "99999999999"
        let hostile = try edited(fields.joined(separator: " "), "hostile.age")
        let refused = try cli.run(["restore", hostile, "--to", cli.path("a.rxv")])
        #expect(
            refused.status == 76 && refused.stderr.contains("key slot 1 has KDF parameters rxvault never writes"),
            "\(refused)")
        #expect(!FileManager.default.fileExists(atPath: cli.path("a.rxv")))
        #expect(try cli.run(["restore", cli.path("b.age"), "--to", cli.path("a.rxv")]).status == 0)
    }

    /// A backup made after `key remove` no longer opens with that slot's passphrase; one made
    /// before still does (a backup keeps the ways in of its day, as the vault inside it does).
    @Test func aBackupAfterKeyRemoveNoLongerOpensWithThatSlot() throws {
        let cli = try CLIHarness()
        let (_, _) = try withRecoveryCode(cli)
        let second = try cli.write("the second passphrase of this vault\n", to: "second")
        #expect(try cli.run(["key", "add", "--new-passphrase-file", second]).status == 0)
        let before = try cli.run(["backup", cli.path("before.age")])
        #expect(
            before.status == 0
                && before.stdout.contains("passphrase of slot 1, recovery code of slot 2, passphrase of slot 3"),
            "\(before)")
        #expect(try cli.run(["key", "remove", "3", "--yes"]).status == 0)
        let after = try cli.run(["backup", cli.path("after.age")])
        #expect(
            after.status == 0 && after.stdout.contains("opens with: passphrase of slot 1, recovery code of slot 2)"),
            "\(after)")
        let refused = try cli.run([
            "restore", cli.path("after.age"), "--to", cli.path("a.rxv"), "--passphrase-file", second
        ])
        #expect(
            refused.status == 77 && refused.stderr.contains("the passphrase opens none of the key slots"), "\(refused)")
        #expect(
            try cli.run(["restore", cli.path("before.age"), "--to", cli.path("b.rxv"), "--passphrase-file", second])
                .status == 0)
    }

    @Test func aWrongPassphrasePointsToTheRecoveryCodeWhenTheVaultHasOne() throws {
        let cli = try CLIHarness()
        try cli.initVault()
        let wrong = try cli.write("not the passphrase\n", to: "wrong")
        let without = try cli.run(["list", "--passphrase-file", wrong])
        #expect(without.status == 77 && !without.stderr.contains("--recovery"), "\(without)")
        #expect(try cli.run(["key", "add", "--recovery"]).status == 0)
        let with = try cli.run(["list", "--passphrase-file", wrong])
        #expect(
            with.status == 77 && with.stderr.contains("hint:") && with.stderr.contains("'rxvault passwd --recovery'"),
            "\(with)")
    }

    @Test func initSuggestsARecoveryCodeInOneLine() throws {
        let cli = try CLIHarness()
        let r = try cli.run(["init", "--kdf", "interactive"])
        #expect(r.status == 0 && r.stdout == "created \(cli.vaultPath)\n", "\(r)")
        let lines = r.stderr.split(separator: "\n")
        #expect(lines.count == 1 && lines[0].contains("rxvault key add --recovery"), "\(r)")
    }
}
