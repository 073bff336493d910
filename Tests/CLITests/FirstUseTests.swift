import Foundation
import RxTestSupport
import Testing

/// Defects new users met with the release binary (issue 47), each through the binary where they
/// met it: a closed pipe, the pager on a real terminal, an edit that wrote nothing, a patient
/// found by one command and not another, PostgreSQL's refusals, a key given twice in an import,
/// a PDF that qpdf warns about but does not call damaged, and the API id in `show`'s JSON.
@Suite struct FirstUseTests {
    /// Runs the binary with its standard output on a pipe whose reader has already gone (what
    /// `| head -1` is once head has its line), so the first write meets EPIPE every time. Returns
    /// the exit status as the shell sees it (141: ended by SIGPIPE) and stderr.
    static func runIntoClosedPipe(_ cli: CLIHarness, _ arguments: [String]) throws -> (status: Int32, stderr: String) {
        let script = """
            import os, subprocess, sys
            reader, writer = os.pipe()
            os.close(reader)
            child = subprocess.run(sys.argv[1:], stdout=writer, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
            sys.stderr.buffer.write(child.stderr)
            code = child.returncode
            sys.exit(128 - code if code < 0 else code)
            """
        let r = try CLIHarness.spawn(
            ["/usr/bin/env", "python3", "-c", script, CLIHarness.binary] + arguments, environment: cli.environment,
            directory: cli.directory)
        return (r.status, r.stderr)
    }

    static func listings(patient: String) -> [[String]] {
        [
            ["list"], ["list", "--format", "json"], ["list", "--format", "csv"], ["patients"],
            ["patient", "show", patient], ["export", "--format", "json", "--out", "-"], ["log", "--no-pager"]
        ]
    }

    /// Every listing command, on a file vault and on a PostgreSQL vault (whose event loop ignores
    /// SIGPIPE for the whole process), ends as a Unix filter does when its reader leaves: quietly,
    /// by SIGPIPE (141), never a trap and a stack trace (132).
    @Test(arguments: ["file", "postgres"]) func aClosedPipeEndsTheCommandQuietly(kind: String) throws {
        let cli: CLIHarness
        if kind == "file" {
            cli = try CLIHarness()
            try cli.initVault()
        } else {
            cli = try PostgresVaultTests.databaseVault().0
        }
        _ = try cli.add(CLIHarness.glassesArguments)
        _ = try cli.add(CLIHarness.contactsArguments)
        for command in Self.listings(patient: "Quintessa") {
            let r = try Self.runIntoClosedPipe(cli, command)
            #expect(r.status == 141, "\(kind) \(command): \(r)")
            #expect(r.stderr.isEmpty, "\(kind) \(command): \(r.stderr)")
        }
        // And the real thing: a pipe into head -1, with more than a pipe's buffer to write.
        let pipeline = try CLIHarness.spawn(
            [
                "/bin/bash", "-c",
                "\"$1\" export --format json --out - | head -c 1 >/dev/null; echo \"${PIPESTATUS[0]}\"",
                "bash", CLIHarness.binary
            ], environment: cli.environment, directory: cli.directory)
        #expect(["0", "141"].contains(pipeline.stdout.trimmingCharacters(in: .whitespacesAndNewlines)), "\(pipeline)")
        #expect(!pipeline.stderr.contains("Fatal error"), "\(pipeline)")
    }

    /// A full disk behind `> file` is an error (74) said on stderr, not a success with half the
    /// output: /dev/full refuses every write with ENOSPC.
    @Test func aFailedWriteToStandardOutputIsAnError() throws {
        let cli = try CLIHarness()
        try cli.initVault()
        _ = try cli.add(CLIHarness.glassesArguments)
        let r = try CLIHarness.spawn(
            ["/bin/sh", "-c", "exec \"$1\" list > /dev/full", "sh", CLIHarness.binary], environment: cli.environment,
            directory: cli.directory)
        #expect(r.status == 74, "\(r)")
        #expect(r.stderr.contains("cannot write to standard output: No space left on device"), "\(r)")
    }

    /// `log` taller than the terminal goes through the real `less` on a real terminal (a pty that
    /// is the session's controlling terminal, as a user's is): the first screen shows, `q` quits
    /// it, and rxvault ends with 0. (A pager in a process group of its own is a background job:
    /// the terminal stops it when less sets its modes, and rxvault waited on a blank screen.)
    @Test func thePagerIsLessInTheForeground() throws {
        let cli = try CLIHarness()
        try cli.initVault()
        // Grants and revokes are logged: a log of a dozen entries, on a terminal six rows tall.
        let id = try cli.add(CLIHarness.glassesArguments)
        #expect(
            try cli.run(["client", "add", "shop", "--generate", "--identity-out", cli.path("shop.key")]).status == 0)
        for _ in 0..<5 {
            #expect(try cli.run(["grant", "shop", id]).status == 0)
            #expect(try cli.run(["revoke", "shop", id]).status == 0)
        }
        let script = """
            import fcntl, os, pty, select, signal, struct, sys, termios, time
            argv = sys.argv[1:]
            pid, master = pty.fork()
            if pid == 0:
                fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", 6, 160, 0, 0))
                os.execv(argv[0], argv)
            seen = b""
            def read(seconds):
                global seen
                end = time.time() + seconds
                while time.time() < end:
                    ready, _, _ = select.select([master], [], [], 0.05)
                    if ready:
                        try:
                            chunk = os.read(master, 65536)
                        except OSError:
                            return
                        if not chunk:
                            return
                        seen += chunk
            deadline = time.time() + 15
            while time.time() < deadline and b"SEQ" not in seen:
                read(0.1)
            shown = b"SEQ" in seen
            read(0.3)
            os.write(master, b"q")
            deadline = time.time() + 15
            status = None
            while time.time() < deadline:
                done, status = os.waitpid(pid, os.WNOHANG)
                if done:
                    break
                read(0.1)
            else:
                os.killpg(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                print("hung after q; the screen showed: %r" % seen[-300:])
                sys.exit(124)
            print("shown" if shown else "blank: %r" % seen[-300:])
            sys.exit(os.waitstatus_to_exitcode(status))
            """
        var env = cli.environment
        env["TERM"] = "xterm"
        env["PAGER"] = nil
        let r = try CLIHarness.spawn(
            ["/usr/bin/env", "python3", "-c", script, CLIHarness.binary, "log"], environment: env,
            directory: cli.directory, timeout: 60)
        #expect(r.status == 0, "\(r)")
        #expect(r.stdout.hasPrefix("shown"), "\(r)")
    }

    /// A refused edit and an edit that changes nothing write nothing: the write counter stays,
    /// so a copy of the file taken before is still the vault's newest state, not a rollback.
    @Test func anEditThatIsRefusedOrChangesNothingWritesNothing() throws {
        let cli = try CLIHarness()
        try cli.initVault()
        let id = try cli.add(CLIHarness.glassesArguments)
        try FileManager.default.copyItem(atPath: cli.vaultPath, toPath: cli.path("before.rxv"))
        let refused = try cli.run(["edit", id, "--issued", "not-a-date"])
        #expect(refused.status == 64 || refused.status == 65, "\(refused)")
        let same = try cli.run(["edit", id, "--note", "Varifocal lenses preferred"])
        #expect(same.status == 0, "\(same)")
        #expect(try cli.json(try cli.run(["status", "--format", "json"]).stdout)["versions"] as? Int == 1)
        // The copy from before is the same state: put back, it opens without a rollback warning
        // (the anchor outside the vault holds the newest write counter this machine saw).
        try FileManager.default.removeItem(atPath: cli.vaultPath)
        try FileManager.default.copyItem(atPath: cli.path("before.rxv"), toPath: cli.vaultPath)
        let list = try cli.run(["list"])
        #expect(list.status == 0 && !list.stderr.contains("rollback") && !list.stderr.contains("older"), "\(list)")
    }

    /// Any owner write whose work changed nothing stored writes nothing (issue 49): a `sweep`
    /// with nothing to sweep and an `upgrade` of a vault already current leave the write counter
    /// where it was, so the copy taken before them is still the newest state, not a rollback.
    @Test func writesThatChangeNothingWriteNothing() throws {
        let cli = try CLIHarness()
        try cli.initVault()
        _ = try cli.add(CLIHarness.glassesArguments)
        try FileManager.default.copyItem(atPath: cli.vaultPath, toPath: cli.path("before.rxv"))
        let sweep = try cli.run(["sweep"])
        #expect(sweep.status == 0, "\(sweep)")
        let upgrade = try cli.run(["upgrade"])
        #expect(upgrade.status == 0, "\(upgrade)")
        try FileManager.default.removeItem(atPath: cli.vaultPath)
        try FileManager.default.copyItem(atPath: cli.path("before.rxv"), toPath: cli.vaultPath)
        let list = try cli.run(["list"])
        #expect(list.status == 0 && !list.stderr.contains("rollback") && !list.stderr.contains("older"), "\(list)")
        // A write that changes something still moves it: the copy is then older.
        _ = try cli.add(CLIHarness.glassesArguments + ["--issued", "2025-01-02"])
        try FileManager.default.removeItem(atPath: cli.vaultPath)
        try FileManager.default.copyItem(atPath: cli.path("before.rxv"), toPath: cli.vaultPath)
        let older = try cli.run(["list"])
        #expect(older.stderr.contains("older"), "\(older)")
    }

    /// `show --format json` names the id a client app reads the prescription by, as the text does.
    @Test func showJSONNamesTheAPIID() throws {
        let cli = try CLIHarness()
        try cli.initVault()
        let id = try cli.add(CLIHarness.glassesArguments)
        let text = try cli.run(["show", id]).stdout
        let line = try #require(text.split(separator: "\n").first { $0.contains("API id") })
        let apiID = try #require(line.split(separator: "/").last).trimmingCharacters(in: .whitespaces)
        let json = try cli.json(try cli.run(["show", id, "--format", "json"]).stdout)
        #expect(json["apiID"] as? String == apiID, "\(json)")
    }

    /// Every command that takes a patient who exists finds "Mia" as `trend` does; a change made
    /// to a patient found by part of a name says which one; two matches are refused, listed.
    @Test func everyPatientCommandFindsNamesAlike() throws {
        let cli = try CLIHarness()
        try cli.initVault()
        _ = try cli.add([
            "add", "glasses", "--patient", "Mia Chen", "--prescriber", "Dr Lee", "--issued", "2026-01-10",
            "--expires", "2028-01-10", "--od", "-1.00", "--os", "-1.25"
        ])
        let measured = try cli.run(["measurement", "add", "Mia", "--date", "2026-02-01", "--axial-length-od", "23.5"])
        #expect(measured.status == 0, "\(measured)")
        #expect(measured.stderr.contains("'Mia' is patient") && measured.stderr.contains("Mia Chen"), "\(measured)")
        let trend = try cli.run(["trend", "Mia", "--format", "json"])
        #expect(trend.status == 0, "\(trend)")
        let listed = try cli.run(["measurement", "list", "Mia"])
        #expect(listed.status == 0 && listed.stdout.contains("23.5"), "\(listed)")
        let renamed = try cli.run(["patient", "rename", "mia", "Mia Chen-Li"])
        #expect(renamed.status == 0 && renamed.stdout.contains("Mia Chen-Li"), "\(renamed)")
        _ = try cli.add([
            "add", "glasses", "--patient", "Mia Rossi", "--prescriber", "Dr Lee", "--issued", "2026-01-10",
            "--expires", "2028-01-10", "--od", "-1.00", "--os", "-1.25"
        ])
        let ambiguous = try cli.run(["measurement", "add", "Mia", "--date", "2026-03-01", "--axial-length-od", "23.6"])
        #expect(ambiguous.status == 64, "\(ambiguous)")
        #expect(ambiguous.stderr.contains("Mia Chen-Li") && ambiguous.stderr.contains("Mia Rossi"), "\(ambiguous)")
    }

    /// PostgreSQL's "permission denied" names the role, the statement and the table, exits 77,
    /// and the hint gives docs/deploy.md's GRANT (or says only the owner's role may write); a
    /// `copy` into a database that holds a vault says so in a database's words.
    @Test func databaseRefusalsSayWhichGrant() throws {
        let server = try PostgresServer.shared()
        let (cli, database) = try PostgresVaultTests.databaseVault()
        _ = try cli.add(CLIHarness.glassesArguments)
        let suffix = database.database.suffix(8)
        // A role that may log in and nothing else.
        let bare = "rx_bare_\(suffix)"
        let password = "bare \(UUID().uuidString)"
        _ = try server.psql("CREATE ROLE \(bare) LOGIN PASSWORD '\(password)'", database: database.database)
        let asBare: [String: String?] = [
            "RXVAULT_PATH": "postgres://\(bare)@\(database.host):\(database.port)/\(database.database)",
            "PGPASSWORD": password
        ]
        let list = try cli.run(["list"], environment: asBare)
        #expect(list.status == 77, "\(list)")
        #expect(list.stderr.contains("PostgreSQL refused the role \(bare)") && list.stderr.contains("42501"), "\(list)")
        #expect(list.stderr.contains("GRANT SELECT ON ALL TABLES IN SCHEMA public TO \(bare);"), "\(list)")
        #expect(!list.stderr.contains("internal error"), "\(list)")
        // serve's role, as docs/deploy.md makes it: it reads, but an owner's write is not its to make.
        let serve = "rx_serve_\(suffix)"
        let servePassword = "serve \(UUID().uuidString)"
        let sql = try PostgresVaultTests.serveRoleSQL().replacingOccurrences(of: "rx_serve", with: serve)
            .replacingOccurrences(of: "another long random password", with: servePassword)
        _ = try server.psql(sql, database: database.database)
        let add = try cli.run(
            CLIHarness.contactsArguments,
            environment: [
                "RXVAULT_PATH": "postgres://\(serve)@\(database.host):\(database.port)/\(database.database)",
                "PGPASSWORD": servePassword
            ])
        #expect(add.status == 77, "\(add)")
        #expect(add.stderr.contains("only the role that owns the vault's database may change it"), "\(add)")
        // copy into a database that already holds a vault.
        let copy = try cli.run(["copy", cli.path("vault.rxv"), database.url])
        #expect(copy.status == 73, "\(copy)")
        #expect(copy.stderr.contains("the database at") && copy.stderr.contains("already holds a vault"), "\(copy)")
        #expect(!copy.stderr.contains("init") && !copy.stderr.contains("file"), "\(copy)")
    }

    /// A key given twice in one object reads one way in one reader and another in the next: an
    /// import refuses it, naming the key and the entry, and imports nothing.
    @Test func anImportWithAKeyGivenTwiceIsRefused() throws {
        let cli = try CLIHarness()
        try cli.initVault()
        let id = try cli.add(CLIHarness.glassesArguments)
        let export = try cli.run(["export", "--format", "json", "--out", "-"]).stdout
        // The note given twice inside the first prescription.
        let twice = export.replacingOccurrences(
            of: "\"note\" : \"Varifocal lenses preferred\"",
            with: "\"note\" : \"Varifocal lenses preferred\", \"note\" : \"Single vision\"")
        try #require(twice != export, "the export's note is where the test looks for it: \(export)")
        #expect(try cli.run(["remove", id, "--yes"]).status == 0)
        let path = try cli.write(twice, to: "twice.json")
        let r = try cli.run(["import", path])
        #expect(r.status == 65, "\(r)")
        #expect(r.stderr.contains("prescriptions[0]") && r.stderr.contains("the key \"note\" appears twice"), "\(r)")
        #expect(try cli.run(["list", "--format", "json"]).stdout.contains("Quintessa") == false)

        // A FHIR Bundle whose prescription has two statuses: the filter and the record disagreed.
        let bundle = """
            {"resourceType": "Bundle", "type": "collection", "entry": [
              {"resource": {"resourceType": "VisionPrescription", "id": "a1", "status": "entered-in-error",
                "created": "2026-03-01", "dateWritten": "2026-03-01",
                "patient": {"display": "Ann Wu"}, "prescriber": {"display": "Dr Lee"},
                "lensSpecification": [{"product": {"text": "lens"}, "eye": "right", "sphere": -1.0},
                                      {"product": {"text": "lens"}, "eye": "left", "sphere": -1.0}],
                "status": "active"}}]}
            """
        let fhirPath = try cli.write(bundle, to: "bundle.json")
        let f = try cli.run(["import", fhirPath])
        #expect(f.status == 65, "\(f)")
        #expect(f.stderr.contains("entry[0]") && f.stderr.contains("the key \"status\" appears twice"), "\(f)")
    }

    /// A filled form whose appearance stream lacks zlib's checksum is what `qpdf --check` calls
    /// no error: it is attached, and the warning is a note on stderr, not "damaged".
    @Test func aPDFQpdfOnlyWarnsAboutIsKeptWithANote() throws {
        let cli = try CLIHarness()
        try cli.initVault()
        let id = try cli.add(CLIHarness.glassesArguments)
        let pdf = Repository.root.appendingPathComponent(
            "Fixtures/attachments/valid/pdf-form-filled-stream-without-checksum.pdf"
        ).path
        let r = try cli.run(["attach", id, pdf])
        #expect(r.status == 0, "\(r)")
        #expect(r.stderr.contains("rxvault: note: qpdf warned while decoding a stream it read whole"), "\(r)")
        #expect(r.stderr.contains("input stream is complete but output may still be valid"), "\(r)")
        #expect(try cli.run(["check", "--read-data"]).status == 0)
    }
}
