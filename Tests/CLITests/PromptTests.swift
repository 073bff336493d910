import Foundation
import Testing

/// The interactive path: a real pseudo-terminal (Python's pty module drives the binary), so the
/// prompt, the confirmation and the echo being off are tested as a person would meet them.
@Suite struct PromptTests {
    static let driver = #"""
        import os, pty, select, signal, sys, time
        binary, vault = sys.argv[1], sys.argv[2]
        args = sys.argv[3:]
        answers = [a.encode() + b"\n" for a in os.environ["ANSWERS"].split("|")]
        pid, fd = pty.fork()
        if pid == 0:
            # The pty is the controlling terminal; stdin may carry data instead (STDIN_FILE).
            if os.environ.get("STDIN_FILE"):
                os.dup2(os.open(os.environ["STDIN_FILE"], os.O_RDONLY), 0)
            os.execv(binary, [binary] + args)
        out = b""
        since_answer = 0   # answer only a prompt printed after the previous answer
        deadline = time.time() + 30
        while True:
            if time.time() > deadline:
                os.kill(pid, signal.SIGKILL)
                out += b"\n[driver: timed out]"
                break
            ready, _, _ = select.select([fd], [], [], 0.2)
            if not ready:
                continue
            try:
                chunk = os.read(fd, 4096)
            except OSError:
                break
            if not chunk:
                break
            out += chunk
            fresh = out[since_answer:].rstrip()
            if answers and (fresh.endswith(b":") or fresh.endswith(b"]")):
                os.write(fd, answers.pop(0))
                since_answer = len(out)
        _, status = os.waitpid(pid, 0)
        sys.stdout.write(out.decode(errors="replace"))
        sys.exit(os.WEXITSTATUS(status) if os.WIFEXITED(status) else 99)
        """#

    func drive(_ cli: CLIHarness, _ arguments: [String], answers: [String], stdinFile: String? = nil) throws
        -> CLIHarness.Result
    {
        let script = try cli.write(Self.driver, to: "drive.py")
        var env = cli.environment
        env["RXVAULT_PASSPHRASE_FILE"] = nil
        env["ANSWERS"] = answers.joined(separator: "|")
        env["STDIN_FILE"] = stdinFile
        env["PATH"] = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return try CLIHarness.spawn(
            ["/usr/bin/env", "python3", script, CLIHarness.binary, cli.vaultPath] + arguments,
            environment: env, directory: cli.directory)
    }

    @Test func promptsWithoutEchoAndConfirms() throws {
        let cli = try CLIHarness()
        let secret = "pty-secret-passphrase-42"
        let created = try drive(cli, ["init", "--kdf", "interactive"], answers: [secret, secret])
        #expect(created.status == 0, "\(created)")
        #expect(created.stdout.contains("New passphrase for"))
        #expect(created.stdout.contains("Repeat it:"))
        #expect(!created.stdout.contains(secret), "the passphrase was echoed")

        try cli.rewritePassphraseFile(secret + "\n")
        let id = try cli.add(CLIHarness.glassesArguments)
        let listed = try drive(cli, ["list"], answers: [secret])
        #expect(listed.status == 0, "\(listed)")
        #expect(listed.stdout.contains("Quintessa Marlowe"))
        #expect(!listed.stdout.contains(secret))

        // A mistyped passphrase is asked again, three tries in all, as sudo does.
        let retried = try drive(cli, ["list"], answers: ["not-it", secret])
        #expect(retried.status == 0 && retried.stdout.contains("Quintessa Marlowe"), "\(retried)")
        #expect(retried.stdout.contains("rxvault: that passphrase does not open the vault; try again"), "\(retried)")
        let wrong = try drive(cli, ["list"], answers: ["not-it", "nor-this", "nor-that"])
        #expect(wrong.status == 77, "\(wrong)")
        #expect(wrong.stdout.components(separatedBy: "try again").count == 3, "\(wrong)")

        // A repeat that differs is asked again (both entries), three times in all.
        let mismatch = try drive(
            cli, ["passwd"],
            answers: [secret, "new-one-aaaaaaa", "new-one-bbbbbbb", "new-one-aaaaaaa", "new-one-ccccccc", "x", "y"])
        #expect(mismatch.status == 64, "\(mismatch)")
        #expect(mismatch.stdout.contains("rxvault: the two passphrases differ; try again"), "\(mismatch)")
        #expect(mismatch.stdout.contains("the two passphrases differed 3 times; nothing was changed"), "\(mismatch)")
        let other = try CLIHarness()
        let fixed = try drive(
            other, ["init", "--kdf", "interactive"],
            answers: ["first-try-passphrase", "first-try-passphrasf", "first-try-passphrase", "first-try-passphrase"])
        #expect(fixed.status == 0 && fixed.stdout.contains("differ; try again"), "\(fixed)")

        let declined = try drive(cli, ["remove", id], answers: [secret, "n"])
        #expect(declined.status == 2, "a declined confirmation is not a success: \(declined)")
        #expect(declined.stdout.contains("nothing changed"))
        #expect(try cli.run(["show", id]).status == 0)
        let confirmed = try drive(cli, ["remove", id], answers: [secret, "yes"])
        #expect(confirmed.status == 0, "\(confirmed)")
        #expect(try cli.run(["show", id]).status == 67)
    }

    /// Every confirmation, declined, exits 2 ("cancelled") and changes nothing; an unknown
    /// target is reported before anything is asked.
    @Test func declinedConfirmationsExitNonZeroAndUnknownTargetsAreNotAsked() throws {
        let cli = try CLIHarness()
        try cli.initVault()
        let id = try cli.add(CLIHarness.glassesArguments)
        #expect(try cli.run(["attach", id, AttachmentTests.photo]).status == 0)
        #expect(
            try cli.run(["client", "add", "shop", "--generate", "--identity-out", cli.path("shop.key")]).status == 0)
        #expect(try cli.run(["grant", "shop", id]).status == 0)
        let secret = try String(contentsOfFile: cli.passphraseFile, encoding: .utf8).trimmingCharacters(in: .newlines)
        for command in [
            ["remove", id], ["detach", id, "png-prescription-photo-1200x1600.png"], ["client", "remove", "shop"]
        ] {
            let declined = try drive(cli, command, answers: [secret, "n"])
            #expect(declined.stdout.contains("[y/N]"), "\(command): \(declined)")
            #expect(declined.status == 2, "\(command): \(declined)")
            #expect(declined.stdout.contains("rxvault: cancelled: nothing changed"), "\(command): \(declined)")
            #expect(!declined.stdout.contains("error"), "\(command): \(declined)")
            if command[0] == "remove" {
                // The question says what else goes: the attachment, and what the client loses.
                #expect(
                    declined.stdout.contains(
                        "with all 1 version(s), its attachment and the grant of shop (it can no longer read it)? [y/N]"),
                    "\(declined)")
            }
            // No answer (end of input: Ctrl-D) is a no.
            let unanswered = try drive(cli, command, answers: [secret, "\u{04}"])
            #expect(unanswered.status == 2, "\(command): \(unanswered)")
        }
        #expect(try cli.run(["show", id]).status == 0)
        #expect(try cli.run(["attachments", id]).stdout.contains("png-prescription-photo-1200x1600.png"))
        #expect(try cli.run(["client", "show", "shop"]).stdout.contains("grants     1"))

        for command in [["client", "remove", "nobody"], ["remove", "ffffffff"], ["detach", id, "nothing.png"]] {
            let unknown = try drive(cli, command, answers: [secret, "y"])
            #expect(unknown.status == 67, "\(command): \(unknown)")
            #expect(!unknown.stdout.contains("[y/N]"), "asked before saying it does not exist: \(command): \(unknown)")
        }
    }

    /// Long work reports progress on a terminal's stderr, and says nothing of it to a script.
    @Test func progressShowsOnATerminalOnly() throws {
        let cli = try CLIHarness()
        try cli.initVault()
        _ = try cli.add(CLIHarness.glassesArguments)
        let secret = try String(contentsOfFile: cli.passphraseFile, encoding: .utf8).trimmingCharacters(in: .newlines)
        let backup = try drive(cli, ["backup", cli.path("tty.age")], answers: [secret])
        #expect(backup.status == 0, "\(backup)")
        // A bar, the percentage and the amounts (bytes as KiB or MiB).
        #expect(backup.stdout.contains("rxvault: backing up [\(String(repeating: "#", count: 20))] 100% "), "\(backup)")
        #expect(
            backup.stdout.range(
                of: #"100% [0-9.]+ (KiB|MiB|bytes)/[0-9.]+ (KiB|MiB|bytes)"#, options: .regularExpression) != nil,
            "\(backup)")
        let verify = try drive(cli, ["backup", "verify", cli.path("tty.age")], answers: [secret])
        #expect(verify.status == 0, "\(verify)")
        #expect(verify.stdout.contains("rxvault: verifying [\(String(repeating: "#", count: 20))] 100% "), "\(verify)")
        let quiet = try cli.run(["backup", cli.path("script.age")])
        #expect(quiet.status == 0)
        #expect(!quiet.stderr.contains("%"), "progress went to a pipe: \(quiet.stderr)")
    }
}
