import Foundation
import Testing

/// A passphrase file its group or others can read is refused (77) unless
/// --allow-shared-passphrase-file, and then used with a warning; identity files others can read
/// are used with a warning (as ssh warns about keys): the secret in them is only as safe as the
/// file.
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

    static func expectRefused(
        _ r: CLIHarness.Result, _ path: String, what: String = "passphrase",
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(r.status == 77 && !r.signalled, "\(r)", sourceLocation: sourceLocation)
        #expect(
            r.stderr.contains(
                "rxvault: error: \(path) is readable by others: the \(what) in it is not kept secret, so rxvault does not use it"
            ), "\(r)", sourceLocation: sourceLocation)
        #expect(
            r.stderr.contains(
                "rxvault: hint: chmod 600 \(path), or pass --allow-shared-passphrase-file to use it all the same"),
            "\(r)", sourceLocation: sourceLocation)
    }

    @Test func passphraseFilesReadableByOthersAreRefusedUnlessAllowed() throws {
        let cli = try CLIHarness()
        try cli.initVault()
        let id = try cli.add(CLIHarness.glassesArguments)
        // The harness's own file is private: no warning.
        let quiet = try cli.run(["list"])
        #expect(quiet.status == 0 && !quiet.stderr.contains("warning"), "\(quiet)")

        try Self.makeReadableByOthers(cli.passphraseFile)
        let viaEnvironment = try cli.run(["list"])
        Self.expectRefused(viaEnvironment, cli.passphraseFile)
        #expect(viaEnvironment.stdout.isEmpty, "\(viaEnvironment)")
        let viaFlag = try cli.run(
            ["list", "--passphrase-file", cli.passphraseFile], environment: ["RXVAULT_PASSPHRASE_FILE": nil])
        Self.expectRefused(viaFlag, cli.passphraseFile)
        // Readable by the group only is refused too.
        try Self.makeReadableByOthers(cli.passphraseFile, mode: 0o640)
        Self.expectRefused(try cli.run(["show", id]), cli.passphraseFile)

        // Allowed, before or after the command's name: used, with the warning.
        for arguments in [["--allow-shared-passphrase-file", "list"], ["list", "--allow-shared-passphrase-file"]] {
            let allowed = try cli.run(arguments)
            #expect(allowed.status == 0 && allowed.stdout.contains(id.prefix(8)), "\(arguments): \(allowed)")
            Self.expectWarning(allowed, about: cli.passphraseFile)
        }
        try Self.makeReadableByOthers(cli.passphraseFile, mode: 0o600)

        // A new passphrase from a shared file is refused, and nothing changes.
        let newPassphrase = try cli.write("a new passphrase for the vault\n", to: "new-passphrase")
        try Self.makeReadableByOthers(newPassphrase)
        let passwd = try cli.run(["passwd", "--new-passphrase-file", newPassphrase])
        Self.expectRefused(passwd, newPassphrase, what: "new passphrase")
        #expect(try cli.run(["list"]).status == 0, "the passphrase changed")
        let allowed = try cli.run(["passwd", "--new-passphrase-file", newPassphrase, "--allow-shared-passphrase-file"])
        #expect(allowed.status == 0, "\(allowed)")
        Self.expectWarning(allowed, about: newPassphrase)
        #expect(!allowed.stderr.contains(cli.passphraseFile), "\(allowed)")
        try Self.makeReadableByOthers(newPassphrase, mode: 0o600)

        // An age passphrase (backup, verify): refused before anything is written.
        let agePassphrase = try cli.write("an age passphrase for backups\n", to: "age-passphrase")
        try Self.makeReadableByOthers(agePassphrase)
        let environment = ["RXVAULT_PASSPHRASE_FILE": newPassphrase]
        let backup = try cli.run(
            ["backup", cli.path("b.age"), "--age-passphrase-file", agePassphrase, "--allow-shared-passphrase-file"],
            environment: environment)
        #expect(backup.status == 0, "\(backup)")
        Self.expectWarning(backup, about: agePassphrase)
        let refusedBackup = try cli.run(
            ["backup", cli.path("c.age"), "--age-passphrase-file", agePassphrase], environment: environment)
        Self.expectRefused(refusedBackup, agePassphrase, what: "age passphrase")
        #expect(!FileManager.default.fileExists(atPath: cli.path("c.age")))
        let verify = try cli.run(["backup", "verify", cli.path("b.age"), "--age-passphrase-file", agePassphrase])
        Self.expectRefused(verify, agePassphrase, what: "age passphrase")
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

        // --age-identity of import and restore.
        let recipient = try cli.ageKeygen("age.key")
        try Self.makeReadableByOthers(cli.path("age.key"))
        #expect(
            try cli.run(["export", "--format", "json", "--recipient", recipient, "--out", cli.path("x.age")]).status
                == 0)
        let importing = try cli.run(["import", cli.path("x.age"), "--age-identity", cli.path("age.key"), "--dry-run"])
        #expect(importing.status == 0, "\(importing)")
        Self.expectWarning(importing, about: cli.path("age.key"))

        #expect(try cli.run(["backup", cli.path("r.age"), "--recipient", recipient]).status == 0)
        let restore = try cli.run([
            "restore", cli.path("r.age"), "--age-identity", cli.path("age.key"), "--to", cli.path("restored.rxv")
        ])
        #expect(restore.status == 0, "\(restore)")
        Self.expectWarning(restore, about: cli.path("age.key"))
    }
}
