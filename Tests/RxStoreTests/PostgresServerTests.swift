import Foundation
import RxTestSupport
import Testing

/// The PostgreSQL server the storage tests run against (RxTestSupport's `PostgresServer`): it
/// starts, it makes databases for `rx`, and a TCP login needs the password, so the tests of
/// rxvault's password handling prove something.
@Suite struct PostgresServerTests {
    /// psql, over TCP, as a client such as rxvault: none of the machine's PG* settings and no
    /// password file, so the password is `password` or none (`-w`: never a prompt); rows only.
    func login(
        _ server: PostgresServer, user: String, password: String?, database: String,
        sql: String = "SELECT current_user"
    ) throws -> CommandResult {
        var environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("PG") }
        environment["PGPASSFILE"] = "/dev/null"
        if let password { environment["PGPASSWORD"] = password }
        return try Subprocess.run(
            [
                server.binaries + "/psql", "-X", "-q", "-A", "-t", "-w", "-c", sql,
                "host=127.0.0.1 port=\(server.port) user=\(user) dbname=\(database) connect_timeout=10"
            ], environment: environment, timeout: 30)
    }

    @Test func theSharedServerStartsOnceAndTheSuperuserRunsSQL() throws {
        let server = try PostgresServer.shared()
        #expect(try PostgresServer.shared() === server)
        #expect(try server.psql("SELECT current_user", database: "postgres") == "postgres\n")
        #expect(try server.psql("SHOW server_version_num", database: "postgres") >= "150000")
        // Loopback only; a throwaway cluster without durability.
        let settings = try server.psql(
            "SHOW listen_addresses; SHOW fsync; SHOW synchronous_commit; SHOW full_page_writes", database: "postgres")
        #expect(settings == "127.0.0.1\noff\noff\noff\n")
        #expect(server.folder.hasPrefix("/tmp/"))
        // Several statements, stopping at the first error, which throws with psql's message.
        #expect(
            try server.psql(
                "CREATE TEMP TABLE t (v int); INSERT INTO t VALUES (1), (2); SELECT sum(v) FROM t",
                database: "postgres") == "3\n")
        let error = #expect(throws: PostgresServerError.self) {
            try server.psql("SELECT 1; SELECT * FROM no_such_table; SELECT 2", database: "postgres")
        }
        #expect(error?.description.contains("no_such_table") == true)
    }

    @Test func aDatabaseIsFreshAndOwnedByRx() throws {
        let server = try PostgresServer.shared()
        let info = try server.createDatabase()
        #expect(info.host == "127.0.0.1" && info.port == server.port && info.user == "rx")
        #expect(info.url == "postgres://rx@127.0.0.1:\(server.port)/\(info.database)")
        #expect(!info.url.contains(info.password) && info.password.count >= 16)
        #expect(info.environment == ["PGPASSWORD": info.password])
        let owner = try server.psql(
            "SELECT pg_get_userbyid(datdba) FROM pg_database WHERE datname = '\(info.database)'", database: "postgres")
        #expect(owner == "rx\n")
        #expect(
            try server.psql("SELECT count(*) FROM pg_tables WHERE schemaname = 'public'", database: info.database)
                == "0\n")
        let named = try server.createDatabase(named: "rx named \"quoted\"")
        #expect(named.database == "rx named \"quoted\"")
        #expect(try server.psql("SELECT current_database()", database: named.database) == "rx named \"quoted\"\n")
    }

    @Test func aTCPLoginNeedsThePassword() throws {
        let server = try PostgresServer.shared()
        let info = try server.createDatabase()
        let without = try login(server, user: info.user, password: nil, database: info.database)
        #expect(without.status != 0, "\(without)")
        #expect(without.stderr.contains("no password supplied"), "\(without)")
        let wrong = try login(server, user: info.user, password: info.password + "x", database: info.database)
        #expect(wrong.status != 0, "\(wrong)")
        #expect(wrong.stderr.contains("password authentication failed"), "\(wrong)")
        let with = try login(server, user: info.user, password: info.password, database: info.database)
        #expect(with.status == 0 && with.stdout == "rx\n", "\(with)")
        // rx owns its database: it makes tables there.
        let table = try login(
            server, user: info.user, password: info.password, database: info.database,
            sql: "CREATE TABLE t (v int); SELECT count(*) FROM t")
        #expect(table.status == 0 && table.stdout == "0\n", "\(table)")
        // The superuser has no password: over TCP it cannot log in at all.
        let superuser = try login(server, user: server.superuser, password: "postgres", database: "postgres")
        #expect(superuser.status != 0, "\(superuser)")
    }

    @Test func aRoleLogsInWithItsPasswordAndMayDoNoMore() throws {
        let server = try PostgresServer.shared()
        let info = try server.createDatabase()
        let role = "reader_\(UInt32.random(in: 0...UInt32.max))"
        try server.createRole(named: role, password: "it's a secret")
        let login = try login(server, user: role, password: "it's a secret", database: info.database)
        #expect(login.status == 0 && login.stdout == "\(role)\n", "\(login)")
        let create = try self.login(
            server, user: role, password: "it's a secret", database: info.database, sql: "CREATE DATABASE nope")
        #expect(create.status != 0 && create.stderr.contains("permission denied"), "\(create)")
    }

    /// Tests run in parallel, each making its own database on the one cluster.
    @Test func databasesAreMadeInParallel() throws {
        let server = try PostgresServer.shared()
        let names = try concurrentMap(Array(0..<8), width: 8) { _ in try server.createDatabase().database }
        #expect(Set(names).count == 8)
        let listed = try server.psql("SELECT datname FROM pg_database", database: "postgres").split(separator: "\n")
        #expect(Set(names).isSubset(of: listed.map(String.init)))
    }

    /// A cluster of the test's own, stopped and started under a connection's feet, then gone
    /// (folder and server) once released.
    @Test func aClusterOfItsOwnStopsStartsAndIsRemoved() throws {
        var server: PostgresServer? = try PostgresServer.start()
        let port = server!.port
        let folder = server!.folder
        #expect(try server!.port != PostgresServer.shared().port)
        let info = try server!.createDatabase()
        #expect(try login(server!, user: "rx", password: info.password, database: info.database).status == 0)
        try server!.stopServer()
        let stopped = try login(server!, user: "rx", password: info.password, database: info.database)
        #expect(stopped.status != 0, "\(stopped)")
        try server!.startServer()
        #expect(try login(server!, user: "rx", password: info.password, database: info.database).status == 0)
        try server!.restart()
        #expect(server!.port == port)
        #expect(try login(server!, user: "rx", password: info.password, database: info.database).stdout == "rx\n")
        let pid = try #require(
            Int32(
                String(contentsOfFile: server!.dataDirectory + "/postmaster.pid", encoding: .utf8)
                    .split(separator: "\n").first ?? ""))
        server = nil
        #expect(!FileManager.default.fileExists(atPath: folder))
        #expect(eventually(within: 10) { !Subprocess.isRunning(pid) })
    }
}
