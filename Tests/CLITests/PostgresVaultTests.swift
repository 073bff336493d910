import Foundation
import RxStore
import RxTestSupport
import Testing

/// The vault in PostgreSQL (issue 25) through the binary, against a real server
/// (RxTestSupport's `PostgresServer`: a throwaway cluster, one per test run): every command on a
/// database as on a file, `copy` both ways, backups, what the database shows, tampering, several
/// writers at once, and the messages for what a user gets wrong.
@Suite struct PostgresVaultTests {
    /// A harness whose vault is a new database (made by copying a fast-KDF vault file into it,
    /// which also proves `copy`), with the password in PGPASSWORD as a user's script would have it.
    ///
    /// `today` nil runs on the real clock: a server on a database appends its reads dated by it,
    /// and the owner's review refuses a client's entry dated more than a day ahead of its own
    /// clock, which RXVAULT_TODAY would keep in the past.
    static func databaseVault(today: String? = "2026-06-15") throws -> (CLIHarness, PostgresDatabaseInfo) {
        let server = try PostgresServer.shared()
        let database = try server.createDatabase()
        let cli = try CLIHarness(today: today)
        for (key, value) in database.environment { cli.environment[key] = value }
        try cli.initVault()
        let copied = try cli.run(["copy", cli.vaultPath, database.url])
        #expect(copied.status == 0, "\(copied)")
        cli.environment["RXVAULT_PATH"] = database.url
        return (cli, database)
    }

    @Test func everyCommandWorksOnADatabaseAsOnAFile() throws {
        let (cli, database) = try Self.databaseVault()
        let id = try cli.add(CLIHarness.glassesArguments)
        _ = try cli.add(CLIHarness.contactsArguments)
        let list = try cli.run(["list"])
        #expect(list.status == 0 && list.stdout.contains("Quintessa Marlowe"), "\(list)")
        let show = try cli.run(["show", id])
        #expect(show.status == 0 && show.stdout.contains("-2.25"), "\(show)")
        #expect(try cli.run(["edit", id, "--note", "second pair"]).status == 0)
        #expect(try cli.run(["history", id]).stdout.contains("2"))
        let query = try cli.run(["query", "--expiring-within", "60d", "--format", "json"])
        #expect(query.status == 0, "\(query)")
        let png = storedPNG(width: 8, rows: Array(repeating: Array(0..<8), count: 8))
        try Data(png).write(to: URL(fileURLWithPath: cli.path("scan.png")))
        let attach = try cli.run(["attach", id, cli.path("scan.png")])
        #expect(attach.status == 0, "\(attach)")
        let extracted = try cli.run(["extract", id, "scan.png", "--out", cli.path("out.png")])
        #expect(extracted.status == 0, "\(extracted)")
        #expect(FileManager.default.contents(atPath: cli.path("out.png")) == Data(png))
        // Unlock once: the agent reaches the database with the PG* variables it is given.
        let unlock = try cli.run(["unlock"])
        #expect(unlock.status == 0, "\(unlock)")
        let unlocked = try cli.run(["list", "--no-input"], environment: ["RXVAULT_PASSPHRASE_FILE": nil])
        #expect(unlocked.status == 0 && unlocked.stdout.contains("Quintessa"), "\(unlocked)")
        #expect(try cli.run(["lock"]).status == 0)
        let check = try cli.run(["check", "--read-data"])
        #expect(check.status == 0, "\(check)")
        // Grants: a client reads what it was granted, from the database, with its identity only.
        let recipient = try cli.ageKeygen("app.key")
        #expect(try cli.run(["client", "add", "optician", "--recipient", recipient]).status == 0)
        #expect(try cli.run(["grant", "optician", id]).status == 0)
        let asClient = try cli.run(
            ["--identity", cli.path("app.key"), "list"], environment: ["RXVAULT_PASSPHRASE_FILE": nil])
        #expect(asClient.status == 0 && asClient.stdout.contains(String(id.prefix(8))), "\(asClient)")
        #expect(try cli.run(["revoke", "optician", id]).status == 0)
        let revoked = try cli.run(
            ["--identity", cli.path("app.key"), "show", id], environment: ["RXVAULT_PASSPHRASE_FILE": nil])
        #expect(revoked.status == 67, "\(revoked)")
        // Nothing in the database is in the clear: pg_dump shows no name, date or lens value.
        let dump = try PostgresServer.shared().dump(database: database.database)
        for secret in ["Quintessa", "Marlowe", "Fairweather", "2026-03-01", "-2.25", "Zylofocus", "optician", recipient]
        {
            #expect(!dump.contains(secret), "pg_dump shows \(secret)")
        }
        #expect(dump.contains("prescription_version"))
    }

    @Test func copyBothWaysAndBackupsKeepTheSameVault() throws {
        let (cli, database) = try Self.databaseVault()
        let id = try cli.add(CLIHarness.glassesArguments)
        let before = try cli.run(["export", "--format", "json", "--out", "-"])
        #expect(before.status == 0, "\(before)")
        // Back to a file: the same export, and check passes on it.
        let back = cli.path("back.rxv")
        let copied = try cli.run(["copy", database.url, back, "--format", "json"])
        #expect(copied.status == 0, "\(copied)")
        #expect(try cli.json(copied.stdout)["prescriptions"] as? Int == 1)
        #expect(try cli.run(["check", "--vault", back]).status == 0)
        let fromFile = try cli.run(["export", "--format", "json", "--out", "-", "--vault", back])
        #expect(fromFile.stdout == before.stdout)
        // A backup of the database restores to a file that is the same vault.
        let backup = try cli.run(["backup", cli.path("b.age")])
        #expect(backup.status == 0, "\(backup)")
        #expect(try cli.run(["backup", "verify", cli.path("b.age")]).status == 0)
        let restored = try cli.run(["restore", cli.path("b.age"), "--to", cli.path("restored.rxv")])
        #expect(restored.status == 0, "\(restored)")
        let fromBackup = try cli.run(["show", id, "--vault", cli.path("restored.rxv")])
        #expect(fromBackup.status == 0 && fromBackup.stdout.contains("Quintessa"), "\(fromBackup)")
        // The target is never replaced: a file that exists, a database that holds a vault.
        #expect(try cli.run(["copy", database.url, back]).status == 73)
        #expect(try cli.run(["copy", back, database.url]).status == 73)
    }

    @Test func threeWritersAtOnceLoseNothing() throws {
        let (cli, _) = try Self.databaseVault()
        let failures = try concurrentMap(Array(0..<3), width: 3) { writer -> [String] in
            var failed: [String] = []
            for n in 0..<5 {
                let r = try cli.run(
                    [
                        "add", "glasses", "--patient", "Writer \(writer)", "--prescriber", "Dr Lee", "--issued",
                        "2026-0\(n + 1)-01",
                        "--expires", "2028-01-01", "--od", "-1.00", "--os", "-1.25", "--new-patient"
                    ])
                if r.status != 0 { failed.append("\(r)") }
            }
            return failed
        }
        #expect(failures.flatMap { $0 }.isEmpty, "\(failures)")
        let list = try cli.run(["list", "--format", "ndjson"])
        #expect(list.stdout.split(separator: "\n").count == 15, "\(list)")
        #expect(try cli.run(["check"]).status == 0)
    }

    @Test func rowsDeletedOrPutBackInTheDatabaseAreFound() throws {
        let (cli, database) = try Self.databaseVault()
        let id = try cli.add(CLIHarness.glassesArguments)
        _ = try cli.add(CLIHarness.contactsArguments)
        #expect(try cli.run(["check"]).status == 0)
        let server = try PostgresServer.shared()
        // An older version put back as the newest: the edit's row is deleted.
        #expect(try cli.run(["edit", id, "--note", "changed"]).status == 0)
        _ = try server.psql("DELETE FROM prescription_version WHERE version = 2", database: database.database)
        let afterDelete = try cli.run(["check"])
        #expect(afterDelete.status == 76, "\(afterDelete)")
        let show = try cli.run(["show", id])
        #expect(show.status == 76, "\(show)")
    }

    /// A vault file whose rows point at missing ones (a prescription row deleted under its
    /// versions) is not copied: the database would refuse the rows as they are, and a copy that
    /// made the missing row again would hide what `check` finds in the file. Found by the tamper
    /// matrix run against PostgreSQL (Tests/Reliability).
    @Test func aDamagedVaultIsNotCopied() throws {
        let server = try PostgresServer.shared()
        let database = try server.createDatabase()
        let cli = try CLIHarness()
        for (key, value) in database.environment { cli.environment[key] = value }
        try cli.initVault()
        let id = try cli.add(CLIHarness.glassesArguments)
        let raw = try Database(path: cli.vaultPath)
        try raw.execute("PRAGMA foreign_keys = OFF")
        try raw.execute("DELETE FROM prescription WHERE id LIKE '\(id)%'")
        #expect(try cli.run(["check"]).status == 76)
        let copied = try cli.run(["copy", cli.vaultPath, database.url])
        #expect(copied.status == 76 && copied.stderr.contains("nothing was copied"), "\(copied)")
        #expect(
            try server.psql(
                "SELECT count(*) FROM information_schema.tables WHERE table_schema = 'public'",
                database: database.database) == "0\n")
    }

    @Test func whatAUserGetsWrongIsSaidAndChangesNothing() throws {
        let server = try PostgresServer.shared()
        let database = try server.createDatabase()
        let cli = try CLIHarness()
        for (key, value) in database.environment { cli.environment[key] = value }
        // A password in the URL is refused before anything is done (it would be on argv).
        let withPassword = database.url.replacingOccurrences(of: "rx@", with: "rx:secret@")
        let refused = try cli.run(["init", "--vault", withPassword])
        #expect(refused.status == 64 && refused.stderr.contains("PGPASSWORD"), "\(refused)")
        #expect(!refused.stderr.contains("secret"))
        // A password with a "/" or "?" typed unescaped would cut the URL anywhere: refused, and
        // no part of it is ever repeated.
        for typed in [
            "postgres://rx:pa/ss@db.example/rx", "postgres://rx:12/x@db.example/rx", "postgres://rx:p?ss@db/rx"
        ] {
            let cut = try cli.run(["list", "--vault", typed])
            #expect(cut.status == 64, "\(typed): \(cut)")
            for part in ["pa/ss", "12/x", "ss@db", "p?ss"] { #expect(!cut.stderr.contains(part), "\(typed): \(cut)") }
        }
        // A URL is never a file path: no folder named "postgres:" appears.
        #expect(!FileManager.default.fileExists(atPath: cli.path("postgres:")))
        // No vault in an empty database: 66, and the hint.
        let none = try cli.run(["list", "--vault", database.url])
        #expect(none.status == 66, "\(none)")
        // A wrong password: 69 (unavailable), the password not in the message.
        let wrong = try cli.run(["list", "--vault", database.url], environment: ["PGPASSWORD": "not-the-password"])
        #expect(wrong.status == 69 && wrong.stderr.contains("refused the login"), "\(wrong)")
        #expect(!wrong.stderr.contains("not-the-password"))
        // No server at that port: 69.
        let nowhere = try cli.run(["list", "--vault", "postgres://rx@127.0.0.1:\(freeLoopbackPort())/x"])
        #expect(nowhere.status == 69, "\(nowhere)")
        // init on the database, then again: 73, the first vault untouched.
        let made = try cli.run(["init", "--kdf", "interactive", "--vault", database.url])
        #expect(made.status == 0 && made.stdout.contains("created postgres://rx@127.0.0.1"), "\(made)")
        let again = try cli.run(["init", "--kdf", "interactive", "--vault", database.url])
        #expect(again.status == 73, "\(again)")
        #expect(try cli.run(["check", "--vault", database.url]).status == 0)
        // A database that holds other tables is not taken.
        let other = try server.createDatabase()
        _ = try server.psql("CREATE TABLE orders (id int)", database: other.database)
        let taken = try cli.run(["init", "--kdf", "interactive", "--vault", other.url])
        #expect(taken.status != 0 && taken.stderr.contains("table"), "\(taken)")
        #expect(
            try server.psql(
                "SELECT count(*) FROM information_schema.tables WHERE table_schema = 'public'", database: other.database
            ) == "1\n")
    }

    /// Two `rxvault serve` on one database: a revoke made with the CLI counts at both at their
    /// next request, and the reads both served are in the one audit chain, which `check` verifies.
    @Test func twoServersOnOneDatabaseServeOneVault() throws {
        let (cli, _) = try Self.databaseVault(today: nil)
        let id = try cli.add(CLIHarness.glassesArguments)
        let recipient = try cli.ageKeygen("shop.key")
        #expect(try cli.run(["client", "add", "shop", "--recipient", recipient]).status == 0)
        #expect(try cli.run(["grant", "shop", id]).status == 0)
        let a = try ServerProcess(cli)
        // Its own agent folder: each server unlocks the vault for its own machine's commands.
        let runtimeB = try TemporaryDirectory(prefix: "rxr", short: true, permissions: 0o700)
        let b = try ServerProcess(
            cli, arguments: ["--socket", cli.path("b.sock")], environment: ["XDG_RUNTIME_DIR": runtimeB.path],
            socketName: "b.sock")
        // One token for both: behind one balancer a client's requests go to either instance, and
        // each accepts what the other issued (the vault's API-session key seals it).
        let token = try a.token(identity: cli.path("shop.key"))
        let tokens = [token, token]
        for _ in 0..<3 {
            for (server, token) in zip([a, b], tokens) {
                let search = try server.curl("GET", "/VisionPrescription", token: token)
                #expect(search.status == 200 && search.json["total"] as? Int == 1, "\(search.body)")
            }
        }
        #expect(try cli.run(["revoke", "shop", id]).status == 0)
        for (server, token) in zip([a, b], tokens) {
            let search = try server.curl("GET", "/VisionPrescription", token: token)
            #expect(search.status == 200 && search.json["total"] as? Int == 0, "\(search.body)")
        }
        #expect(a.stop() == 0)
        #expect(b.stop() == 0)
        let log = try cli.json(try cli.run(["log", "--format", "json"]).stdout)
        let entries = try #require(log["entries"] as? [[String: Any]])
        // Six searches that found the prescription, three at each server; reads in a row are
        // written as one entry "(N times)". The searches after the revoke found nothing to log.
        let served = entries.filter { ($0["action"] as? String) == "read" && ($0["client"] as? String) == "shop" }
        #expect(served.map(Self.timesRead).reduce(0, +) == 6, "\(entries)")
        let sequences = entries.compactMap { $0["seq"] as? Int }
        #expect(sequences == Array(1...sequences.count), "one chain, no gap, no fork: \(sequences)")
        let check = try cli.run(["check"])
        #expect(check.status == 0, "\(check)")
    }

    /// PostgreSQL stopped and started under a running `serve`: 503 while it is down, served again
    /// when it is back, and the reads answered just before the stop (queued for the next append,
    /// which fails while the server is down) are all in the log after: none lost.
    @Test func aServerReconnectsAfterPostgreSQLRestarts() throws {
        let own = try PostgresServer.start()
        let database = try own.createDatabase()
        let cli = try CLIHarness(today: nil)
        for (key, value) in database.environment { cli.environment[key] = value }
        try cli.initVault()
        #expect(try cli.run(["copy", cli.vaultPath, database.url]).status == 0)
        cli.environment["RXVAULT_PATH"] = database.url
        let id = try cli.add(CLIHarness.glassesArguments)
        let recipient = try cli.ageKeygen("shop.key")
        #expect(try cli.run(["client", "add", "shop", "--recipient", recipient]).status == 0)
        #expect(try cli.run(["grant", "shop", id]).status == 0)
        let server = try ServerProcess(cli)
        let token = try server.token(identity: cli.path("shop.key"))
        for _ in 0..<5 { #expect(try server.curl("GET", "/VisionPrescription", token: token).status == 200) }
        try own.stopServer()
        let down = try server.curl("GET", "/VisionPrescription", token: token)
        #expect(down.status == 503, "\(down.status) \(down.body)")
        // Long enough for the append of the reads above to be tried, and fail, while it is down.
        Thread.sleep(forTimeInterval: 2.5)
        try own.startServer()
        let back = try server.curl("GET", "/VisionPrescription", token: token)
        #expect(back.status == 200 && back.json["total"] as? Int == 1, "\(back.status) \(back.body) \(server.stderr)")
        #expect(server.stop() == 0, "\(server.stderr)")
        let log = try cli.json(try cli.run(["log", "--format", "json"]).stdout)
        let reads = try #require(log["entries"] as? [[String: Any]]).filter {
            ($0["actor"] as? String) == "shop" && ($0["action"] as? String) == "read"
        }
        #expect(reads.map(Self.timesRead).reduce(0, +) == 6, "\(reads) \(server.stderr)")
    }

    /// TLS to the database as libpq's `sslmode` and `sslrootcert` ask, against a server that
    /// takes TLS logins only (so a command that works went over TLS) with a certificate for
    /// `localhost` from an authority of its own: verify-full with that authority works (copy,
    /// add, check); verify-full to 127.0.0.1, a name the certificate lacks, is refused, and
    /// verify-ca there works; another authority is refused; require checks nothing and works;
    /// disable is turned away by the server. Every refusal exits 69 and changes nothing.
    @Test func tlsIsVerifiedAsSSLModeAsks() throws {
        let own = try PostgresServer.start(tls: true)
        let database = try own.createDatabase()
        let cli = try CLIHarness()
        for (key, value) in database.environment { cli.environment[key] = value }
        try cli.initVault()
        func url(host: String, _ parameters: String) -> String {
            "postgres://rx@\(host):\(database.port)/\(database.database)?\(parameters)"
        }
        let verified = url(host: "localhost", "sslmode=verify-full&sslrootcert=\(own.certificateAuthority)")
        let copied = try cli.run(["copy", cli.vaultPath, verified])
        #expect(copied.status == 0, "\(copied)")
        cli.environment["RXVAULT_PATH"] = verified
        let id = try cli.add(CLIHarness.glassesArguments)
        #expect(try cli.run(["check"]).status == 0)

        let wrongName = try cli.run([
            "show", id, "--vault", url(host: "127.0.0.1", "sslmode=verify-full&sslrootcert=\(own.certificateAuthority)")
        ])
        #expect(wrongName.status == 69 && wrongName.stderr.contains("TLS"), "\(wrongName)")
        let authorityOnly = try cli.run([
            "show", id, "--vault", url(host: "127.0.0.1", "sslmode=verify-ca&sslrootcert=\(own.certificateAuthority)")
        ])
        #expect(authorityOnly.status == 0, "\(authorityOnly)")
        let stranger = try cli.run([
            "show", id, "--vault", url(host: "localhost", "sslmode=verify-full&sslrootcert=\(own.unrelatedAuthority)")
        ])
        #expect(stranger.status == 69 && stranger.stderr.contains("TLS"), "\(stranger)")
        let unchecked = try cli.run(["show", id, "--vault", url(host: "127.0.0.1", "sslmode=require")])
        #expect(unchecked.status == 0, "\(unchecked)")
        let plain = try cli.run(["show", id, "--vault", url(host: "127.0.0.1", "sslmode=disable")])
        #expect(plain.status == 69, "\(plain)")
        // verify-full without a root certificate is refused before any connection.
        let noRoot = try cli.run(["show", id, "--vault", url(host: "localhost", "sslmode=verify-full")])
        #expect(noRoot.status == 64 && noRoot.stderr.contains("sslrootcert"), "\(noRoot)")
        // Nothing the refusals did changed the vault.
        let listed = try cli.json(try cli.run(["list", "--format", "json"]).stdout)
        #expect((listed["prescriptions"] as? [Any])?.count == 1)
        #expect(try cli.run(["check"]).status == 0)
    }

    /// The tamper matrix's kinds of change, made in the database: a byte flipped in a record, an
    /// attachment chunk or an audit entry; rows deleted; the state root, the manifest or the
    /// audit log put back from before a later write. Each on a fresh database copied from one
    /// vault; `check` exits 76 for every one (and 0 on the untouched copy), and the command that
    /// reads what was changed exits 76 where the file's matrix (Tests/Reliability) asks it of the
    /// file.
    @Test func theTamperMatrixHoldsInTheDatabase() throws {
        let server = try PostgresServer.shared()
        let cli = try CLIHarness()
        try cli.initVault()
        let a = try cli.add(CLIHarness.glassesArguments)
        _ = try cli.add(CLIHarness.contactsArguments)
        #expect(try cli.run(["attach", a, AttachmentTests.photo, "--name", "scan.png"]).status == 0)
        let recipient = try cli.ageKeygen("shop.key")
        #expect(try cli.run(["client", "add", "shop", "--recipient", recipient]).status == 0)
        #expect(try cli.run(["grant", "shop", a]).status == 0)
        // What a later write replaces, kept aside in the database by the case's first step.
        let before =
            "CREATE TABLE old_state AS SELECT * FROM vault_state; CREATE TABLE old_manifest AS SELECT * FROM manifest; CREATE TABLE old_audit AS SELECT * FROM audit_entry; CREATE TABLE old_head AS SELECT * FROM audit_head;"
        let flip = { (table: String, column: String, row: String) in
            "UPDATE \(table) SET \(column) = set_byte(\(column), length(\(column)) / 2, get_byte(\(column), length(\(column)) / 2) # 1) WHERE \(row);"
        }
        let cases: [(String, String, [String])] = [
            ("untouched", "", []),
            ("record content flipped", flip("prescription_version", "content", "version = 1"), []),
            ("record MAC flipped", flip("prescription_version", "mac", "version = 1"), []),
            (
                "attachment chunk flipped", flip("attachment_chunk", "data", "seq = 0"),
                ["extract", a, "scan.png", "--out", "-"]
            ),
            ("client row flipped", flip("client", "info", "true"), ["client", "list"]),
            ("audit entry flipped", flip("audit_entry", "entry", "seq = 1"), ["log"]),
            ("grant row deleted", "DELETE FROM access_grant;", ["show", a]),
            ("audit entry deleted", "DELETE FROM audit_entry WHERE seq = 2;", ["log"]),
            ("prescription deleted", "DELETE FROM prescription WHERE id LIKE '\(a)%';", []),
            (
                "state root put back", "DELETE FROM vault_state; INSERT INTO vault_state SELECT * FROM old_state;",
                ["show", a]
            ),
            (
                "manifest put back", "DELETE FROM manifest; INSERT INTO manifest SELECT * FROM old_manifest;",
                ["show", a]
            ),
            (
                "audit log put back",
                "DELETE FROM audit_entry; INSERT INTO audit_entry SELECT * FROM old_audit; DELETE FROM audit_head; INSERT INTO audit_head SELECT * FROM old_head;",
                ["log"]
            )
        ]
        for (name, tamper, reader) in cases {
            let database = try server.createDatabase()
            // Each case's copy is written on a computer of its own (its own state folder): on one
            // computer, the second copy of the same vault written apart would be a rollback of the
            // first (format 8), which is not what this matrix is about.
            let home = cli.path("home-\(database.database)")
            try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
            var environment: [String: String?] = ["RXVAULT_PATH": database.url, "HOME": home]
            for (key, value) in database.environment { environment[key] = value }
            #expect(try cli.run(["copy", cli.vaultPath, database.url], environment: environment).status == 0)
            _ = try server.psql(before, database: database.database)
            // A later write, so that what was kept aside is older than the vault now.
            #expect(try cli.run(["revoke", "shop", a], environment: environment).status == 0)
            #expect(try cli.run(["grant", "shop", a], environment: environment).status == 0)
            if !tamper.isEmpty { _ = try server.psql(tamper, database: database.database) }
            let check = try cli.run(["check", "--read-data"], environment: environment)
            #expect(check.status == (tamper.isEmpty ? 0 : 76), "\(name): \(check)")
            if !reader.isEmpty {
                let read = try cli.run(reader, environment: environment)
                #expect(read.status == 76, "\(name): \(reader.joined(separator: " ")): \(read)")
            }
        }
    }

    /// The password from ~/.pgpass (and PGPASSFILE), as libpq reads it: used when only its owner
    /// can read it, ignored (so the login fails, 69) when others can.
    @Test func thePasswordComesFromThePasswordFileWhenItIsPrivate() throws {
        let (cli, database) = try Self.databaseVault()
        let line = "127.0.0.1:\(database.port):\(database.database):\(database.user):\(database.password)\n"
        let file = try cli.write("# host:port:db:user:password\n" + line, to: ".pgpass")
        let fromHome = try cli.run(["list"], environment: ["PGPASSWORD": nil])
        #expect(fromHome.status == 0, "\(fromHome)")
        let elsewhere = try cli.write(line, to: "other-pgpass")
        let named = try cli.run(["list"], environment: ["PGPASSWORD": nil, "PGPASSFILE": elsewhere])
        #expect(named.status == 0, "\(named)")
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: file)
        let readable = try cli.run(["list"], environment: ["PGPASSWORD": nil])
        #expect(readable.status == 69, "\(readable)")
        #expect(!readable.stderr.contains(database.password))
    }

    /// How many reads a log entry stands for: reads in a row are written as one, "... (N times)".
    static func timesRead(_ entry: [String: Any]) -> Int {
        let detail = entry["detail"] as? String ?? ""
        guard let open = detail.range(of: "("), let times = detail[open.upperBound...].split(separator: " ").first
        else { return 1 }
        return Int(times) ?? 1
    }

    /// The SQL docs/deploy.md gives for `serve`'s role, as written there.
    static func serveRoleSQL() throws -> String {
        let page = try String(
            contentsOf: Repository.root.appendingPathComponent("docs/deploy.md"), encoding: .utf8)
        let blocks = page.components(separatedBy: "```sql\n").dropFirst().map { $0.components(separatedBy: "```")[0] }
        return try #require(blocks.first { $0.contains("CREATE ROLE rx_serve") }, "docs/deploy.md lost the serve role")
    }

    /// `serve` under the role docs/deploy.md sets up for it, with that page's SQL run as written:
    /// a client reads what it was granted and asks for more; every read and the request land in
    /// the one chain as appended entries while the state root stays where the owner left it;
    /// `check` passes and counts them as waiting, `requests` shows the request, and `sweep`
    /// countersigns them all. The role itself is refused every other write by PostgreSQL.
    @Test func serveRunsUnderARoleThatMayOnlyReadAndAppend() throws {
        let server = try PostgresServer.shared()
        let (cli, database) = try Self.databaseVault(today: nil)
        let id = try cli.add(CLIHarness.glassesArguments)
        _ = try cli.add(CLIHarness.contactsArguments)
        let recipient = try cli.ageKeygen("shop.key")
        #expect(try cli.run(["client", "add", "shop", "--recipient", recipient]).status == 0)
        #expect(try cli.run(["grant", "shop", id]).status == 0)
        // Roles belong to the cluster, which the tests share: this one's name is its own.
        let role = "rx_serve_\(database.database.suffix(8))"
        let password = "serve \(UUID().uuidString)"
        let sql = try Self.serveRoleSQL().replacingOccurrences(of: "rx_serve", with: role)
            .replacingOccurrences(of: "another long random password", with: password)
        _ = try server.psql(sql, database: database.database)
        let counter = "SELECT write_counter FROM vault_state"
        let before = try server.psql(counter, database: database.database)

        let served = try ServerProcess(
            cli,
            environment: [
                "RXVAULT_PATH": "postgres://\(role)@\(database.host):\(database.port)/\(database.database)",
                "PGPASSWORD": password
            ])
        let token = try served.token(identity: cli.path("shop.key"))
        for _ in 0..<3 {
            let search = try served.curl("GET", "/VisionPrescription", token: token)
            #expect(search.status == 200 && search.json["total"] as? Int == 1, "\(search.body) \(served.stderr)")
        }
        let asked = try served.curl(
            "POST", "/access-requests", token: token, body: #"{"reason": "ordering contact lenses"}"#)
        #expect(asked.status == 202, "\(asked.body) \(served.stderr)")
        #expect(served.stop() == 0, "\(served.stderr)")
        #expect(!served.stderr.contains("permission denied"), "\(served.stderr)")

        // Appended, not written by the owner: the state root has not moved.
        #expect(try server.psql(counter, database: database.database) == before)
        let waiting = try cli.run(["check"])
        #expect(
            waiting.status == 0 && (waiting.stdout + waiting.stderr).contains("await the owner's next write"),
            "\(waiting)")
        let requests = try cli.run(["requests"])
        #expect(requests.status == 0 && requests.stdout.contains("ordering contact lenses"), "\(requests)")
        let log = try cli.json(try cli.run(["log", "--format", "json"]).stdout)
        let entries = try #require(log["entries"] as? [[String: Any]])
        // The three searches (reads in a row are one entry "(N times)") and the request, each verified.
        let shop = entries.filter { ($0["actor"] as? String) == "shop" }
        let reads = shop.filter { ($0["action"] as? String) == "read" }
        #expect(reads.map(Self.timesRead).reduce(0, +) == 3, "\(entries)")
        #expect(shop.filter { ($0["action"] as? String) == "access-requested" }.count == 1, "\(entries)")
        #expect(
            shop.allSatisfy { $0["verified"] as? Bool == true && $0["countersigned"] as? Bool == false }, "\(entries)")

        // PostgreSQL refuses the role anything but reading and appending.
        for write in [
            "UPDATE vault_state SET write_counter = write_counter + 1",
            "DELETE FROM audit_entry",
            "UPDATE audit_entry SET mac = NULL",
            "DELETE FROM access_grant",
            "INSERT INTO prescription (id) VALUES (repeat('a', 32))"
        ] {
            #expect(throws: PostgresServerError.self, "\(write)") {
                try server.psql("SET ROLE \(role); \(write)", database: database.database)
            }
        }

        let swept = try cli.run(["sweep", "--format", "json"])
        #expect(swept.status == 0, "\(swept)")
        #expect(try cli.json(swept.stdout)["countersigned"] as? Int == shop.count, "\(swept)")
        #expect(try server.psql(counter, database: database.database) != before)
        let clean = try cli.run(["check"])
        #expect(clean.status == 0 && !(clean.stdout + clean.stderr).contains("await"), "\(clean)")
        #expect(try cli.run(["check", "--read-data"]).status == 0)
    }
}
