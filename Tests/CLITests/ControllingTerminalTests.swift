import Foundation
import Testing

/// Prompts go to the controlling terminal, as age, gpg and ssh ask, so standard input can carry
/// data while a person types the passphrase or the confirmation. The PTY driver of PromptTests
/// makes the pty the child's controlling terminal and, with `stdinFile`, points stdin elsewhere.
@Suite struct ControllingTerminalTests {
    let prompt = PromptTests()

    func setUp() throws -> (CLIHarness, String, String) {
        let cli = try CLIHarness()
        try cli.initVault()
        let id = try cli.add(CLIHarness.glassesArguments)
        let secret = try String(contentsOfFile: cli.passphraseFile, encoding: .utf8).trimmingCharacters(in: .newlines)
        return (cli, id, secret)
    }

    @Test func attachFromStandardInputAsksOnTheTerminal() throws {
        let (cli, id, secret) = try setUp()
        let attached = try prompt.drive(
            cli, ["attach", id, "-", "--name", "scan.png"], answers: [secret], stdinFile: AttachmentTests.photo)
        #expect(attached.status == 0, "\(attached)")
        #expect(attached.stdout.contains("Passphrase for \(cli.vaultPath):"), "\(attached)")
        #expect(!attached.stdout.contains(secret), "the passphrase was echoed")
        let listed = try cli.run(["attachments", id])
        #expect(listed.stdout.contains("scan.png"), "\(listed)")
    }

    @Test func confirmationAsksOnTheTerminalWhileStdinIsData() throws {
        let (cli, id, secret) = try setUp()
        let removed = try prompt.drive(cli, ["remove", id], answers: [secret, "yes"], stdinFile: "/dev/null")
        #expect(removed.status == 0, "\(removed)")
        #expect(removed.stdout.contains("[y/N]"), "\(removed)")
        #expect(!removed.stdout.contains(secret), "the passphrase was echoed")
        #expect(try cli.run(["show", id]).status == 67)
    }

    /// --no-input means never prompt, a confirmation included, even on a terminal.
    @Test func noInputNeverAsksEvenOnATerminal() throws {
        let (cli, id, _) = try setUp()
        let refused = try prompt.drive(
            cli, ["remove", id, "--no-input", "--passphrase-file", cli.passphraseFile], answers: ["yes"])
        #expect(refused.status == 64, "\(refused)")
        #expect(!refused.stdout.contains("[y/N]"), "\(refused)")
        #expect(refused.stdout.contains("--yes"), "\(refused)")
        #expect(try cli.run(["show", id]).status == 0)
    }

    /// A backup's passphrase prompt names the backup, not the vault the options would name.
    @Test func backupPromptsNameTheBackupFile() throws {
        let (cli, _, secret) = try setUp()
        let file = cli.path("tty.age")
        #expect(try cli.run(["backup", file]).status == 0)
        let verify = try prompt.drive(cli, ["backup", "verify", file], answers: [secret])
        #expect(verify.status == 0, "\(verify)")
        #expect(verify.stdout.contains("Passphrase for backup \(file):"), "\(verify)")
        #expect(!verify.stdout.contains("Passphrase for \(cli.vaultPath)"), "\(verify)")
        let target = cli.path("restored.rxv")
        let restore = try prompt.drive(cli, ["restore", file, "--to", target], answers: [secret])
        #expect(restore.status == 0, "\(restore)")
        #expect(restore.stdout.contains("Passphrase for backup \(file):"), "\(restore)")
        #expect(!restore.stdout.contains(secret), "the passphrase was echoed")
    }

    /// Without a controlling terminal (the harness runs every command in a session of its own,
    /// as CI does) and with stdin a pipe, a needed passphrase fails fast instead of waiting.
    @Test func noTerminalFailsFast() throws {
        let (cli, id, _) = try setUp()
        let none = try cli.run(["list"], stdin: "piped data\n", environment: ["RXVAULT_PASSPHRASE_FILE": nil])
        #expect(none.status == 64, "\(none)")
        #expect(none.stderr.contains("no terminal to ask on"), "\(none)")
        let unconfirmed = try cli.run(["remove", id])
        #expect(unconfirmed.status == 64, "\(unconfirmed)")
        #expect(unconfirmed.stderr.contains("pass --yes"), "\(unconfirmed)")
    }
}
