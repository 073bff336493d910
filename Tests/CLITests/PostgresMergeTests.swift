import Foundation
import RxTestSupport
import Testing

/// The offline laptop (issue 48, item 6): a copy of a practice's PostgreSQL vault taken to a
/// laptop (`rxvault copy`), written offline, merged back into the database with
/// `merge lap.rxv --vault postgres://...` while a front desk went on writing to the database.
/// Nothing either side wrote is lost, and a revoke made at the desk stays made.
@Suite struct PostgresMergeTests {
    /// A practice's database vault with a prescription granted to the client "optician", and a
    /// laptop (its own HOME, so its own replica) with a copy of it taken by `rxvault copy`.
    static func practiceAndLaptop() throws -> (
        CLIHarness, PostgresDatabaseInfo, id: String, lap: String, laptop: [String: String?]
    ) {
        let (cli, database) = try PostgresVaultTests.databaseVault()
        let id = try cli.add(CLIHarness.glassesArguments)
        let recipient = try cli.ageKeygen("app.key")
        #expect(try cli.run(["client", "add", "optician", "--recipient", recipient]).status == 0)
        #expect(try cli.run(["grant", "optician", id]).status == 0)
        let lapHome = cli.path("laptop")
        try FileManager.default.createDirectory(atPath: lapHome, withIntermediateDirectories: true)
        let lap = cli.path("lap.rxv")
        #expect(try cli.run(["copy", database.url, lap]).status == 0)
        return (cli, database, id, lap, ["HOME": lapHome, "RXVAULT_PATH": lap])
    }

    @Test func theLaptopsWritesComeBackAndTheDesksStay() throws {
        let (cli, database, id, lap, laptop) = try Self.practiceAndLaptop()
        let school = try cli.run(
            [
                "add", "glasses", "--patient", "Screened Child", "--prescriber", "Dr Lee", "--issued", "2026-05-01",
                "--expires", "2027-05-01", "--od", "-0.50", "--os", "-0.75"
            ], environment: laptop)
        #expect(school.status == 0, "\(school)")
        let child = String(school.stdout.split(separator: "\n").first ?? "")

        // Meanwhile at the desk: another prescription, and the optician's grant revoked.
        let walkIn = try cli.add([
            "add", "contacts", "--patient", "Walk In", "--prescriber", "Dr Lee", "--issued", "2026-05-02",
            "--expires", "2027-05-02", "--od", "-2.00 bc 8.6 dia 14.2", "--os", "-2.25 bc 8.6 dia 14.2", "--brand",
            "Acme"
        ])
        #expect(try cli.run(["revoke", "optician", id]).status == 0)

        let merged = try cli.run(["merge", lap])
        #expect(merged.status == 0 && merged.stdout.contains("1 new prescription"), "\(merged)")
        let list = try cli.run(["list"]).stdout
        #expect(list.contains(child) && list.contains(walkIn) && list.contains(String(id.prefix(8))), "\(list)")
        let grants = try cli.run(["grants", "--format", "json"]).stdout
        #expect(!grants.contains("optician"), "the desk's revoke stays: \(grants)")
        #expect(try cli.run(["check"]).status == 0)
        // The laptop brings the database's changes in too, and then both hold the same.
        #expect(try cli.run(["merge", database.url], environment: laptop).status == 0)
        let onLaptop = try cli.run(["list"], environment: laptop).stdout
        #expect(onLaptop.contains(walkIn) && onLaptop.contains(child), "\(onLaptop)")
        #expect(!(try cli.run(["grants"], environment: laptop)).stdout.contains("optician"))
        // In step: the database takes the laptop's log entries (its merge), then neither has
        // anything to bring the other.
        let back = try cli.run(["merge", lap])
        #expect(back.status == 0 && !back.stdout.contains("new prescription"), "\(back)")
        for (source, environment) in [(lap, [String: String?]()), (database.url, laptop)] {
            let again = try cli.run(["merge", source], environment: environment)
            #expect(again.status == 0 && again.stdout.contains("nothing to bring in"), "\(again)")
        }
    }

    /// Key slots and settings between a database vault and a laptop's file: a passphrase added
    /// at the desk comes to the laptop, one removed on the laptop (it leaked) leaves the database,
    /// and a setting changed on the laptop applies at the desk; `check` passes on both engines.
    @Test func keySlotsAndSettingsMergeBetweenTheDatabaseAndTheLaptop() throws {
        let (cli, database) = try PostgresVaultTests.databaseVault()
        _ = try cli.add(CLIHarness.glassesArguments)
        let leaked = try cli.write("a passphrase that leaked 2026\n", to: "leaked")
        let desk = try cli.write("the front desk's passphrase\n", to: "desk")
        #expect(try cli.run(["key", "add", "--kdf", "interactive", "--new-passphrase-file", leaked]).status == 0)
        let lapHome = cli.path("laptop")
        try FileManager.default.createDirectory(atPath: lapHome, withIntermediateDirectories: true)
        let lap = cli.path("lap.rxv")
        #expect(try cli.run(["copy", database.url, lap]).status == 0)
        let laptop: [String: String?] = ["HOME": lapHome, "RXVAULT_PATH": lap]
        #expect(try cli.run(["list"], environment: laptop).status == 0)

        #expect(try cli.run(["key", "add", "--kdf", "interactive", "--new-passphrase-file", desk]).status == 0)
        #expect(try cli.run(["key", "remove", "2", "--yes"], environment: laptop).status == 0)
        #expect(try cli.run(["config", "set", "assumed-validity", "contacts=1y"], environment: laptop).status == 0)

        let intoDatabase = try cli.run(["merge", lap])
        #expect(intoDatabase.status == 0 && intoDatabase.stdout.contains("removed key slot 2"), "\(intoDatabase)")
        let intoLaptop = try cli.run(["merge", database.url], environment: laptop)
        #expect(intoLaptop.status == 0 && intoLaptop.stdout.contains("added key slot 3"), "\(intoLaptop)")
        for environment in [[:], laptop] {
            #expect(try cli.run(["check"], environment: environment).status == 0)
            #expect(
                try cli.run(["config", "get", "assumed-validity"], environment: environment).stdout == "contacts=1y\n")
            var withLeaked = environment
            withLeaked["RXVAULT_PASSPHRASE_FILE"] = leaked
            #expect(try cli.run(["list"], environment: withLeaked).status == 77)
            var withDesk = environment
            withDesk["RXVAULT_PASSPHRASE_FILE"] = desk
            #expect(try cli.run(["list"], environment: withDesk).status == 0)
        }
    }
}

/// `rxvault sync postgres://...` (issue 48, item 5): the laptop keeps in step with the
/// practice's database by syncing with it. The desk's writes come down, the laptop's go up, a
/// revoke at the desk is never undone, and once in step a sync moves nothing. A database put
/// back from an older dump is refused (76) until the owner accepts it.
@Suite struct PostgresSyncTests {
    @Test func aLaptopSyncsWithThePracticeDatabase() throws {
        let (cli, database, id, _, laptop) = try PostgresMergeTests.practiceAndLaptop()
        let server = try PostgresServer.shared()
        let dump = try server.dump(database: database.database)

        let school = try cli.run(
            [
                "add", "glasses", "--patient", "Screened Child", "--prescriber", "Dr Lee", "--issued", "2026-05-01",
                "--expires", "2027-05-01", "--od", "-0.50", "--os", "-0.75"
            ], environment: laptop)
        #expect(school.status == 0, "\(school)")
        let child = String(school.stdout.split(separator: "\n").first ?? "")
        #expect(try cli.run(["revoke", "optician", id]).status == 0)

        let synced = try cli.run(["sync", database.url], environment: laptop)
        #expect(synced.status == 0 && synced.stdout.contains("brought in"), "\(synced)")
        #expect(try cli.run(["list"]).stdout.contains(child), "the laptop's write reached the database")
        #expect(!(try cli.run(["grants"], environment: laptop)).stdout.contains("optician"), "the revoke came down")
        let again = try cli.run(["sync", database.url, "--format", "json"], environment: laptop)
        #expect(again.status == 0 && again.stdout.contains("\"inStep\" : true"), "\(again)")
        #expect(try cli.run(["check"]).status == 0)
        #expect(try cli.run(["check"], environment: laptop).status == 0)

        // The database put back as it was before: the laptop has seen more there.
        _ = try server.psql(
            "DROP DATABASE \"\(database.database)\" WITH (FORCE); CREATE DATABASE \"\(database.database)\" OWNER rx",
            database: "postgres")
        _ = try server.psql(dump, database: database.database)
        let before = try cli.run(["status", "--format", "json"], environment: laptop).stdout
        let rolledBack = try cli.run(["sync", database.url], environment: laptop)
        #expect(rolledBack.status == 76 && rolledBack.stderr.contains("rolled back or replaced"), "\(rolledBack)")
        #expect(try cli.run(["status", "--format", "json"], environment: laptop).stdout == before)
        let accepted = try cli.run(["sync", database.url, "--accept-rollback"], environment: laptop)
        #expect(accepted.status == 0 && accepted.stdout.contains("pushed"), "\(accepted)")
        #expect(try cli.run(["list"], environment: laptop).stdout.contains(child))
    }
}
