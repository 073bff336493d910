import Foundation
import RxTestSupport
import Testing

/// Backups into folders, to standard output, armored, to recipients files and SSH keys; listing
/// and pruning a folder; restoring each kind onto a machine with no vault; the scheduled units.
@Suite struct BackupFolderTests {
    func setUp() throws -> (CLIHarness, String) {
        let cli = try CLIHarness()
        try cli.initVault()
        let id = try cli.add(CLIHarness.glassesArguments)
        return (cli, id)
    }

    /// Runs a shell command line in the harness's directory with its environment (and extra).
    func shell(_ cli: CLIHarness, _ line: String, environment extra: [String: String?] = [:]) throws
        -> CLIHarness.Result
    {
        try cli.shell(line, environment: extra)
    }

    func files(_ folder: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: folder).sorted()
    }

    func vaultID(_ cli: CLIHarness, vault: String? = nil) throws -> String {
        let status = try cli.run(["status", "--format", "json"] + (vault.map { ["--vault", $0] } ?? []))
        return try #require(try cli.json(status.stdout)["vaultID"] as? String)
    }

    /// An ed25519 key from OpenSSH's ssh-keygen, no passphrase: returns the .pub line.
    func sshKeygen(_ cli: CLIHarness, _ name: String) throws -> String {
        let r = try shell(cli, "ssh-keygen -q -t ed25519 -N '' -C 'backup key' -f \(name)")
        try #require(r.status == 0, "ssh-keygen is needed (apt-get install openssh-client): \(r)")
        return try String(contentsOfFile: cli.path(name + ".pub"), encoding: .utf8)
    }

    /// A harness standing for another machine: its own home, no vault, the default vault path.
    func freshMachine(passphrase: String = "correct horse battery staple") throws -> CLIHarness {
        let machine = try CLIHarness(passphrase: passphrase)
        machine.environment["RXVAULT_PATH"] = nil
        return machine
    }

    @Test func aFolderGetsDatedNamesThatSortAndNeverCollide() throws {
        let (cli, _) = try setUp()
        let id = try vaultID(cli)
        let folder = cli.path("backups")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
        let now = ["RXVAULT_NOW": "2026-11-22T22:15:30Z"]
        let first = try cli.run(["backup", folder], environment: now)
        #expect(first.status == 0, "\(first)")
        let name = "rxvault-\(id.prefix(8))-20261122T221530Z.age"
        #expect(first.stdout.contains(folder + "/" + name))
        // The same second again (and through a link to the folder, and with --force): new names, nothing replaced.
        let before = FileManager.default.contents(atPath: folder + "/" + name)
        #expect(try cli.run(["backup", folder], environment: now).status == 0)
        try FileManager.default.createSymbolicLink(atPath: cli.path("link"), withDestinationPath: folder)
        #expect(try cli.run(["backup", cli.path("link"), "--force"], environment: now).status == 0)
        #expect(
            try files(folder) == [
                name, "rxvault-\(id.prefix(8))-20261122T221530Z_2.age", "rxvault-\(id.prefix(8))-20261122T221530Z_3.age"
            ])
        #expect(FileManager.default.contents(atPath: folder + "/" + name) == before)
        let mode = try FileManager.default.attributesOfItem(atPath: folder + "/" + name)[.posixPermissions] as? Int
        #expect(mode == 0o600)
        // The audit entry has the time the name has.
        let log = try cli.run(["log", "--format", "json"])
        #expect(log.stdout.contains("\"time\" : \"2026-11-22T22:15:30Z\""), "\(log.stdout)")
        #expect(try cli.run(["backup", "verify", folder + "/" + name]).status == 0)

        // A file keeps working, and is still never replaced without --force.
        #expect(try cli.run(["backup", cli.path("b.age")]).status == 0)
        let again = try cli.run(["backup", cli.path("b.age")])
        #expect(again.status == 73 && again.stderr.contains("give a folder"), "\(again)")
        #expect(try cli.run(["backup", cli.path("b.age"), "--force"]).status == 0)
        // A folder that is not there is a file name, in a folder that must exist (refused up front: 73).
        #expect(try cli.run(["backup", cli.path("missing/b.age")]).status == 73)
    }

    /// `rxvault backup my-backups` before `mkdir my-backups` would write a file of that name:
    /// a path that does not exist and does not end in .age is refused (64) with the mkdir to run,
    /// and nothing is written; the hint's line, run as it is, then works.
    @Test func aDestinationThatIsNoFolderAndNoAgeFileIsRefusedWithTheMkdirToRun() throws {
        let (cli, _) = try setUp()
        for name in ["my-backups", "my backups"] {
            let refused = try cli.run(["backup", cli.path(name)])
            #expect(refused.status == 64, "\(refused)")
            let quoted = name.contains(" ") ? "'\(cli.path(name))'" : cli.path(name)
            #expect(
                refused.stderr.contains("\(cli.path(name)) does not exist")
                    && refused.stderr.contains(
                        "hint: for a folder of dated backups, create it first: mkdir -p \(quoted) && rxvault backup \(quoted)"
                    ),
                "\(refused)")
            #expect(!FileManager.default.fileExists(atPath: cli.path(name)), "nothing is written")
        }
        let refused = try cli.run(["backup", cli.path("my backups")])
        let hint = try #require(
            refused.stderr.components(separatedBy: "create it first: ").last?.components(separatedBy: ";").first)
        let bin = cli.path("bin")
        try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: false)
        try FileManager.default.createSymbolicLink(atPath: bin + "/rxvault", withDestinationPath: CLIHarness.binary)
        let ran = try shell(cli, hint, environment: ["PATH": bin + ":/usr/bin:/bin"])
        #expect(ran.status == 0, "the hint's line, as it is: \(hint)\n\(ran)")
        #expect(try files(cli.path("my backups")).count == 1)
        // A name ending in .age, an existing file (with --force) and - work as before.
        #expect(try cli.run(["backup", cli.path("one.age")]).status == 0)
        _ = try cli.write("an old backup", to: "latest")
        #expect(try cli.run(["backup", cli.path("latest")]).status == 73)
        #expect(try cli.run(["backup", cli.path("latest"), "--force"]).status == 0)
    }

    @Test func standardOutputAndArmorRestoreOnAMachineWithNoVault() throws {
        let (cli, id) = try setUp()
        // Piped: `rxvault backup - | ...`; the message goes to stderr, the backup alone to stdout.
        let piped = try shell(cli, "\"$RXVAULT\" backup - | cat > piped.age")
        #expect(piped.status == 0 && piped.stdout.isEmpty, "\(piped)")
        #expect(piped.stderr.contains("wrote standard output"))
        let bytes = try #require(FileManager.default.contents(atPath: cli.path("piped.age")))
        #expect(bytes.starts(with: Data("age-encryption.org/v1\n".utf8)))
        // A reader that stops early: an I/O error (74) or, if all fit in the pipe first, success; never a signal.
        let closed = try shell(cli, "{ \"$RXVAULT\" backup -; echo \"rc=$?\" >&2; } | head -c 10 > /dev/null")
        #expect(closed.stderr.contains("rc=74") || closed.stderr.contains("rc=0"), "\(closed)")

        // Armored, to stdout: text.
        let armored = try cli.run(["backup", "-", "--armor"])
        #expect(armored.status == 0)
        #expect(
            armored.stdout.hasPrefix("-----BEGIN AGE ENCRYPTED FILE-----\n")
                && armored.stdout.hasSuffix("-----END AGE ENCRYPTED FILE-----\n"))
        #expect(armored.stdout.split(separator: "\n").allSatisfy { $0.count <= 64 })
        let armoredFile = try cli.write(armored.stdout, to: "armored.age")
        let folder = cli.path("f")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
        #expect(try cli.run(["backup", folder, "--armor"]).status == 0)
        let inFolder = try #require(try files(folder).first)
        #expect(
            String(decoding: FileManager.default.contents(atPath: folder + "/" + inFolder)!.prefix(10), as: UTF8.self)
                == "-----BEGIN")

        let kinds: [(String, [String], String?)] = [
            ("piped, from stdin", ["restore", "-"], cli.path("piped.age")),
            ("armored", ["restore", armoredFile], nil),
            ("armored, in a folder", ["restore", folder + "/" + inFolder], nil)
        ]
        for (label, arguments, stdinFile) in kinds {
            let machine = try freshMachine()
            let r = try machine.run(arguments, stdinFile: stdinFile)
            #expect(r.status == 0, "\(label): \(r)")
            let defaultVault = machine.directory.path + "/.local/share/rxvault/vault.rxv"
            #expect(FileManager.default.fileExists(atPath: defaultVault), "\(label)")
            #expect(try machine.run(["show", id]).stdout.contains("Quintessa Marlowe"), "\(label)")
        }
    }

    @Test func recipientsFilesAndSSHKeysNeedNoPassphraseAndOpenWithAge() throws {
        let (cli, id) = try setUp()
        let recipient = try cli.ageKeygen("backup.key")
        let ssh = try sshKeygen(cli, "id_ed25519")
        let list = try cli.write("# who can restore\n\n\(recipient)\n# my SSH key\n\(ssh)", to: "recipients")
        let folder = cli.path("b")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
        // No passphrase anywhere (as a timer runs): the backup is made without opening the vault.
        let noSecret: [String: String?] = ["RXVAULT_PASSPHRASE_FILE": nil]
        let made = try cli.run(["backup", folder, "--recipients-file", list, "--no-input"], environment: noSecret)
        #expect(made.status == 0, "\(made)")
        #expect(made.stderr.contains("not in its audit log"))
        let backup = folder + "/" + (try #require(try files(folder).first))
        let inside = try #require(FileManager.default.contents(atPath: backup))
        #expect(inside.contains("-> rxvault-backup v1 \(try vaultID(cli))"), "the label is in the header")
        #expect(!inside.contains("Quintessa"))
        // Without recipients too (before 0.5.0 a passphrase was needed): the vault's key slots
        // are ways in that need no secret to encrypt to.
        let unattended = try cli.run(["backup", cli.path("slots.age"), "--no-input"], environment: noSecret)
        #expect(
            unattended.status == 0 && unattended.stdout.contains("opens with: passphrase of slot 1; not checked)"),
            "\(unattended)")
        #expect(try cli.run(["backup", "verify", cli.path("slots.age")]).status == 0)
        #expect(
            try cli.run(["backup", folder, "--passphrase-only", "--no-input"], environment: noSecret).status == 64,
            "a passphrase alone needs the passphrase")

        // Debian's age opens it with either key, and finds the vault.
        for key in ["backup.key", "id_ed25519"] {
            let opened = try shell(cli, "age -d -i \(key) -o inner-\(key).rxv '\(backup)'")
            #expect(opened.status == 0, "age -d -i \(key): \(opened)")
            #expect(
                try cli.run(["status", "--vault", cli.path("inner-\(key).rxv")]).stdout.contains(
                    "rxvault vault, format version 8"))
        }
        // Restores on machines with no vault: with the age identity, and from the SSH key through age.
        let byIdentity = try freshMachine()
        let r1 = try byIdentity.run(["restore", backup, "--age-identity", cli.path("backup.key")])
        #expect(r1.status == 0, "\(r1)")
        #expect(try byIdentity.run(["show", id]).stdout.contains("Quintessa Marlowe"))
        let bySSH = try freshMachine()
        let r2 = try shell(bySSH, "age -d -i '\(cli.path("id_ed25519"))' '\(backup)' | \"$RXVAULT\" restore -")
        #expect(r2.status == 0, "\(r2)")
        #expect(try bySSH.run(["show", id]).stdout.contains("Quintessa Marlowe"))
        // rxvault does not read SSH private keys itself, and says how to go through age.
        let sshIdentity = try cli.run(["backup", "verify", backup, "--age-identity", cli.path("id_ed25519")])
        #expect(sshIdentity.status == 64 && sshIdentity.stderr.contains("| rxvault restore -"), "\(sshIdentity)")
        // The vault's passphrase opens it too, and the output says what else does.
        let withPassphrase = try cli.run(["backup", "verify", backup])
        #expect(
            withPassphrase.status == 0
                && withPassphrase.stdout.contains("opens with: passphrase of slot 1, 2 recipients' identities"),
            "\(withPassphrase)")

        // One --recipient given as an SSH public key line; exports take them too.
        #expect(
            try cli.run([
                "backup", cli.path("one.age"), "--recipient", ssh.trimmingCharacters(in: .whitespacesAndNewlines)
            ]).status == 0)
        #expect(try shell(cli, "age -d -i id_ed25519 one.age > one.rxv").status == 0)
        #expect(
            try cli.run(["export", "--format", "json", "--recipients-file", list, "--armor", "--out", cli.path("e.age")]
            ).status == 0)
        let exported = try shell(cli, "age -d -i id_ed25519 e.age")
        #expect(exported.status == 0 && exported.stdout.contains("Quintessa Marlowe"), "\(exported)")

        // Malformed lists: named by line, never quoted; unsupported key types refused.
        let bad = try cli.write("# ok\n\(recipient)\nAGE-SECRET-KEY-1QQQQ\n", to: "bad")
        let refused = try cli.run(["backup", cli.path("x.age"), "--recipients-file", bad])
        #expect(
            refused.status == 65 && refused.stderr.contains("line 3") && !refused.stderr.contains("QQQQ"), "\(refused)")
        let rsa = try cli.run([
            "backup", cli.path("x.age"), "--recipient", "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQ host"
        ])
        #expect(rsa.status == 65 && rsa.stderr.contains("ssh-ed25519 keys only"), "\(rsa)")
        let empty = try cli.write("# nobody\n", to: "empty")
        #expect(try cli.run(["backup", cli.path("x.age"), "--recipients-file", empty]).status == 64)
        // A recipients file that is not there is "not found", as every file a command reads.
        let missing = try cli.run(["backup", cli.path("x.age"), "--recipients-file", cli.path("no-such-list")])
        #expect(missing.status == 67 && missing.stderr.contains("No such file"), "\(missing)")
        #expect(!FileManager.default.fileExists(atPath: cli.path("x.age")))
    }

    @Test func listSaysTimeVaultSizeKeyAndWhetherEachVerifies() throws {
        let (cli, _) = try setUp()
        let id = try vaultID(cli)
        let recipient = try cli.ageKeygen("backup.key")
        let folder = cli.path("b")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
        #expect(try cli.run(["backup", folder], environment: ["RXVAULT_NOW": "2026-03-01T08:00:00Z"]).status == 0)
        #expect(
            try cli.run(
                ["backup", folder, "--recipient", recipient, "--armor"],
                environment: ["RXVAULT_NOW": "2026-03-02T08:00:00Z"]
            ).status == 0)
        // Another vault's backup in the same folder, and files that are not backups.
        let other = try CLIHarness(passphrase: "another vault's passphrase")
        try other.initVault()
        let otherID = try vaultID(other)
        #expect(try other.run(["backup", folder, "--recipient", recipient]).status == 0)
        _ = try cli.write("notes", to: "b/readme.txt")
        _ = try cli.write("", to: "b/rxvault-\(id.prefix(8))-20260303T080000Z.age.part")

        let table = try cli.run(["backup", "list", folder])
        #expect(table.status == 0, "\(table)")
        let lines = table.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 4, "\(table.stdout)")
        #expect(
            lines[0].hasPrefix("TIME") && lines[0].contains("VAULT") && lines[0].contains("SIZE")
                && lines[0].contains("KEY"))
        #expect(lines[1].hasPrefix("2026-03-01T08:00:00Z  \(id.prefix(8))") && lines[1].contains("passphrase"))
        #expect(
            lines[2].hasPrefix("2026-03-02T08:00:00Z  \(id.prefix(8))") && lines[2].contains("1 recipient, armored"))
        #expect(lines[3].contains(String(otherID.prefix(8))))

        let json = try cli.json(try cli.run(["backup", "list", folder, "--format", "json"]).stdout)
        #expect(json["schema"] as? String == "rxvault/backups/v1")
        let items = try #require(json["backups"] as? [[String: Any]])
        #expect(items.count == 3)
        // A default backup opens with the vault's key slots, and is labelled like one to recipients.
        #expect(items[0]["key"] as? String == "slots" && items[0]["labelled"] as? Bool == true)
        #expect(items[1]["key"] as? String == "slots" && items[1]["recipients"] as? Int == 1)
        #expect(items[1]["vaultID"] as? String == id, "the label gives the whole id without a key")
        #expect((items[1]["size"] as? Int ?? 0) > 0 && items[1]["armored"] as? Bool == true)

        // --verify opens each with the keys: both keys given, all verify.
        let verified = try cli.run([
            "backup", "list", folder, "--verify", "--age-identity", cli.path("backup.key"), "--format", "json"
        ])
        #expect(verified.status == 77, "the other vault's backup does not open with this passphrase: \(verified)")
        let outcomes = try #require(try cli.json(verified.stdout)["backups"] as? [[String: Any]])
        #expect(outcomes[0]["verified"] as? Bool == true && outcomes[1]["verified"] as? Bool == true)
        #expect(outcomes[2]["verified"] as? Bool == false)
        // On a terminal, verifying shows how far it got (each backup is opened whole); not in a pipe.
        let watched = try TerminalOutputTests.runOnTerminal(
            cli, ["backup", "list", folder, "--verify", "--age-identity", cli.path("backup.key")], columns: 100,
            stderrToo: true)
        #expect(watched.stdout.contains("rxvault: verifying backups [#"), "\(watched)")
        #expect(!verified.stderr.contains("verifying backups"), "\(verified)")
        // Without the identity, this vault's backups open with its passphrase; the other vault's
        // opens with none of its slots (77); a damaged one fails (76).
        let noIdentity = try cli.run(["backup", "list", folder, "--verify"])
        #expect(
            noIdentity.status == 77 && noIdentity.stdout.contains("the passphrase opens none of its key slots")
                && noIdentity.stdout.components(separatedBy: "  ok").count == 3, "\(noIdentity)")
        let first = folder + "/" + (try #require(try files(folder).first { $0.contains("20260301") }))
        var bytes = try #require(FileManager.default.contents(atPath: first))
        bytes[bytes.count - 100] ^= 1
        try bytes.write(to: URL(fileURLWithPath: first))
        let damaged = try cli.run(["backup", "list", folder, "--verify", "--age-identity", cli.path("backup.key")])
        #expect(damaged.status == 76 && damaged.stdout.contains("FAILED"), "\(damaged)")

        // A backup renamed to another time: its label says otherwise, and list says so.
        let labelled = try #require(try files(folder).first { $0.contains("20260302") })
        try FileManager.default.moveItem(
            atPath: folder + "/" + labelled,
            toPath: folder + "/" + labelled.replacingOccurrences(of: "20260302", with: "20260309"))
        let renamed = try cli.run(["backup", "list", folder])
        #expect(renamed.stdout.contains("was renamed"), "\(renamed)")
        let nowhere = try cli.run(["backup", "list", cli.path("nowhere")])
        #expect(nowhere.status == 66, "\(nowhere)")
        #expect(
            nowhere.stderr.contains("writes the backups to") && !nowhere.stderr.contains("rxvault init"), "\(nowhere)")
        // At 80 columns the time and vault (both in the file's name) go beneath each row.
        let fitted = try TerminalOutputTests.runOnTerminal(cli, ["backup", "list", folder], columns: 80)
        for line in fitted.stdout.split(separator: "\n") { #expect(line.count <= 80, "\(line)") }
        #expect(fitted.stdout.contains("    time 20"), "\(fitted)")
    }

    /// A backup goes only while a newer one verifies. Two damaged backups newer than
    /// the newest whole one: the policy keeps the newest of the day, and the other, which no
    /// newer backup stands in for, is kept too (it was removed before).
    @Test func pruneNeverRemovesABackupNewerThanTheNewestThatVerifies() throws {
        let (cli, _) = try setUp()
        let id = String(try vaultID(cli).prefix(8))
        let recipient = try cli.ageKeygen("backup.key")
        let folder = cli.path("b")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
        let times = ["2026-02-04T09:00:00Z", "2026-02-04T12:00:00Z", "2026-02-04T18:00:00Z"]
        for time in times {
            let r = try cli.run(
                ["backup", folder, "--recipient", recipient, "--no-input"],
                environment: ["RXVAULT_NOW": time, "RXVAULT_PASSPHRASE_FILE": nil])
            #expect(r.status == 0, "\(r)")
        }
        func name(_ time: String) -> String {
            "rxvault-\(id)-" + time.replacingOccurrences(of: "-", with: "").replacingOccurrences(of: ":", with: "")
                + ".age"
        }
        for time in times.dropFirst() {
            let path = folder + "/" + name(time)
            let whole = try #require(FileManager.default.contents(atPath: path))
            try whole.prefix(whole.count - 7).write(to: URL(fileURLWithPath: path))
        }
        let pruned = try cli.run([
            "backup", "prune", folder, "--keep-daily", "1", "--verify", "--age-identity", cli.path("backup.key")
        ])
        #expect(pruned.status == 0, "\(pruned)")
        #expect(try files(folder) == times.map(name).sorted(), "\(pruned)")
        #expect(pruned.stdout.contains("keep    \(name(times[1]))  newer than the newest that verifies"), "\(pruned)")
        #expect(pruned.stdout.contains("keep    \(name(times[0]))  the newest that verifies"), "\(pruned)")
    }

    @Test func pruneKeepsWhatThePolicySaysOnlyAmongThisVaultsBackups() throws {
        let (cli, _) = try setUp()
        let id = String(try vaultID(cli).prefix(8))
        let recipient = try cli.ageKeygen("backup.key")
        let folder = cli.path("b")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
        // A calendar of backups to a recipient (no passphrase: as a timer makes them).
        let times = [
            "2026-01-05T09:00:00Z", "2026-01-06T09:00:00Z", "2026-01-12T09:00:00Z", "2026-01-31T09:00:00Z",
            "2026-02-02T09:00:00Z", "2026-02-03T09:00:00Z", "2026-02-03T18:00:00Z", "2026-02-04T09:00:00Z"
        ]
        for time in times {
            let r = try cli.run(
                ["backup", folder, "--recipient", recipient, "--no-input"],
                environment: ["RXVAULT_NOW": time, "RXVAULT_PASSPHRASE_FILE": nil])
            #expect(r.status == 0, "\(r)")
        }
        func name(_ time: String) -> String {
            "rxvault-\(id)-" + time.replacingOccurrences(of: "-", with: "").replacingOccurrences(of: ":", with: "")
                + ".age"
        }
        // Not this vault's, or not a backup: never touched.
        let other = try CLIHarness()
        try other.initVault()
        #expect(
            try other.run(
                ["backup", folder, "--recipient", recipient], environment: ["RXVAULT_NOW": "2026-01-01T00:00:00Z"]
            ).status == 0)
        _ = try cli.write("mine", to: "b/notes.txt")
        let otherBackup = try #require(try files(folder).first { !$0.contains(id) && $0.hasPrefix("rxvault-") })
        // Another vault's backup renamed to this vault's pattern: its label says whose it is.
        try FileManager.default.copyItem(
            atPath: folder + "/" + otherBackup, toPath: folder + "/" + name("2025-12-01T00:00:00Z"))
        let untouched = [otherBackup, "notes.txt", name("2025-12-01T00:00:00Z")]

        #expect(try cli.run(["backup", "prune", folder]).status == 64, "no --keep-* refuses")
        #expect(try cli.run(["backup", "prune", folder, "--keep-daily", "0"]).status == 64)
        let everything = try files(folder)
        let dry = try cli.run([
            "backup", "prune", folder, "--keep-daily", "2", "--keep-weekly", "2", "--keep-monthly", "2", "--dry-run"
        ])
        #expect(dry.status == 0, "\(dry)")
        #expect(try files(folder) == everything, "a dry run removes nothing")
        #expect(dry.stdout.contains("would remove \(name("2026-01-05T09:00:00Z"))"))
        // One column of verdicts: every file name starts where the widest verdict's does.
        let starts = Set(
            dry.stdout.split(separator: "\n").compactMap { line in
                line.range(of: "rxvault-").map { line.distance(from: line.startIndex, to: $0.lowerBound) }
            })
        #expect(starts == ["would remove ".count], "\(dry.stdout)")

        let pruned = try cli.run([
            "backup", "prune", folder, "--keep-daily", "2", "--keep-weekly", "2", "--keep-monthly", "2"
        ])
        #expect(pruned.status == 0, "\(pruned)")
        // Newest first: 4 Feb stands for its day, ISO week 6 and February; 3 Feb 18:00 for its day;
        // 31 Jan (a Saturday) for week 5 and January. Counts are then used up: the rest go.
        let kept = ["2026-01-31T09:00:00Z", "2026-02-03T18:00:00Z", "2026-02-04T09:00:00Z"].map(name)
        #expect(try files(folder) == (kept + untouched).sorted(), "\(pruned)")
        #expect(pruned.stdout.contains("keep    \(name("2026-02-04T09:00:00Z"))  daily, weekly, monthly"))
        #expect(pruned.stdout.contains("keep    \(name("2026-01-31T09:00:00Z"))  weekly, monthly"))
        #expect(pruned.stderr.contains("left alone: \(name("2025-12-01T00:00:00Z"))"))

        // The newest cut short: the newest that is whole is kept even though the policy would not.
        let newest = folder + "/" + name("2026-02-04T09:00:00Z")
        let whole = try #require(FileManager.default.contents(atPath: newest))
        try whole.prefix(whole.count - 7).write(to: URL(fileURLWithPath: newest))
        let guarded = try cli.run(["backup", "prune", folder, "--keep-daily", "1"])
        #expect(guarded.status == 0, "\(guarded)")
        #expect(
            guarded.stdout.contains("keep    \(name("2026-02-03T18:00:00Z"))  the newest that looks whole"),
            "\(guarded)")
        #expect(
            try files(folder) == ([name("2026-02-03T18:00:00Z"), name("2026-02-04T09:00:00Z")] + untouched).sorted())
        // With --verify the backups are opened: the damaged newest does not count, the next does.
        let opened = try cli.run([
            "backup", "prune", folder, "--keep-daily", "1", "--verify", "--age-identity", cli.path("backup.key"),
            "--dry-run"
        ])
        #expect(opened.status == 0, "\(opened)")
        #expect(
            opened.stdout.contains("keep         \(name("2026-02-03T18:00:00Z"))  the newest that verifies"),
            "\(opened)")
        #expect(
            opened.stdout.contains("keep         \(name("2026-02-04T09:00:00Z"))  daily (FAILED: is damaged"),
            "\(opened)")
        // With keys that open nothing, nothing verifies and nothing is removed.
        _ = try cli.ageKeygen("stranger.key")
        let notThePassphrase = try cli.write("not this vault's passphrase\n", to: "not-the-passphrase")
        let stranger = try cli.run([
            "backup", "prune", folder, "--keep-daily", "1", "--verify", "--age-identity", cli.path("stranger.key"),
            "--passphrase-file", notThePassphrase
        ])
        #expect(stranger.status == 76, "\(stranger)")
        #expect(
            try files(folder) == ([name("2026-02-03T18:00:00Z"), name("2026-02-04T09:00:00Z")] + untouched).sorted())
    }

    @Test func afterPasswdOlderBackupsNeedTheOldPassphraseAndSaySo() throws {
        let (cli, _) = try setUp()
        #expect(try cli.run(["backup", cli.path("old.age")]).status == 0)
        let newPassphrase = try cli.write("a brand new passphrase 2026\n", to: "new")
        let passwd = try cli.run(["passwd", "--new-passphrase-file", newPassphrase])
        #expect(passwd.status == 0)
        #expect(passwd.stderr.contains("backups made before now still need the old passphrase"), "\(passwd)")
        let withNew = try cli.run(["backup", "verify", cli.path("old.age"), "--passphrase-file", newPassphrase])
        #expect(withNew.status == 77)
        #expect(withNew.stderr.contains("older than the last passphrase change"), "\(withNew)")
        #expect(try cli.run(["backup", "verify", cli.path("old.age")]).status == 0, "the old passphrase still opens it")
        // A recipient backup's age layer opens with the identity; the vault inside still wants the old passphrase.
        let recipient = try cli.ageKeygen("k")
        #expect(
            try cli.run(
                ["backup", cli.path("r.age"), "--recipient", recipient, "--no-input"],
                environment: ["RXVAULT_PASSPHRASE_FILE": nil]
            ).status == 0)
        let inner = try cli.run(["backup", "verify", cli.path("r.age"), "--age-identity", cli.path("k")])
        #expect(inner.status == 77 && inner.stderr.contains("as it was that day"), "\(inner)")
        #expect(
            try cli.run([
                "backup", "verify", cli.path("r.age"), "--age-identity", cli.path("k"), "--passphrase-file",
                newPassphrase
            ]).status == 0)
    }

    static let examples = Repository.root.appendingPathComponent("examples")

    /// The home the scheduled-backup examples expect: rxvault in ~/.local/bin, the recipients
    /// file (its identity in `restore.key`), the backup folder.
    func scheduledBackupHome(_ cli: CLIHarness) throws -> String {
        let home = cli.directory.path
        try FileManager.default.createDirectory(atPath: home + "/.local/bin", withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(
            atPath: home + "/.local/bin/rxvault", withDestinationPath: CLIHarness.binary)
        try FileManager.default.createDirectory(atPath: home + "/.config/rxvault", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: home + "/backups/rxvault", withIntermediateDirectories: true)
        let recipient = try cli.ageKeygen("restore.key")
        try "# who may restore\n\(recipient)\n".write(
            toFile: home + "/.config/rxvault/backup-recipients", atomically: true, encoding: .utf8)
        return home
    }

    /// The documented systemd units are what systemd accepts (in the home they expect).
    @Test(
        .enabled(
            if: FileManager.default.isExecutableFile(atPath: "/usr/bin/systemd-analyze"),
            "systemd-analyze is not installed (apt-get install systemd): the units' syntax cannot be checked by systemd"
        ))
    func theScheduledBackupUnitsPassSystemdAnalyzeVerify() throws {
        let (cli, _) = try setUp()
        _ = try scheduledBackupHome(cli)
        let runtime = cli.path("runtime")
        try FileManager.default.createDirectory(
            atPath: runtime, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        let units = Self.examples.appendingPathComponent("systemd").path
        let verify = try shell(
            cli, "systemd-analyze --user verify '\(units)/rxvault-backup.service' '\(units)/rxvault-backup.timer'",
            environment: ["XDG_RUNTIME_DIR": runtime])
        #expect(verify.status == 0, "systemd-analyze verify: \(verify)")
    }

    /// What the documented systemd units and cron line run works, with no passphrase anywhere.
    @Test func theScheduledBackupExamplesRun() throws {
        let (cli, id) = try setUp()
        let examples = Self.examples
        let service = try String(
            contentsOf: examples.appendingPathComponent("systemd/rxvault-backup.service"), encoding: .utf8)
        let home = try scheduledBackupHome(cli)

        // Run the service's commands as systemd would: %h is the home, ${VAR} from Environment=.
        let lines = service.split(separator: "\n").map(String.init)
        let environment = lines.filter { $0.hasPrefix("Environment=") }.map {
            $0.dropFirst("Environment=".count).split(separator: "=", maxSplits: 1)
        }
        let commands = lines.filter { $0.hasPrefix("ExecStart=") }.map { line -> [String] in
            var text = String(line.dropFirst("ExecStart=".count)).replacingOccurrences(of: "%h", with: home)
            for pair in environment {
                text = text.replacingOccurrences(
                    of: "${\(pair[0])}", with: String(pair[1]).replacingOccurrences(of: "%h", with: home))
            }
            return text.split(separator: " ").map(String.init)
        }
        #expect(commands.count == 2)
        let noSecret: [String: String?] = ["RXVAULT_PASSPHRASE_FILE": nil]
        for command in commands {
            #expect(command[0] == home + "/.local/bin/rxvault")
            let r = try cli.run(Array(command.dropFirst()), environment: noSecret)
            #expect(r.status == 0, "\(command): \(r)")
        }
        let made = try files(home + "/backups/rxvault")
        #expect(made.count == 1 && made[0].hasPrefix("rxvault-"))
        let restored = try freshMachine()
        #expect(
            try restored.run([
                "restore", home + "/backups/rxvault/" + made[0], "--age-identity", cli.path("restore.key")
            ]).status == 0)
        #expect(try restored.run(["show", id]).stdout.contains("Quintessa Marlowe"))

        // The cron line, as cron runs it (sh -c, HOME set, a minimal PATH), on another day.
        let cron = try String(contentsOf: examples.appendingPathComponent("cron/rxvault-backup.cron"), encoding: .utf8)
        let entry = try #require(cron.split(separator: "\n").first { !$0.hasPrefix("#") && !$0.isEmpty })
        let fields = entry.split(separator: " ", maxSplits: 5)
        #expect(fields.count == 6 && fields[0...4] == ["30", "2", "*", "*", "*"])
        let ran = try shell(
            cli, String(fields[5]),
            environment: [
                "RXVAULT_PASSPHRASE_FILE": nil, "PATH": "/usr/bin:/bin", "HOME": home,
                "RXVAULT_NOW": "2030-01-01T02:30:00Z"
            ])
        #expect(ran.status == 0, "\(ran)")
        #expect(try files(home + "/backups/rxvault").count == 2)
    }

    /// The guide's Backups examples (docs/guide.md), run as written (sh -e, rxvault on PATH, a
    /// vault in place), then its new-machine example on a home with no vault.
    @Test func theReadmeExamplesRunVerbatim() throws {
        let (cli, id) = try setUp()
        let readme = try String(contentsOfFile: Repository.path("docs/guide.md"), encoding: .utf8)
        let section = try #require(readme.range(of: "\n## Backups\n")).upperBound
        let blocks = readme[section...].components(separatedBy: "```sh\n").dropFirst().prefix(2).map {
            $0.components(separatedBy: "```")[0]
        }
        try #require(blocks.count == 2)
        let bin = cli.path("bin")
        try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: false)
        try FileManager.default.createSymbolicLink(atPath: bin + "/rxvault", withDestinationPath: CLIHarness.binary)
        let path = bin + ":/usr/bin:/bin"
        let first = try shell(cli, "set -e\n" + blocks[0], environment: ["PATH": path])
        #expect(first.status == 0, "guide Backups example:\n\(blocks[0])\n\(first)")
        #expect(try files(cli.path("backups/rxvault")).count == 2)
        #expect(try cli.run(["show", id, "--vault", cli.path("rx-restored.rxv")]).stdout.contains("Quintessa Marlowe"))

        let machine = try freshMachine()
        try FileManager.default.copyItem(atPath: cli.path("rx-backup.age"), toPath: machine.path("rx-backup.age"))
        let second = try shell(machine, "set -e\n" + blocks[1], environment: ["PATH": path])
        #expect(second.status == 0, "guide new-machine example:\n\(blocks[1])\n\(second)")
        #expect(try machine.run(["show", id]).stdout.contains("Quintessa Marlowe"))
    }
}
