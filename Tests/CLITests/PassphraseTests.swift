import Foundation
import RxStore
import Testing

/// Passphrase sources, wrong passphrases, `passwd`, `status` and the busy vault.
@Suite struct PassphraseTests {
    @Test func wrongPassphraseHasItsOwnExitCodeAndChangesNothing() throws {
        let cli = try CLIHarness()
        try cli.initVault()
        _ = try cli.add(CLIHarness.glassesArguments)
        let before = cli.vaultFileBytes()
        let wrong = try cli.write("Tr0ub4dor&3\n", to: "wrong")
        for arguments in [["list"], CLIHarness.contactsArguments, ["passwd", "--new-passphrase-file", wrong]] {
            let r = try cli.run(arguments + ["--passphrase-file", wrong])
            #expect(r.status == 77, "\(r)")
            #expect(r.stderr.hasPrefix("rxvault: error: wrong passphrase"))
            #expect(!r.stderr.contains("Tr0ub4dor"))
        }
        #expect(cli.vaultFileBytes() == before)
    }

    @Test func passphraseSourcesInOrder() throws {
        let cli = try CLIHarness()
        try cli.initVault()
        // --passphrase-file beats RXVAULT_PASSPHRASE_FILE.
        let wrong = try cli.write("nope\n", to: "wrong")
        #expect(
            try cli.run(
                ["list", "--passphrase-file", cli.passphraseFile], environment: ["RXVAULT_PASSPHRASE_FILE": wrong]
            ).status == 0)
        #expect(try cli.run(["list"], environment: ["RXVAULT_PASSPHRASE_FILE": wrong]).status == 77)
        // No source and no terminal to ask on: fail fast with a hint, never hang.
        let none = try cli.run(["list"], environment: ["RXVAULT_PASSPHRASE_FILE": nil])
        #expect(none.status == 64)
        #expect(none.stderr.contains("no terminal to ask on"))
        #expect(none.stderr.contains("rxvault: hint: give --passphrase-file FILE"))
        let noInput = try cli.run(["list", "--no-input"], environment: ["RXVAULT_PASSPHRASE_FILE": nil])
        #expect(noInput.status == 64)
        #expect(noInput.stderr.contains("--no-input"))
        let empty = try cli.write("\n", to: "empty")
        #expect(try cli.run(["list", "--passphrase-file", empty]).status == 64)
        #expect(try cli.run(["list", "--passphrase-file", cli.path("missing")]).status == 64)
    }

    @Test func passphraseFromADescriptor() throws {
        let cli = try CLIHarness()
        try cli.initVault()
        var env = cli.environment
        env["RXVAULT_PASSPHRASE_FILE"] = nil
        let r = try CLIHarness.spawn(
            [
                "/bin/sh", "-c", "exec 3<\"$2\"; exec \"$1\" list --passphrase-fd 3", "sh", CLIHarness.binary,
                cli.passphraseFile
            ],
            environment: env, directory: cli.directory)
        #expect(r.status == 0, "\(r)")
    }

    @Test func passwdRewrapsAndTheOldPassphraseFails() throws {
        let cli = try CLIHarness()
        try cli.initVault()
        let id = try cli.add(CLIHarness.glassesArguments)
        let newFile = try cli.write("a much better passphrase\n", to: "new")
        let r = try cli.run(["passwd", "--new-passphrase-file", newFile])
        #expect(r.status == 0, "\(r)")
        #expect(try cli.run(["show", id]).status == 77)
        let show = try cli.run(["show", id, "--passphrase-file", newFile])
        #expect(show.status == 0)
        #expect(show.stdout.contains("Quintessa Marlowe"))
    }

    @Test func statusNeedsNoPassphraseAndCountsWithOne() throws {
        let cli = try CLIHarness()
        try cli.initVault(through: "interactive")
        _ = try cli.add(CLIHarness.glassesArguments)
        let locked = try cli.run(["status"], environment: ["RXVAULT_PASSPHRASE_FILE": nil])
        #expect(locked.status == 0, "\(locked)")
        #expect(locked.stdout.contains("rxvault vault, format version 8"))
        #expect(locked.stdout.contains("argon2id13, interactive (ops 2, memory 64 MiB)"))
        #expect(!locked.stdout.contains("prescriptions "))
        let unlocked = try cli.run(["status"])
        #expect(unlocked.stdout.contains("prescriptions  1 (1 version, 0 attachments)"))
        let json = try cli.json(try cli.run(["status", "--format", "json"]).stdout)
        #expect(json["formatVersion"] as? Int == 8)
        #expect(json["prescriptions"] as? Int == 1)
        #expect((json["kdf"] as? [String: Any])?["preset"] as? String == "interactive")

        let text = try cli.write("just some notes, not a vault\n", to: "notes.txt")
        let notVault = try cli.run(["status", "--vault", text])
        #expect(notVault.status == 66)
        #expect(notVault.stderr.contains("is not an rxvault vault"))
        let missing = try cli.run(["status", "--vault", cli.path("nothing.rxv")])
        #expect(missing.status == 66)
        #expect(missing.stderr.contains("no vault at"))
        #expect(missing.stderr.contains("rxvault init"))
        let jsonError = try cli.run(["status", "--vault", cli.path("nothing.rxv"), "--format", "json"])
        let error = try #require(try cli.json(jsonError.stderr)["error"] as? [String: Any])
        #expect(error["code"] as? String == "no-vault")
        #expect(error["exit"] as? Int == 66)
        #expect(try cli.run(["list", "--vault", text]).status == 66)
    }

    /// Real time is what it tests (the second process waits while the first holds the lock), so
    /// the test blocks its thread: an async wait could resume late, after the waiting process
    /// gave up, when the test pool's threads are all busy with blocking tests.
    @Test func aSecondProcessWaitsForTheWriterThenSucceedsOrTimesOut() throws {
        let cli = try CLIHarness()
        try cli.initVault()
        let holder = try Database(path: cli.vaultPath)
        try holder.execute("BEGIN IMMEDIATE")
        // With a short timeout: busy, exit 75, nothing written.
        let busy = try cli.run(CLIHarness.glassesArguments, environment: ["RXVAULT_BUSY_TIMEOUT": "0.3"])
        #expect(busy.status == 75, "\(busy)")
        #expect(busy.stderr.contains("busy"))
        // With the default timeout: it waits for the writer to finish, then succeeds.
        let started = Date()
        let done = DispatchSemaphore(value: 0)
        let statuses = LockedArray()
        DispatchQueue.global().async {
            statuses.append((try? cli.run(CLIHarness.glassesArguments).status) ?? -1)
            done.signal()
        }
        // The one fixed wait the suite keeps, because the time is what is tested: a second on,
        // three times the refused command's timeout, the second process is still waiting.
        Thread.sleep(forTimeInterval: 1.0)
        #expect(statuses.values.isEmpty, "the second process is still waiting")
        try holder.execute("COMMIT")
        done.wait()
        #expect(statuses.values == [0])
        #expect(Date().timeIntervalSince(started) >= 0.9)
        #expect(try cli.run(["status"]).stdout.contains("prescriptions  1"))
    }
}

@Suite struct InitSourceOrderTests {
    /// init reads passphrase sources in the same order as every other command.
    @Test func initPrefersTheDescriptorOverTheEnvironment() throws {
        let cli = try CLIHarness()
        let fdFile = try cli.write("from the descriptor\n", to: "fd-pass")
        let r = try CLIHarness.spawn(
            [
                "/bin/sh", "-c", "exec 3<\"$2\"; exec \"$1\" init --kdf interactive --passphrase-fd 3", "sh",
                CLIHarness.binary, fdFile
            ],
            environment: cli.environment, directory: cli.directory)
        #expect(r.status == 0, "\(r)")
        #expect(
            try cli.run(["list", "--passphrase-file", fdFile]).status == 0, "the vault uses the descriptor's passphrase"
        )
    }
}
