import Foundation
import RxTestSupport
import Testing

/// The hole issue 48 found in a database vault: a `pg_dump` taken before a revoke is restored,
/// and a desk that had not seen the revoke makes an ordinary write. The counter is back where
/// the revoking desk last saw it; the knowledge vector is not: the desk that revoked names the
/// database another line of history, lacking its write, and refuses to write on it.
@Suite struct PostgresForkTests {
    @Test func aRestoredDumpAndALaggingDeskAreCaughtByTheDeskThatRevoked() throws {
        let (cli, database) = try PostgresVaultTests.databaseVault()
        let server = try PostgresServer.shared()
        let id = try cli.add(CLIHarness.glassesArguments)
        let recipient = try cli.ageKeygen("app.key")
        #expect(try cli.run(["client", "add", "optician", "--recipient", recipient]).status == 0)
        #expect(try cli.run(["grant", "optician", id]).status == 0)
        // The second desk (its own HOME: its own state folder) sees the vault as it is now.
        let deskTwo: [String: String?] = ["HOME": cli.path("desk-two")]
        try FileManager.default.createDirectory(atPath: cli.path("desk-two"), withIntermediateDirectories: true)
        #expect(try cli.run(["list"], environment: deskTwo).status == 0)

        let dump = try server.dump(database: database.database)
        #expect(try cli.run(["revoke", "optician", id]).status == 0)
        // The dump put back: the revoke is gone from the database.
        _ = try server.psql(
            "DROP DATABASE \"\(database.database)\" WITH (FORCE); CREATE DATABASE \"\(database.database)\" OWNER rx",
            database: "postgres")
        _ = try server.psql(dump, database: database.database)
        // The lagging desk writes on it: a later state of all it saw.
        let lagging = try cli.run(["edit", id, "--note", "at desk two"], environment: deskTwo)
        #expect(lagging.status == 0 && !lagging.stderr.contains("warning"), "\(lagging)")

        // The desk that revoked: told, on reading, that this is another line lacking its write.
        let list = try cli.run(["list"])
        #expect(list.status == 0 && list.stderr.contains("another line of history"), "\(list)")
        #expect(list.stderr.contains("lacks 1 write made on this computer"), "\(list)")
        let check = try cli.run(["check"])
        #expect(check.status == 76 && check.stdout.contains("FAIL line of history"), "\(check)")
        let write = try cli.run(["revoke", "optician", id])
        #expect(write.status == 76 && write.stderr.contains("--accept-fork"), "\(write)")
        // A server started at this desk serves nothing from it (the revoked grant is back in it).
        let serve = try cli.run(["serve", "--socket", cli.runtime + "/api.sock"], timeout: 60)
        #expect(serve.status == 76 && serve.stderr.contains("does not start"), "\(serve)")
        // However the URL is written, it is the same vault to this desk.
        let otherSpelling = database.url.replacingOccurrences(of: "127.0.0.1", with: "localhost")
        #expect(otherSpelling != database.url)
        let spelled = try cli.run(["list", "--vault", otherSpelling])
        #expect(spelled.stderr.contains("another line of history"), "\(spelled)")
    }
}
