import Foundation
import Testing

/// A person who forgot the passphrase has their backups too. The vault inside a backup
/// keeps its key slots, so the recovery code opens it; the age layer around it opens with the
/// identity of a backup made to a recipient, never with the code when it is the passphrase of
/// the day (age allows nothing beside an scrypt stanza), and that refusal says what to do.
@Suite struct RecoveryBackupTests {
    /// A vault with a prescription and a recovery code (in `code.txt`); returns the id and the code file.
    func withRecoveryCode(_ cli: CLIHarness) throws -> (id: String, code: String) {
        try cli.initVault()
        let id = try cli.add(CLIHarness.glassesArguments)
        let added = try cli.run(["key", "add", "--recovery"])
        #expect(added.status == 0, "\(added)")
        return (id, try cli.write(added.stdout, to: "code.txt"))
    }

    func forgetThePassphrase(_ cli: CLIHarness) throws {
        try "something else entirely\n".write(toFile: cli.passphraseFile, atomically: true, encoding: .utf8)
    }

    @Test func aRecoveryCodeRestoresAndVerifiesABackupMadeToARecipient() throws {
        let cli = try CLIHarness()
        try cli.initVault()
        let id = try cli.add(CLIHarness.glassesArguments)
        let recipient = try cli.ageKeygen("backup.key")
        // Made before the recovery code existed: its vault has no recovery slot.
        #expect(try cli.run(["backup", cli.path("before-code.age"), "--recipient", recipient]).status == 0)
        let added = try cli.run(["key", "add", "--recovery"])
        #expect(added.status == 0, "\(added)")
        let code = try cli.write(added.stdout, to: "code.txt")
        let folder = cli.path("backups")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        #expect(try cli.run(["backup", folder, "--recipient", recipient]).status == 0)
        let backup = folder + "/" + (try #require(try FileManager.default.contentsOfDirectory(atPath: folder).first))
        try forgetThePassphrase(cli)
        #expect(try cli.run(["list"]).status == 77)

        let key = ["--age-identity", cli.path("backup.key"), "--recovery-key-file", code]
        let verified = try cli.run(["backup", "verify", backup] + key)
        #expect(
            verified.status == 0 && verified.stdout.contains("the backup verifies: it restores vault"), "\(verified)")
        let listed = try cli.run(["backup", "list", folder, "--verify"] + key)
        #expect(listed.status == 0 && listed.stdout.contains("ok"), "\(listed)")

        let target = cli.path("restored/vault.rxv")
        let restored = try cli.run(["restore", backup, "--to", target] + key)
        #expect(restored.status == 0, "\(restored)")
        #expect(
            restored.stderr.contains(
                "the recovery code opened it; set a new passphrase with 'rxvault passwd --recovery --vault \(target)'"),
            "\(restored)")
        // The restored vault is the one backed up: the code sets its new passphrase, and it reads.
        let fresh = try cli.write("a passphrase I will remember\n", to: "new")
        #expect(
            try cli.run(["passwd", "--vault", target, "--recovery-key-file", code, "--new-passphrase-file", fresh])
                .status == 0)
        let shown = try cli.run(["show", id, "--vault", target, "--passphrase-file", fresh])
        #expect(shown.status == 0 && shown.stdout.contains("Quintessa Marlowe"), "\(shown)")

        // Without the identity, the age layer is named, and so is what opens it.
        let noIdentity = try cli.run(["restore", backup, "--to", cli.path("x.rxv"), "--recovery-key-file", code])
        #expect(
            noIdentity.status == 77 && noIdentity.stderr.contains("encrypted to age recipients")
                && noIdentity.stderr.contains("--age-identity FILE (the identity kept with the recovery code)"),
            "\(noIdentity)")
        // A backup from before the code: its vault has no recovery slot.
        let older = try cli.run(["backup", "verify", cli.path("before-code.age")] + key)
        #expect(
            older.status == 77 && older.stderr.contains("the recovery code does not open the vault inside")
                && older.stderr.contains("made before 'rxvault key add --recovery'"), "\(older)")
        #expect(!FileManager.default.fileExists(atPath: cli.path("x.rxv")))
    }

    @Test func aPassphraseBackupIsRefusedClearlyToARecoveryCode() throws {
        let cli = try CLIHarness()
        let (_, code) = try withRecoveryCode(cli)
        let folder = cli.path("backups")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let made = try cli.run(["backup", folder])
        #expect(made.status == 0, "\(made)")
        let backup = folder + "/" + (try #require(try FileManager.default.contentsOfDirectory(atPath: folder).first))
        try forgetThePassphrase(cli)

        for command in [["restore", backup, "--to", cli.path("r.rxv")], ["backup", "verify", backup]] {
            let refused = try cli.run(command + ["--recovery-key-file", code])
            #expect(refused.status == 77, "\(refused)")
            #expect(
                refused.stderr.contains("was made with a passphrase")
                    && refused.stderr.contains("never with a recovery code"), "\(refused)")
            #expect(refused.stderr.contains("hint:") && refused.stderr.contains("--recipient"), "\(refused)")
        }
        // Refused before the code is asked for: no terminal here, yet the answer is the refusal.
        let asked = try cli.run(["restore", backup, "--to", cli.path("r.rxv"), "--recovery"])
        #expect(asked.status == 77 && asked.stderr.contains("never with a recovery code"), "\(asked)")
        #expect(!FileManager.default.fileExists(atPath: cli.path("r.rxv")))
        let listed = try cli.run(["backup", "list", folder, "--verify", "--recovery-key-file", code])
        #expect(
            listed.status == 77 && listed.stdout.contains("a recovery code does not open its age layer"), "\(listed)")
        // The code and a passphrase on the same command line: which one is meant is not guessed.
        let both = try cli.run([
            "backup", "verify", backup, "--recovery-key-file", code, "--passphrase-file", cli.passphraseFile
        ])
        #expect(both.status == 64 && both.stderr.contains("not both"), "\(both)")
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
