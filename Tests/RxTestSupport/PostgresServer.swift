import Foundation

/// Where a test's rxvault finds one database of a `PostgresServer`, as a user would give it.
public struct PostgresDatabaseInfo: Sendable {
    public let host: String
    public let port: Int
    public let user: String
    public let database: String
    public let password: String

    /// No password in it: a URL ends up in shell history, `ps` and logs, so rxvault takes the
    /// password from PGPASSWORD (`environment`), and the tests prove that path.
    public var url: String { "postgres://\(user)@\(host):\(port)/\(database)" }

    /// What to add to the rxvault process's environment for it to log in.
    public var environment: [String: String] { ["PGPASSWORD": password] }
}

/// What failed while starting, stopping or using the test PostgreSQL server, with what the
/// program printed and the end of the server's log: a test that needs PostgreSQL fails with
/// this (it never skips), and the message says why.
public struct PostgresServerError: Error, CustomStringConvertible {
    public let description: String

    init(_ what: String, output: CommandResult? = nil, log: String? = nil) {
        var text = "PostgreSQL test server: \(what)"
        if let output { text += "\n--- \(output.description)" }
        if let log { text += "\n--- end of \(log)\n" + Self.tail(of: log) }
        description = text
    }

    /// The last lines of the server's log: why it would not start (a port taken, a bad setting).
    static func tail(of path: String, lines: Int = 40) -> String {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return "(no log at \(path))" }
        return text.split(separator: "\n", omittingEmptySubsequences: false).suffix(lines).joined(separator: "\n")
    }
}

/// A real, throwaway PostgreSQL cluster for the tests: its own folder under /tmp (data, log,
/// Unix socket), listening on 127.0.0.1 only, at a free port, durability off (fsync,
/// synchronous_commit, full_page_writes: nothing in it outlives the test process).
///
/// TCP logins need a password (SCRAM), never `trust`, so the tests prove rxvault's password
/// handling; the superuser `postgres` logs in over the cluster's own Unix socket only (`psql`).
/// Tests connect as `rx`, a role with a random password that may create databases
/// (`createDatabase`).
///
/// PostgreSQL refuses to run as root: when the tests run as root, every PostgreSQL program runs
/// as the `postgres` user (`runuser`), which owns the folder; otherwise as the tests' user.
///
/// Nothing outlives the test process: at its exit (or a private cluster's release) the server is
/// stopped and the folder removed, and a process that crashed or was killed (kill -9 included)
/// has it done by a watcher of its own in the background (`ClusterReaper`).
public final class PostgresServer: Sendable {
    public let host = "127.0.0.1"
    public let port: Int
    /// The login role tests connect as; it may create databases.
    public let user = "rx"
    /// `user`'s password: random, per cluster.
    public let password: String
    /// The superuser, reachable over the Unix socket only.
    public let superuser = "postgres"
    /// The cluster's folder: `data/`, `server.log` and the Unix socket.
    public let folder: String
    public var dataDirectory: String { folder + "/data" }
    public var logFile: String { folder + "/server.log" }

    /// The folder holding the cluster's initdb, pg_ctl, postgres and psql (a test's own psql
    /// client comes from here too: /usr/bin/psql is Debian's wrapper, which picks a version).
    public let binaries: String
    /// What runs a PostgreSQL program as the user the server runs as (`runuser -u postgres --`
    /// for root, nothing otherwise).
    let runAs: [String]
    private let reaper: ClusterReaper

    // MARK: - Starting

    private static let sharedCluster = Locked<Result<PostgresServer, any Error>?>(nil)

    /// The test process's one cluster, started by the first test that needs it (the others wait
    /// for it) and stopped and removed when the process exits. A cluster that failed to start
    /// is not tried again: every test that asks gets the same error, at once.
    ///
    /// Tests share it, running in parallel: each makes its own database (`createDatabase`). A
    /// test that stops or restarts PostgreSQL uses a cluster of its own (`start()`) instead.
    public static func shared() throws -> PostgresServer {
        try sharedCluster.withLock { cluster in
            if cluster == nil {
                cluster = Result { try start() }
                // Synchronously at exit, so `swift test` leaves no server behind; the reaper
                // would do it anyway, a moment after the process is gone.
                atexit { PostgresServer.stopShared() }
            }
            return try cluster!.get()
        }
    }

    private static func stopShared() {
        if case .success(let server)? = sharedCluster.withLock({ $0 }) { server.reaper.reap() }
    }

    /// A cluster of its own (about two seconds), stopped and removed when released: for a test
    /// that stops or restarts PostgreSQL, which would break every other test on `shared()`.
    ///
    /// `tls`: the server offers TLS only (a TCP login without it is rejected), with a
    /// certificate for `localhost` (and no other name) from a certificate authority of the
    /// cluster's own (`certificateAuthority`; `unrelatedAuthority` is another, which signed
    /// nothing here).
    public static func start(tls: Bool = false) throws -> PostgresServer {
        let binaries = try findBinaries()
        let owner = try serverUser()
        let runAs = owner.map { [$0.runuser, "-u", "postgres", "--"] } ?? []
        // Before the folder: a crash of the test process from then on leaves nothing behind.
        let reaper = try ClusterReaper(pgCtl: runAs + [binaries + "/pg_ctl"])
        // Under /tmp, not $TMPDIR, as `TemporaryDirectory(short:)`: a Unix socket's path holds at
        // most 107 bytes. Only its owner may enter it (the socket, the superuser's way in, is there).
        // 64 random bits: no other folder has the name, so the reaper is told it before it exists.
        let random = UUID().uuidString.replacingOccurrences(of: "-", with: "").prefix(16).lowercased()
        let folder = "/tmp/rxvault-pg-\(random)"
        try reaper.watch(folder)
        do {
            try FileManager.default.createDirectory(
                atPath: folder, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        } catch {
            throw PostgresServerError("could not make the cluster's folder \(folder): \(error)")
        }
        if let owner, chown(folder, owner.uid, owner.gid) != 0 {
            let reason = String(cString: strerror(errno))
            try? FileManager.default.removeItem(atPath: folder)
            throw PostgresServerError("could not give \(folder) to the postgres user: \(reason)")
        }
        let run = Runner(runAs: runAs, folder: folder)

        let initdb = try run(
            [
                binaries + "/initdb", "-D", folder + "/data", "-U", "postgres", "--auth-local=trust",
                "--auth-host=scram-sha-256", "--no-locale", "--encoding=UTF8", "--no-sync"
            ])
        guard initdb.status == 0 else { throw PostgresServerError("initdb failed", output: initdb) }
        // Only these two ways in: the superuser over the cluster's own socket (a folder only its
        // owner can enter), and any role over TCP with its password. initdb's lines are replaced.
        if tls { try makeCertificates(in: folder, owner: owner) }
        try write(
            """
            # rxvault tests (Tests/RxTestSupport/PostgresServer.swift): no trust over TCP.
            local all postgres trust

            """
                + (tls
                    ? "hostssl all all 127.0.0.1/32 scram-sha-256\nhostnossl all all 127.0.0.1/32 reject\n"
                    : "host all all 127.0.0.1/32 scram-sha-256\n"),
            to: folder + "/data/pg_hba.conf")
        let configuration = try String(contentsOfFile: folder + "/data/postgresql.conf", encoding: .utf8)

        // A free port is free only until someone else takes it: a start that lost it tries another.
        var port = 0
        for attempt in 1...3 {
            port = freeLoopbackPort()
            try write(
                configuration + settings(port: port, folder: folder, tls: tls), to: folder + "/data/postgresql.conf")
            let started = try run.pgCtl(
                binaries + "/pg_ctl", ["start", "-D", folder + "/data", "-l", folder + "/server.log"])
            if started.status == 0 { break }
            let log = PostgresServerError.tail(of: folder + "/server.log")
            if attempt < 3, log.contains("could not bind") || log.contains("already in use") { continue }
            throw PostgresServerError(
                "pg_ctl start (port \(port)) failed", output: started, log: folder + "/server.log")
        }

        let server = PostgresServer(
            port: port, password: randomHex(16), folder: folder, binaries: binaries, runAs: runAs, reaper: reaper)
        _ = try server.psql(
            "CREATE ROLE \(server.user) LOGIN CREATEDB PASSWORD \(literal(server.password))", database: "postgres")
        return server
    }

    private init(port: Int, password: String, folder: String, binaries: String, runAs: [String], reaper: ClusterReaper)
    {
        self.port = port
        self.password = password
        self.folder = folder
        self.binaries = binaries
        self.runAs = runAs
        self.reaper = reaper
    }

    /// What is appended to initdb's postgresql.conf (later lines win).
    private static func settings(port: Int, folder: String, tls: Bool) -> String {
        let certificate =
            tls ? "ssl = on\nssl_cert_file = '\(folder)/server.crt'\nssl_key_file = '\(folder)/server.key'\n" : ""
        return """

            # rxvault tests: loopback only, a socket in the cluster's folder, no durability (a
            # throwaway cluster: a crash loses nothing worth keeping, and the tests run faster).
            listen_addresses = '127.0.0.1'
            port = \(port)
            unix_socket_directories = '\(folder)'
            unix_socket_permissions = 0700
            fsync = off
            synchronous_commit = off
            full_page_writes = off
            max_connections = 200
            \(certificate)
            """
    }

    /// The cluster's certificate authority (for `sslrootcert`), when it was started with `tls`.
    public var certificateAuthority: String { folder + "/ca.crt" }
    /// Another authority, which signed nothing this cluster shows.
    public var unrelatedAuthority: String { folder + "/other-ca.crt" }

    /// A certificate authority, the server's key and a certificate it signed for `localhost`
    /// only, and an unrelated authority, made with openssl(1) in `folder`; the server's key is
    /// the server user's alone, as PostgreSQL demands.
    private static func makeCertificates(in folder: String, owner: (uid: uid_t, gid: gid_t, runuser: String)?) throws {
        try write(
            "subjectAltName=DNS:localhost\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n",
            to: folder + "/server.ext")
        let curve = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
        let steps: [[String]] = [
            ["req", "-x509"] + curve + [
                "-keyout", "ca.key", "-out", "ca.crt", "-days", "2", "-subj", "/CN=rxvault test CA"
            ],
            ["req", "-x509"] + curve + [
                "-keyout", "other-ca.key", "-out", "other-ca.crt", "-days", "2", "-subj", "/CN=rxvault unrelated CA"
            ],
            ["req"] + curve + ["-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=localhost"],
            [
                "x509", "-req", "-in", "server.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial",
                "-out", "server.crt", "-days", "2", "-extfile", "server.ext"
            ]
        ]
        for step in steps {
            let result = try Subprocess.run(
                ["openssl"] + step, directory: URL(fileURLWithPath: folder), timeout: 60)
            guard result.status == 0 else { throw PostgresServerError("openssl \(step[0]) failed", output: result) }
        }
        chmod(folder + "/server.key", 0o600)
        if let owner {
            for file in ["server.key", "server.crt", "ca.crt", "other-ca.crt"] {
                guard chown(folder + "/" + file, owner.uid, owner.gid) == 0 else {
                    throw PostgresServerError("could not give \(file) to the postgres user")
                }
            }
        }
    }

    /// initdb, pg_ctl, postgres and psql: `pg_config --bindir`, else the newest
    /// /usr/lib/postgresql/*/bin (Debian keeps the server's programs there, off PATH).
    private static func findBinaries() throws -> String {
        func hasServer(_ folder: String) -> Bool {
            ["initdb", "pg_ctl", "postgres", "psql"].allSatisfy {
                FileManager.default.isExecutableFile(atPath: folder + "/" + $0)
            }
        }
        var looked: [String] = []
        let config = try? Subprocess.run(["pg_config", "--bindir"], timeout: 30)
        if let config, config.status == 0 {
            let folder = config.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
            if hasServer(folder) { return folder }
            looked.append("pg_config --bindir (\(folder))")
        } else {
            looked.append("pg_config (not found)")
        }
        let root = "/usr/lib/postgresql"
        let versions = ((try? FileManager.default.contentsOfDirectory(atPath: root)) ?? [])
            .sorted { $0.compare($1, options: .numeric) == .orderedDescending }
        if let version = versions.first(where: { hasServer("\(root)/\($0)/bin") }) { return "\(root)/\(version)/bin" }
        looked.append("\(root)/*/bin (\(versions.isEmpty ? "none" : versions.joined(separator: ", ")))")
        throw PostgresServerError(
            "no PostgreSQL server programs (initdb, pg_ctl, postgres, psql) in "
                + looked.joined(separator: " or ") + "; install Debian's postgresql package (scripts/setup does)")
    }

    /// As root: the `postgres` user, and runuser to become it. Otherwise nil: the tests' user.
    private static func serverUser() throws -> (uid: uid_t, gid: gid_t, runuser: String)? {
        guard geteuid() == 0 else { return nil }
        guard let entry = getpwnam("postgres") else {
            throw PostgresServerError(
                "the tests run as root, which PostgreSQL refuses, and there is no 'postgres' user to run it as "
                    + "(Debian's postgresql package makes it)")
        }
        guard let runuser = ["/usr/sbin/runuser", "/sbin/runuser"].first(where: FileManager.default.isExecutableFile)
        else { throw PostgresServerError("the tests run as root and runuser(1) (util-linux) is missing") }
        return (entry.pointee.pw_uid, entry.pointee.pw_gid, runuser)
    }

    // MARK: - Using

    /// A fresh, empty database owned by `rx` (named `name`, or `rx_` and random hex), and what
    /// rxvault needs to reach it.
    public func createDatabase(named name: String? = nil) throws -> PostgresDatabaseInfo {
        let database = name ?? "rx_" + Self.randomHex(8)
        _ = try psql("CREATE DATABASE \(Self.identifier(database)) OWNER \(user)", database: "postgres")
        return PostgresDatabaseInfo(host: host, port: port, user: user, database: database, password: password)
    }

    /// A login role (no other privilege) with `password`: for tests of a role that may not do
    /// what rxvault needs, or of a wrong password.
    public func createRole(named name: String, password: String) throws {
        _ = try psql(
            "CREATE ROLE \(Self.identifier(name)) LOGIN PASSWORD \(Self.literal(password))", database: "postgres")
    }

    /// Runs `sql` (one statement or several, or psql's backslash commands) as the superuser over
    /// the Unix socket, stopping at the first error, and returns what it printed: rows only (no
    /// headers, no command tags: `-q -t`), one a line, columns separated by `|` (`-A`), each row
    /// ending in a newline. For tests that tamper with rows or check privileges behind rxvault.
    public func psql(_ sql: String, database: String) throws -> String {
        let result = try Runner(runAs: runAs, folder: folder)(
            [
                binaries + "/psql", "-X", "-A", "-t", "-q", "-v", "ON_ERROR_STOP=1", "-h", folder, "-p", "\(port)",
                "-U", superuser, "-d", database
            ], stdin: sql)
        guard result.status == 0 else {
            throw PostgresServerError("psql in database \(database) failed on:\n\(sql)", output: result)
        }
        return result.stdout
    }

    /// `pg_dump` of `database` as the superuser (schema and rows as SQL text): what anyone who
    /// can read the database, or a dump of it, sees.
    public func dump(database: String) throws -> String {
        let result = try Runner(runAs: runAs, folder: folder)(
            [binaries + "/pg_dump", "-h", folder, "-p", "\(port)", "-U", superuser, "-d", database])
        guard result.status == 0 else { throw PostgresServerError("pg_dump of \(database) failed", output: result) }
        return result.stdout
    }

    // MARK: - Stopping and starting (for a cluster of a test's own: `start()`)

    /// Stops the server (`pg_ctl stop -m fast`: open connections are ended) and starts it again
    /// at the same port, the same data.
    public func restart() throws {
        try pgCtl(["restart", "-m", "fast", "-D", dataDirectory, "-l", logFile], "restart")
    }

    /// Stops the server (`pg_ctl stop -m fast`); `startServer()` starts it again.
    public func stopServer() throws {
        try pgCtl(["stop", "-m", "fast", "-D", dataDirectory], "stop")
    }

    /// Starts the server stopped by `stopServer()`, at the same port.
    public func startServer() throws {
        try pgCtl(["start", "-D", dataDirectory, "-l", logFile], "start")
    }

    /// Always with `-l` on a start: the server's output goes to its log, not to pg_ctl's.
    private func pgCtl(_ arguments: [String], _ what: String) throws {
        let result = try Runner(runAs: runAs, folder: folder).pgCtl(binaries + "/pg_ctl", arguments)
        guard result.status == 0 else {
            throw PostgresServerError("pg_ctl \(what) (port \(port)) failed", output: result, log: logFile)
        }
    }

    // MARK: - Helpers

    /// Runs a PostgreSQL program as the server's user, from the cluster's folder (the tests'
    /// working folder may be closed to that user), without the tests' PG* variables (a PGHOST or
    /// PGPASSWORD of the machine's must not change what the tests reach).
    private struct Runner {
        let runAs: [String]
        let folder: String

        var environment: [String: String] {
            var environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("PG") }
            environment["PGCLIENTENCODING"] = "UTF8"
            return environment
        }

        /// initdb, psql: programs that leave nothing running.
        func callAsFunction(_ command: [String], stdin: String = "") throws -> CommandResult {
            try Subprocess.run(
                runAs + command, environment: environment, directory: URL(fileURLWithPath: folder), stdin: stdin,
                timeout: 120)
        }

        /// `pg_ctl`, waiting (`-w`, at most a minute) for the server to be up or down.
        ///
        /// Not through `Subprocess` (Foundation's `Process`): that gives every child one end of a
        /// socket pair and takes the child for running until every holder of that end has
        /// closed it. The server pg_ctl starts inherits it and holds it as long as it runs, so
        /// `waitUntilExit` never returned and the first test hung (seen here). pg_ctl runs with
        /// no descriptor of the test process's instead (`ServerLauncher`).
        func pgCtl(_ pgCtl: String, _ arguments: [String]) throws -> CommandResult {
            let command = ["/bin/sh", "-c", "cd \"$1\" && shift && exec \"$@\"", "sh", folder] + runAs + [pgCtl]
            return try ServerLauncher.run(
                command + ["-w", "-t", "60"] + arguments, environment: environment,
                output: folder + "/pg_ctl-\(UUID().uuidString).out", timeout: 120)
        }
    }

    private static func write(_ text: String, to path: String) throws {
        // In place (not atomically): the file keeps its owner, the postgres user.
        try text.write(toFile: path, atomically: false, encoding: .utf8)
    }

    private static func randomHex(_ bytes: Int) -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<bytes).map { _ in
            let byte: UInt8 = generator.next()
            return String(byte >> 4, radix: 16) + String(byte & 15, radix: 16)
        }.joined()
    }

    /// `name` as an SQL identifier: any name a test picks, even one with quotes, names one object.
    private static func identifier(_ name: String) -> String {
        "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    /// `text` as an SQL string literal (standard_conforming_strings is on: backslashes are plain).
    private static func literal(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: "''") + "'"
    }
}

/// Stops a cluster and removes its folder once the test process is gone, however it went: a
/// crash, a kill -9 or a deadline of CI included. The server itself outlives its starter
/// (pg_ctl detaches it), so cleaning up from inside the process (atexit, deinit) is not enough.
///
/// A shell in a session of its own, ignoring the signals a terminal or a supervisor sends, reads
/// a socket whose other end only the test process holds: first the folder to watch (`watch`),
/// then nothing until the kernel closes that end as the process ends, or `reap()` says
/// "orderly" and closes it; then the shell runs `pg_ctl stop -m immediate` and `rm -rf` on the
/// folder. After a crash it looks again for five seconds: an initdb or pg_ctl the dead process
/// left running may still make the folder again (initdb makes the data folder's parents; seen
/// here). It is started before the folder is made (told its name first: 64 random bits, so no
/// other folder has it), and removes only the folder it was told.
private final class ClusterReaper: Sendable {
    /// The test process's end (-1 once closed), close-on-exec so no program the tests start holds
    /// it; and whether the reaper was told a folder.
    private let writer: Locked<(fd: Int32, watching: Bool)>
    private let pid: pid_t

    init(pgCtl: [String]) throws {
        let script = """
            trap '' INT TERM HUP QUIT
            IFS= read -r folder || exit 0
            case $folder in /tmp/rxvault-pg-?*) ;; *) exit 0 ;; esac
            IFS= read -r end || end=crash
            remove() {
                "$@" stop -D "$folder/data" -m immediate -w -t 30 >/dev/null 2>&1
                rm -rf "$folder" 2>/dev/null
            }
            remove "$@"
            [ "$end" = orderly ] && exit 0
            for attempt in 1 2 3 4 5 6 7 8 9 10; do
                sleep 0.5
                [ -e "$folder" ] && remove "$@"
            done
            exit 0
            """
        let watchdog: Watchdog
        do {
            watchdog = try Watchdog.start(script: script, name: "rxvault-pg-reaper", arguments: pgCtl, directory: "/")
        } catch {
            throw PostgresServerError("could not start the cluster's reaper: \(error)")
        }
        writer = Locked((watchdog.end, false))
        pid = watchdog.process.processIdentifier
    }

    /// Tells the reaper the cluster's folder (with `data/` in it), once, just before making it.
    func watch(_ folder: String) throws {
        // A reaper that died would raise SIGPIPE: the tests ignore it (as `Subprocess` does).
        signal(SIGPIPE, SIG_IGN)
        let line = Array((folder + "\n").utf8)
        let written = writer.withLock { state in
            state.watching = true
            return line.withUnsafeBytes { write(state.fd, $0.baseAddress, $0.count) }
        }
        guard written == line.count else {
            throw PostgresServerError(
                "could not tell the cluster's reaper its folder: \(String(cString: strerror(errno)))")
        }
    }

    /// Says "orderly" (no program of the test process is still at work on the folder), closes the
    /// socket and waits (at most a minute) for the server to be stopped and the folder removed.
    /// Once; later calls return at once.
    func reap() {
        let wasOpen = writer.withLock { state -> Bool in
            guard state.fd >= 0 else { return false }
            if state.watching {
                _ = Array("orderly\n".utf8).withUnsafeBytes { write(state.fd, $0.baseAddress, $0.count) }
            }
            close(state.fd)
            state.fd = -1
            return true
        }
        guard wasOpen else { return }
        _ = eventually(within: 60, every: 0.01) { !Subprocess.isRunning(pid) }
    }

    deinit { reap() }
}

/// Runs a program that leaves a server running (pg_ctl start) to its end, holding none of the
/// test process's descriptors: stdin /dev/null, stdout and stderr to a file (read, then removed;
/// a file rather than a pipe, which a server could hold open), every other descriptor closed
/// in the child (posix_spawn, `posix_spawn_file_actions_addclosefrom_np`), default signal
/// dispositions and an empty signal mask (the tests ignore SIGPIPE; threads block signals).
private enum ServerLauncher {
    /// glibc's closefrom for posix_spawn (2.34 on): looked up at run time, as Swift's Glibc
    /// module leaves out what needs _GNU_SOURCE.
    private typealias AddCloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
    private static let addCloseFrom: AddCloseFrom? = dlsym(
        dlopen(nil, RTLD_NOW), "posix_spawn_file_actions_addclosefrom_np"
    )
    .map { unsafeBitCast($0, to: AddCloseFrom.self) }

    static func run(_ command: [String], environment: [String: String], output: String, timeout: Double) throws
        -> CommandResult
    {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        if let addCloseFrom {
            _ = addCloseFrom(&actions, 3)
        } else {
            // An older glibc: what is open now (one opened by another thread meanwhile may leak).
            let open = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
            for fd in open.compactMap(Int32.init) where fd > 2 { posix_spawn_file_actions_addclose(&actions, fd) }
        }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var all = sigset_t()
        var none = sigset_t()
        sigfillset(&all)
        sigemptyset(&none)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))

        let argv = command.map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        var pid = pid_t()
        let spawned = posix_spawn(&pid, command[0], &actions, &attributes, argv, envp)
        guard spawned == 0 else {
            throw PostgresServerError(
                "could not run \(command.joined(separator: " ")): \(String(cString: strerror(spawned)))")
        }

        var status: Int32 = 0
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            let waited = waitpid(pid, &status, WNOHANG)
            if waited == pid { break }
            if waited == -1 && errno != EINTR {
                throw PostgresServerError(
                    "waitpid for \(command.joined(separator: " ")): \(String(cString: strerror(errno)))")
            }
            if Date() >= deadline {
                Subprocess.killTree(pid)
                while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
                let printed = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
                try? FileManager.default.removeItem(atPath: output)
                throw CommandTimeout(command: command, seconds: timeout, stdout: printed, stderr: "")
            }
            usleep(10_000)
        }
        let printed = (try? Data(contentsOf: URL(fileURLWithPath: output))) ?? Data()
        try? FileManager.default.removeItem(atPath: output)
        // WIFEXITED and friends are macros Swift does not import: the low 7 bits are the signal.
        let signal = status & 0x7f
        return CommandResult(
            status: signal == 0 ? (status >> 8) & 0xff : signal, stdout: printed, stderr: Data(), signalled: signal != 0
        )
    }
}
