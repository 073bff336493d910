import Foundation
import Testing

/// Where `restore` puts the vault: `--to PATH` (missing folders made 0700, as `init` does), else
/// the vault `--vault`, RXVAULT_PATH or the default names; never over a file without --force;
/// through a symbolic link to the file it points to, the link kept; never "into" a directory.
/// Other files rxvault writes (a backup) follow the same directory rule, but never write through
/// a link (OutputLinkTests).
@Suite struct RestoreTargetTests {
    func setUp() throws -> (CLIHarness, String, String) {
        let cli = try CLIHarness()
        try cli.initVault()
        let id = try cli.add(CLIHarness.glassesArguments)
        let backup = cli.path("b.age")
        let made = try cli.run(["backup", backup])
        #expect(made.status == 0, "\(made)")
        return (cli, id, backup)
    }

    func mode(_ path: String) throws -> Int? {
        try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int
    }

    func isSymlink(_ path: String) -> Bool {
        (try? FileManager.default.attributesOfItem(atPath: path)[.type] as? FileAttributeType) == .typeSymbolicLink
    }

    @Test func toCreatesMissingFoldersPrivately() throws {
        let (cli, id, backup) = try setUp()
        let target = cli.path("new/nested/vault.rxv")
        // A mistyped backup path, or a file that is no backup: no folders left behind.
        let notes = try cli.write("not a backup\n", to: "notes.txt")
        #expect(try cli.run(["restore", cli.path("b.agee"), "--to", target]).status == 67)
        #expect(try cli.run(["restore", notes, "--to", target]).status == 65)
        #expect(!FileManager.default.fileExists(atPath: cli.path("new")))
        let r = try cli.run(["restore", backup, "--to", target])
        #expect(r.status == 0, "\(r)")
        #expect(try mode(cli.path("new")) == 0o700)
        #expect(try mode(cli.path("new/nested")) == 0o700)
        #expect(try mode(target) == 0o600)
        #expect(try cli.run(["show", id, "--vault", target]).stdout.contains("Quintessa Marlowe"))
    }

    /// A new machine: no --to, no RXVAULT_PATH, no folder yet: the default vault is restored.
    @Test func withoutToRestoresTheDefaultVaultOnANewMachine() throws {
        let (cli, id, backup) = try setUp()
        let r = try cli.run(["restore", backup], environment: ["RXVAULT_PATH": nil])
        #expect(r.status == 0, "\(r)")
        let expected = cli.path(".local/share/rxvault/vault.rxv")
        #expect(r.stdout.contains("restored \(expected)"), "\(r)")
        #expect(try mode(cli.path(".local/share/rxvault")) == 0o700)
        #expect(try cli.run(["show", id], environment: ["RXVAULT_PATH": nil]).stdout.contains("Quintessa Marlowe"))
    }

    @Test func withoutToRestoresTheVaultTheOptionsName() throws {
        let (cli, id, backup) = try setUp()
        // RXVAULT_PATH names the existing vault: never replaced without --force.
        let before = cli.vaultFileBytes()
        let refused = try cli.run(["restore", backup])
        #expect(refused.status == 73, "\(refused)")
        #expect(refused.stderr.contains("\(cli.vaultPath) already exists"), "\(refused)")
        #expect(refused.stderr.contains("rxvault: hint:") && refused.stderr.contains("--force"), "\(refused)")
        #expect(cli.vaultFileBytes() == before)
        // --vault names another one.
        let other = cli.path("other.rxv")
        let r = try cli.run(["restore", backup, "--vault", other])
        #expect(r.status == 0, "\(r)")
        #expect(try cli.run(["show", id, "--vault", other]).stdout.contains("Quintessa Marlowe"))
        // With --force, the configured vault itself, the old one kept as .bak.
        let forced = try cli.run(["restore", backup, "--force"])
        #expect(forced.status == 0, "\(forced)")
        #expect(FileManager.default.fileExists(atPath: cli.vaultPath + ".bak"))
    }

    /// --force through a symbolic link restores the file the link points to: the link stays a
    /// link to the same place, and the old vault is kept as .bak beside the real file.
    @Test func forceThroughASymlinkRestoresItsTarget() throws {
        let (cli, id, backup) = try setUp()
        try FileManager.default.createDirectory(atPath: cli.path("real"), withIntermediateDirectories: true)
        let real = cli.path("real/vault.rxv")
        #expect(try cli.run(["restore", backup, "--to", real]).status == 0)
        let link = cli.path("link.rxv")
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: "real/vault.rxv")
        #expect(try cli.run(["edit", id, "--note", "changed after the backup", "--vault", link]).status == 0)

        let refused = try cli.run(["restore", backup, "--to", link])
        #expect(refused.status == 73, "\(refused)")
        let r = try cli.run(["restore", backup, "--to", link, "--force"])
        #expect(r.status == 0, "\(r)")
        #expect(isSymlink(link), "the link was replaced by a file")
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: link) == "real/vault.rxv")
        #expect(!FileManager.default.fileExists(atPath: link + ".bak"), "the .bak belongs beside the real file")
        #expect(try cli.run(["show", id, "--vault", real + ".bak"]).stdout.contains("changed after the backup"))
        let show = try cli.run(["show", id, "--vault", link])
        #expect(show.stdout.contains("Quintessa Marlowe"))
        #expect(!show.stdout.contains("changed after the backup"), "the link still reads the old vault")
    }

    /// A link to a vault that is not there (yet): the vault is created where the link points.
    @Test func aDanglingSymlinkGetsItsTargetCreated() throws {
        let (cli, id, backup) = try setUp()
        let link = cli.path("dangling.rxv")
        let real = cli.path("elsewhere/vault.rxv")
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: real)
        let r = try cli.run(["restore", backup, "--to", link])
        #expect(r.status == 0, "\(r)")
        #expect(isSymlink(link))
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: link) == real)
        #expect(try mode(cli.path("elsewhere")) == 0o700)
        #expect(try cli.run(["show", id, "--vault", link]).stdout.contains("Quintessa Marlowe"))
    }

    @Test func aDirectoryIsRefusedClearly() throws {
        let (cli, _, backup) = try setUp()
        let folder = cli.path("folder")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: cli.path("folder-link"), withDestinationPath: folder)
        for target in [folder, cli.path("folder-link")] {
            for force in [[], ["--force"]] {
                let r = try cli.run(["restore", backup, "--to", target] + force)
                #expect(r.status == 73, "\(r)")
                #expect(r.stderr.contains("is a directory"), "\(r)")
                #expect(r.stderr.contains("\(target)/vault.rxv"), "\(r)")
            }
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder).isEmpty)
        #expect(!FileManager.default.fileExists(atPath: folder + ".bak"))
    }

    /// A backup file is an output file, not a vault: a link at its path is refused without
    /// --force and replaced with it, never written through (OutputLinkTests has every command).
    @Test func backupThroughASymlinkReplacesTheLink() throws {
        let (cli, _, _) = try setUp()
        try FileManager.default.createDirectory(atPath: cli.path("usb"), withIntermediateDirectories: true)
        let real = cli.path("usb/rx.age")
        try Data("an older backup".utf8).write(to: URL(fileURLWithPath: real))
        let link = cli.path("latest.age")
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: "usb/rx.age")
        let refused = try cli.run(["backup", link])
        #expect(refused.status == 73 && refused.stderr.contains("is a symbolic link"), "\(refused)")
        let r = try cli.run(["backup", link, "--force"])
        #expect(r.status == 0, "\(r)")
        #expect(!isSymlink(link), "the backup was written through the link")
        #expect(FileManager.default.contents(atPath: real) == Data("an older backup".utf8))
        #expect(try cli.run(["backup", "verify", link]).status == 0)
        // A folder is not written over: the backup gets a dated name inside it.
        let before = FileManager.default.contents(atPath: real)
        let folder = try cli.run(["backup", cli.path("usb"), "--force"])
        #expect(folder.status == 0, "\(folder)")
        #expect(folder.stdout.contains(cli.path("usb") + "/rxvault-"), "\(folder)")
        #expect(FileManager.default.contents(atPath: real) == before)
    }
}

/// What `backup verify` and `restore` say.
@Suite struct BackupMessageTests {
    @Test func verifySaysWhatTheBackupHolds() throws {
        let cli = try CLIHarness()
        try cli.initVault()
        _ = try cli.add(CLIHarness.glassesArguments)
        #expect(try cli.run(["backup", cli.path("b.age")]).status == 0)
        let vaultID = try #require(
            try cli.json(try cli.run(["status", "--format", "json"]).stdout)["vaultID"] as? String)
        let verify = try cli.run(["backup", "verify", cli.path("b.age")])
        #expect(verify.status == 0, "\(verify)")
        #expect(!verify.stdout.contains("shown above"), "\(verify)")
        #expect(verify.stdout.contains("vault \(vaultID)"), "\(verify)")
        #expect(verify.stdout.contains("1 prescription (1 version, 0 attachments)"), "\(verify)")
        #expect(verify.stdout.contains("backed up 2026-06-15"), "\(verify)")
    }

    /// Damage found by `verify` does not speak of restoring; a wrong vault passphrase behind a
    /// separate age passphrase says which one is wrong.
    @Test func verifyFailuresSpeakOfTheBackup() throws {
        let cli = try CLIHarness()
        try cli.initVault()
        let agePass = try cli.write("a separate age passphrase\n", to: "age-pass")
        #expect(try cli.run(["backup", cli.path("b.age"), "--age-passphrase-file", agePass]).status == 0)
        var bytes = try #require(FileManager.default.contents(atPath: cli.path("b.age")))
        bytes[bytes.count / 2] ^= 0x01
        try bytes.write(to: URL(fileURLWithPath: cli.path("bad.age")))
        let damaged = try cli.run(["backup", "verify", cli.path("bad.age"), "--age-passphrase-file", agePass])
        #expect(damaged.status == 76, "\(damaged)")
        #expect(!damaged.stderr.contains("restored"), "\(damaged)")

        let wrong = try cli.write("not the vault's passphrase\n", to: "wrong")
        let r = try cli.run([
            "backup", "verify", cli.path("b.age"), "--age-passphrase-file", agePass, "--passphrase-file", wrong
        ])
        #expect(r.status == 77, "\(r)")
        #expect(r.stderr.contains("the vault inside \(cli.path("b.age"))"), "\(r)")
    }
}
