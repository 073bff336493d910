import Foundation
import Testing

@Suite struct QueryTests {
    @Test func queryFiltersAndFormats() throws {
        let cli = try CLIHarness()
        try cli.initVault()
        let glasses = try cli.add(CLIHarness.glassesArguments)
        let contacts = try cli.add(CLIHarness.contactsArguments)
        let other = try cli.add([
            "add", "glasses", "--patient", "Kim Park", "--prescriber", "Dr Alvarez", "--issued", "2024-01-01",
            "--expires", "2026-01-01", "--od", "+1.50", "--os", "+1.25"
        ])
        func ids(_ arguments: [String]) throws -> [String] {
            let r = try cli.run(["query"] + arguments + ["--format", "json"])
            #expect(r.status == 0, "\(r)")
            return (try cli.json(r.stdout)["prescriptions"] as? [[String: Any]])?.compactMap {
                ($0["id"] as? String).map { String($0.prefix(8)) }
            } ?? []
        }
        #expect(try ids(["--expiring-within", "60d"]) == [contacts])
        #expect(try ids(["--expired"]) == [other])
        #expect(try ids(["--patient", "QUINTESSA", "--kind", "glasses"]) == [glasses])
        #expect(try ids(["--brand", "zylo"]) == [contacts])
        #expect(try ids(["--sphere-min", "1", "--sort", "patient"]) == [other])
        #expect(try ids(["--add"]) == [glasses])
        #expect(try ids(["--valid-on", "2025-06-01"]) == [other])
        #expect(try ids(["--sort", "expires", "--limit", "1"]) == [other])

        let ndjson = try cli.run(["query", "--patient", "quintessa", "--format", "ndjson"])
        #expect(ndjson.stdout.split(separator: "\n").count == 2)
        #expect(ndjson.stdout.split(separator: "\n").allSatisfy { $0.hasPrefix("{") && $0.hasSuffix("}") })
        let csv = try cli.run(["query", "--kind", "contacts", "--format", "csv"])
        #expect(csv.stdout.split(separator: "\n").count == 3)
        let none = try cli.run(["query", "--patient", "nobody"])
        #expect(none.status == 0 && none.stdout.isEmpty && none.stderr.contains("no prescriptions match"))
        #expect(try cli.run(["query", "--valid-on", "2026-13-01"]).status == 65)
        #expect(try cli.run(["query", "--expiring-within", "soon"]).status == 65)
        #expect(try cli.run(["show", glasses, "--format", "csv"]).status == 64)

        // A client's queries cover its grants only.
        #expect(
            try cli.run(["client", "add", "shop", "--generate", "--identity-out", cli.path("shop.key")]).status == 0)
        #expect(try cli.run(["grant", "shop", contacts]).status == 0)
        let asClient = try cli.run(["--identity", cli.path("shop.key"), "query", "--format", "json"])
        #expect((try cli.json(asClient.stdout)["prescriptions"] as? [Any])?.count == 1)
        let clientExpired = try cli.run(["--identity", cli.path("shop.key"), "query", "--expired"])
        #expect(clientExpired.stdout.isEmpty)
    }

    /// --expiring-within is a to-do list: soonest expiry first, whatever the issue dates; other
    /// queries and list keep the newest issue first, and --sort still decides when given.
    @Test func expiringWithinSortsBySoonestExpiry() throws {
        let cli = try CLIHarness()
        try cli.initVault()
        let later = try cli.add([
            "add", "glasses", "--patient", "Kim Park", "--prescriber", "Dr Alvarez", "--issued", "2026-05-01",
            "--expires", "2026-08-01", "--od", "+1.50", "--os", "+1.25"
        ])
        let sooner = try cli.add([
            "add", "contacts", "--patient", "Ana Lima", "--prescriber", "Dr Alvarez", "--issued", "2026-01-01",
            "--expires", "2026-07-01", "--od", "-1.00 bc 8.6 dia 14.2", "--os", "-1.00 bc 8.6 dia 14.2",
            "--brand", "Acme"
        ])
        let valid = try cli.add([
            "add", "glasses", "--patient", "Noor Haddad", "--prescriber", "Dr Alvarez", "--issued", "2025-01-01",
            "--expires", "2028-01-01", "--od", "-1.00", "--os", "-1.00"
        ])
        func ids(_ command: [String]) throws -> [String] {
            let r = try cli.run(command + ["--format", "json"])
            #expect(r.status == 0, "\(r)")
            return (try cli.json(r.stdout)["prescriptions"] as? [[String: Any]])?.compactMap {
                ($0["id"] as? String).map { String($0.prefix(8)) }
            } ?? []
        }
        #expect(try ids(["query", "--expiring-within", "60d"]) == [sooner, later])
        #expect(try ids(["query", "--expiring-within", "60d", "--reverse"]) == [later, sooner])
        #expect(try ids(["query", "--expiring-within", "60d", "--sort", "issued"]) == [later, sooner])
        #expect(try ids(["query"]) == [later, sooner, valid])
        #expect(try ids(["list"]) == [later, sooner, valid])
        let table = try cli.run(["query", "--expiring-within", "8w"])
        let rows = table.stdout.split(separator: "\n").dropFirst().map { String($0.prefix(8)) }
        #expect(rows == [sooner, later], "\(table)")
    }
}
