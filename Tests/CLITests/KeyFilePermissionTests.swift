import Foundation
import Testing

/// Passphrase and identity files others can read are used, with a warning (as ssh warns about
/// keys): the secret in them is only as safe as the file.
@Suite struct KeyFilePermissionTests {
    static func makeReadableByOthers(_ path: String, mode: Int = 0o644) throws {
        try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: path)
    }

    static func expectWarning(
        _ r: CLIHarness.Result, about path: String, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(
            r.stderr.contains("rxvault: warning: \(path) is readable by others; chmod 600 \(path)"), "\(r)",
            sourceLocation: sourceLocation)
    }

    @Test func passphraseFilesReadableByOthersWarnButWork() throws {
        let cli = try CLIHarness()
        try cli.initVault()
        // The harness's own file is private: no warning.
        let quiet = try cli.run(["list"])
        #expect(quiet.status == 0 && !quiet.stderr.contains("warning"), "\(quiet)")

        try Self.makeReadableByOthers(cli.passphraseFile)
        let viaEnvironment = try cli.run(["list"])
        #expect(viaEnvironment.status == 0, "\(viaEnvironment)")
        Self.expectWarning(viaEnvironment, about: cli.passphraseFile)

        let viaFlag = try cli.run(
            ["list", "--passphrase-file", cli.passphraseFile], environment: ["RXVAULT_PASSPHRASE_FILE": nil])
        #expect(viaFlag.status == 0, "\(viaFlag)")
        Self.expectWarning(viaFlag, about: cli.passphraseFile)

        // Readable by the group only is warned about too.
        try Self.makeReadableByOthers(cli.passphraseFile, mode: 0o640)
        Self.expectWarning(try cli.run(["status"]), about: cli.passphraseFile)
        try Self.makeReadableByOthers(cli.passphraseFile, mode: 0o600)

        let newPassphrase = try cli.write("a new passphrase for the vault\n", to: "new-passphrase")
        try Self.makeReadableByOthers(newPassphrase)
        let passwd = try cli.run(["passwd", "--new-passphrase-file", newPassphrase])
        #expect(passwd.status == 0, "\(passwd)")
        Self.expectWarning(passwd, about: newPassphrase)
        #expect(!passwd.stderr.contains(cli.passphraseFile), "\(passwd)")
    }

    @Test func identityFilesReadableByOthersWarnButWork() throws {
        let cli = try CLIHarness()
        try cli.initVault()
        let id = try cli.add(CLIHarness.glassesArguments)
        #expect(
            try cli.run(["client", "add", "shop", "--generate", "--identity-out", cli.path("shop.key")]).status == 0)
        #expect(try cli.run(["grant", "shop", id]).status == 0)
        let privateRead = try cli.run(["--identity", cli.path("shop.key"), "list"])
        #expect(privateRead.status == 0 && !privateRead.stderr.contains("warning"), "\(privateRead)")

        try Self.makeReadableByOthers(cli.path("shop.key"))
        let client = try cli.run(["--identity", cli.path("shop.key"), "list"])
        #expect(client.status == 0, "\(client)")
        Self.expectWarning(client, about: cli.path("shop.key"))

        // --age-identity and --age-passphrase-file of export, import, backup and restore.
        let recipient = try cli.ageKeygen("age.key")
        try Self.makeReadableByOthers(cli.path("age.key"))
        #expect(
            try cli.run(["export", "--format", "json", "--recipient", recipient, "--out", cli.path("x.age")]).status
                == 0)
        let importing = try cli.run(["import", cli.path("x.age"), "--age-identity", cli.path("age.key"), "--dry-run"])
        #expect(importing.status == 0, "\(importing)")
        Self.expectWarning(importing, about: cli.path("age.key"))

        let agePassphrase = try cli.write("an age passphrase for backups\n", to: "age-passphrase")
        try Self.makeReadableByOthers(agePassphrase)
        let backup = try cli.run(["backup", cli.path("b.age"), "--age-passphrase-file", agePassphrase])
        #expect(backup.status == 0, "\(backup)")
        Self.expectWarning(backup, about: agePassphrase)
        let verify = try cli.run(["backup", "verify", cli.path("b.age"), "--age-passphrase-file", agePassphrase])
        #expect(verify.status == 0, "\(verify)")
        Self.expectWarning(verify, about: agePassphrase)

        #expect(try cli.run(["backup", cli.path("r.age"), "--recipient", recipient]).status == 0)
        let restore = try cli.run([
            "restore", cli.path("r.age"), "--age-identity", cli.path("age.key"), "--to", cli.path("restored.rxv")
        ])
        #expect(restore.status == 0, "\(restore)")
        Self.expectWarning(restore, about: cli.path("age.key"))
    }
}
