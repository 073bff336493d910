import Foundation
import RxTestSupport
import Testing

/// Backups through the binary: write, verify, restore, refuse damage; and age interop for
/// passphrase-encrypted files (Debian's age reads passphrases only from a terminal: a PTY).
@Suite struct BackupTests {
    func setUp() throws -> (CLIHarness, String) {
        let cli = try CLIHarness()
        try cli.initVault()
        let id = try cli.add(CLIHarness.glassesArguments)
        #expect(try cli.run(["attach", id, AttachmentTests.photo]).status == 0)
        return (cli, id)
    }

    @Test func backupVerifyRestore() throws {
        let (cli, id) = try setUp()
        let backup = try cli.run(["backup", cli.path("b.age")])
        #expect(backup.status == 0, "\(backup)")
        let mode = try FileManager.default.attributesOfItem(atPath: cli.path("b.age"))[.posixPermissions] as? Int
        #expect(mode == 0o600)
        // The age layer holds a vault, not plaintext.
        #expect(!FileManager.default.contents(atPath: cli.path("b.age"))!.contains("Quintessa"))
        #expect(try cli.run(["backup", cli.path("b.age")]).status == 73, "never overwrites")

        let verify = try cli.run(["backup", "verify", cli.path("b.age")])
        #expect(verify.status == 0, "\(verify)")
        #expect(verify.stdout.contains("ok   attachments (metadata and every chunk): 1 checked"))

        let restored = cli.path("restored.rxv")
        #expect(try cli.run(["restore", cli.path("b.age"), "--to", restored]).status == 0)
        let show = try cli.run(["show", id, "--vault", restored])
        #expect(show.stdout.contains("Quintessa Marlowe"))
        #expect(
            try cli.run([
                "extract", id, "png-prescription-photo-1200x1600.png", "--vault", restored, "--out", cli.path("p.png")
            ]).status == 0)
        #expect(
            FileManager.default.contents(atPath: cli.path("p.png"))
                == FileManager.default.contents(atPath: AttachmentTests.photo))
        #expect(try cli.run(["check", "--read-data", "--vault", restored]).status == 0)
        // The restored vault works for writes (WAL mode) and logs the backup.
        #expect(try cli.run(["edit", id, "--note", "after restore", "--vault", restored]).status == 0)
        let log = try cli.run(["log", "--vault", restored, "--format", "json"])
        #expect(log.stdout.contains("\"backup\""))

        // Existing target: refused without --force; with it, the old vault is kept as .bak.
        #expect(try cli.run(["restore", cli.path("b.age"), "--to", restored]).status == 73)
        #expect(try cli.run(["restore", cli.path("b.age"), "--to", restored, "--force"]).status == 0)
        #expect(FileManager.default.fileExists(atPath: restored + ".bak"))
        #expect(try cli.run(["show", id, "--vault", restored + ".bak"]).stdout.contains("after restore"))
        #expect(try cli.run(["show", id, "--vault", restored]).stdout.contains("Quintessa Marlowe"))
        #expect(
            try cli.run(["check", "--read-data", "--vault", restored + ".bak"]).status == 0,
            "the old vault, WAL folded in, is whole")
        // A second replace never overwrites the first .bak.
        #expect(try cli.run(["restore", cli.path("b.age"), "--to", restored, "--force"]).status == 0)
        #expect(
            try cli.run(["show", id, "--vault", restored + ".bak"]).stdout.contains("after restore"),
            "the first .bak survives")
        #expect(FileManager.default.fileExists(atPath: restored + ".bak.1"))
    }

    @Test func restoreRefusesAVaultInUseOrAStrayJournal() throws {
        let (cli, id) = try setUp()
        #expect(try cli.run(["backup", cli.path("b.age")]).status == 0)
        // Another process holds the target vault open: replacing it would lose that process's writes.
        let holder = Process()
        holder.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        holder.arguments = [
            "-c",
            "import sqlite3,sys,time; c=sqlite3.connect(sys.argv[1]); c.execute('select count(*) from sqlite_master').fetchall(); print('open', flush=True); sys.stdin.read()",
            cli.vaultPath
        ]
        let ready = Pipe()
        let release = Pipe()
        holder.standardOutput = ready
        holder.standardInput = release
        try holder.run()
        defer {
            try? release.fileHandleForWriting.close()
            holder.waitUntilExit()
        }
        _ = ready.fileHandleForReading.availableData
        let busy = try cli.run(["restore", cli.path("b.age"), "--to", cli.vaultPath, "--force"])
        #expect(busy.status == 75, "\(busy)")
        #expect(!FileManager.default.fileExists(atPath: cli.vaultPath + ".bak"))
        #expect(try cli.run(["show", id]).status == 0)
        try release.fileHandleForWriting.close()
        holder.waitUntilExit()
        // A journal with no vault beside it is someone's unfinished data: never adopted.
        let stray = cli.path("gone.rxv")
        _ = try cli.write("", to: "gone.rxv-wal")
        let refused = try cli.run(["restore", cli.path("b.age"), "--to", stray])
        #expect(refused.status == 65, "\(refused)")
        #expect(refused.stderr.contains("gone.rxv-wal"))
        #expect(!FileManager.default.fileExists(atPath: stray))
    }

    @Test func damagedOrWrongKeyBackupsRestoreNothing() throws {
        let (cli, _) = try setUp()
        #expect(try cli.run(["backup", cli.path("b.age")]).status == 0)
        var bytes = try #require(FileManager.default.contents(atPath: cli.path("b.age")))
        bytes[bytes.count / 2] ^= 0x01
        try bytes.write(to: URL(fileURLWithPath: cli.path("bad.age")))
        let verify = try cli.run(["backup", "verify", cli.path("bad.age")])
        #expect(verify.status == 76, "\(verify)")
        let restore = try cli.run(["restore", cli.path("bad.age"), "--to", cli.path("r.rxv")])
        #expect(restore.status == 76)
        #expect(!FileManager.default.fileExists(atPath: cli.path("r.rxv")))
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: cli.directory.path).allSatisfy {
                !$0.contains(".restore-")
            })
        let truncated = try cli.write("", to: "empty.age")
        #expect(try cli.run(["backup", "verify", truncated]).status == 65)
        let wrong = try cli.write("not the passphrase\n", to: "wrong")
        #expect(try cli.run(["backup", "verify", cli.path("b.age"), "--passphrase-file", wrong]).status == 77)
    }

    @Test func recipientBackupsOpenWithTheIdentity() throws {
        let (cli, _) = try setUp()
        let recipient = try cli.ageKeygen("backup.key")
        #expect(try cli.run(["backup", cli.path("r.age"), "--recipient", String(recipient)]).status == 0)
        // A recipient is a way in beside the vault's key slots: the passphrase opens it too.
        let withPassphrase = try cli.run(["backup", "verify", cli.path("r.age")])
        let opens = "opens with: passphrase of slot 1, 1 recipient's identity"
        #expect(withPassphrase.status == 0 && withPassphrase.stdout.contains(opens), "\(withPassphrase)")
        #expect(
            try cli.run(["backup", "verify", cli.path("r.age"), "--age-identity", cli.path("backup.key")]).status == 0)
        // Debian's age opens it and finds an rxvault vault inside.
        let age = try cli.tool([
            "age", "-d", "-i", cli.path("backup.key"), "-o", cli.path("inner.rxv"), cli.path("r.age")
        ])
        #expect(age.status == 0, "\(age)")
        #expect(
            try cli.run(["status", "--vault", cli.path("inner.rxv")]).stdout.contains("rxvault vault, format version 8")
        )
        // Re-encrypted by age in ASCII armor (as someone keeping backups in text might): still restores.
        let armor = try cli.tool([
            "age", "-a", "-r", String(recipient), "-o", cli.path("armored.age"), cli.path("inner.rxv")
        ])
        #expect(armor.status == 0, "\(armor)")
        let verify = try cli.run(["backup", "verify", cli.path("armored.age"), "--age-identity", cli.path("backup.key")]
        )
        #expect(verify.status == 0, "\(verify)")
        #expect(
            try cli.run([
                "restore", cli.path("armored.age"), "--age-identity", cli.path("backup.key"), "--to",
                cli.path("from-armor.rxv")
            ]).status == 0)
    }

    /// A backup locked with the vault's passphrase alone (`--passphrase-only`) costs a guesser
    /// what the vault file does: age's default work factor (18) for the default preset, 16 (64
    /// MiB) for interactive, and 10 for the suite's vaults made below the presets; a passphrase of
    /// its own gets age's default. A default backup has no scrypt stanza: its slot stanzas carry
    /// the vault's own Argon2id costs.
    @Test func theBackupsWorkFactorFollowsTheVaultsKDF() throws {
        func workFactor(_ cli: CLIHarness, _ name: String, _ extra: [String] = ["--passphrase-only"]) throws -> String {
            let made = try cli.run(["backup", cli.path(name)] + extra)
            #expect(made.status == 0, "\(made)")
            let header = String(
                decoding: FileManager.default.contents(atPath: cli.path(name))!.prefix(200), as: UTF8.self)
            let stanza = header.split(separator: "\n").first { $0.hasPrefix("-> scrypt ") } ?? ""
            return String(stanza.split(separator: " ").last ?? "")
        }
        let fast = try CLIHarness()
        try fast.initVault()
        #expect(try workFactor(fast, "fast.age") == "10")
        let own = try fast.write("a passphrase of the backup's own\n", to: "own-pass")
        #expect(try workFactor(fast, "own.age", ["--age-passphrase-file", own]) == "18")
        for (preset, expected) in [("interactive", "16"), ("moderate", "18")] {
            let cli = try CLIHarness()
            try cli.initVault(through: preset)
            #expect(try workFactor(cli, "\(preset).age") == expected, "\(preset)")
            #expect(try cli.run(["backup", "verify", cli.path("\(preset).age")]).status == 0)
            #expect(try workFactor(cli, "\(preset)-slots.age", []) == "", "a default backup has no scrypt stanza")
            let header = String(
                decoding: FileManager.default.contents(atPath: cli.path("\(preset)-slots.age"))!.prefix(2000),
                as: UTF8.self)
            let costs = preset == "interactive" ? " argon2id13 2 67108864 " : " argon2id13 3 268435456 "
            #expect(header.contains(" 1 passphrase" + costs), "\(header)")
        }
        // A costlier second passphrase slot sets the cost, whichever passphrase locks the backup.
        let mixed = try CLIHarness()
        try mixed.initVault(through: "interactive")
        let second = try mixed.write("a second passphrase for the vault\n", to: "second-pass")
        #expect(
            try mixed.run(["key", "add", "--kdf", "moderate", "--new-passphrase-file", second]).status == 0)
        #expect(try workFactor(mixed, "mixed.age") == "18")
    }

    /// Files rxvault encrypts with a passphrase (age scrypt) open with Debian's age, which asks for
    /// the passphrase on a terminal: driven through a pseudo-terminal.
    @Test func passphraseFilesOpenWithDebiansAge() throws {
        let (cli, _) = try setUp()
        let pass = try cli.write("an export passphrase 42\n", to: "export-pass")
        #expect(
            try cli.run(["export", "--format", "json", "--age-passphrase-file", pass, "--out", cli.path("e.age")])
                .status == 0)
        let driver = try cli.write(
            #"""
            import os, pty, sys, time
            pid, fd = pty.fork()
            if pid == 0:
                os.execvp("age", ["age", "-d", "-o", sys.argv[1], sys.argv[2]])
            out = b""
            deadline = time.time() + 60
            answered = False
            while time.time() < deadline:
                try:
                    chunk = os.read(fd, 1024)
                except OSError:
                    break
                if not chunk:
                    break
                out += chunk
                if not answered and b"passphrase" in out.lower():
                    os.write(fd, sys.argv[3].encode() + b"\n")
                    answered = True
            _, status = os.waitpid(pid, 0)
            sys.exit(os.WEXITSTATUS(status))
            """#, to: "drive-age.py")
        let driven = try cli.tool(["python3", driver, cli.path("e.json"), cli.path("e.age"), "an export passphrase 42"])
        #expect(driven.status == 0, "age -d refused rxvault's scrypt file: \(driven)")
        let document = try #require(
            try JSONSerialization.jsonObject(with: try Data(contentsOf: URL(fileURLWithPath: cli.path("e.json"))))
                as? [String: Any])
        #expect(document["schema"] as? String == "rxvault/export/v1")
    }
}
