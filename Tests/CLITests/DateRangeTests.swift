import Foundation
import Testing

/// Dates a person or a file gives stay within 0001-01-01 to 9999-12-31, the days YYYY-MM-DD can
/// write and read back. A grant until "60 days from 9999-12-01" was stored as 10000-01-30, and
/// then `grants` and `check` could not read the vault (76).
@Suite struct DateRangeTests {
    func setUp() throws -> (CLIHarness, String) {
        let cli = try CLIHarness()
        try cli.initVault()
        let id = try cli.add(CLIHarness.glassesArguments)
        let recipient = try cli.ageKeygen("shop.key")
        #expect(try cli.run(["client", "add", "shop", "--recipient", recipient]).status == 0)
        return (cli, id)
    }

    @Test func aGrantCannotEndAfter9999() throws {
        let (cli, id) = try setUp()
        let endOfTime = ["RXVAULT_TODAY": "9999-12-01"]
        for expires in ["60d", "1y", "100y", "5000w"] {
            let r = try cli.run(["grant", "shop", id, "--expires", expires], environment: endOfTime)
            #expect(r.status == 65 && !r.signalled, "--expires \(expires): \(r)")
            #expect(r.stderr.contains("is after 9999-12-31"), "--expires \(expires): \(r)")
        }
        for expires in ["10000-01-01", "0000-12-31", "-2026-01-01"] {
            let r = try cli.run(["grant", "shop", id, "--expires=\(expires)"])
            #expect(
                r.status == 65 && r.stderr.contains("outside 0001-01-01 to 9999-12-31"), "--expires \(expires): \(r)")
        }
        let tooLong = try cli.run(["grant", "shop", id, "--expires", "9000y"])
        #expect(tooLong.status == 65 && tooLong.stderr.contains("at most 36500 days"), "\(tooLong)")
        // The vault stays readable, and the last day that can be stored still can be.
        let last = try cli.run(["grant", "shop", id, "--expires", "30d"], environment: ["RXVAULT_TODAY": "9999-12-01"])
        #expect(last.status == 0 && last.stdout.contains("until 9999-12-31"), "\(last)")
        for command in [["grants"], ["grants", "--format", "json"], ["check"]] {
            let r = try cli.run(command, environment: endOfTime)
            #expect(r.status == 0, "\(command): \(r)")
        }
        #expect(try cli.run(["--identity", cli.path("shop.key"), "show", id], environment: endOfTime).status == 0)
    }

    /// Every other date a command takes says the same about a year past either end.
    @Test(arguments: [
        ["add", "glasses", "--patient", "P", "--prescriber", "D", "--issued", "0000-12-31", "--od", "-1.00"],
        [
            "add", "glasses", "--patient", "P", "--prescriber", "D", "--issued", "2026-01-01", "--expires",
            "10000-01-01", "--od", "-1.00"
        ],
        [
            "add", "glasses", "--patient", "P", "--dob", "0000-01-01", "--prescriber", "D", "--issued", "2026-01-01",
            "--od", "-1.00"
        ],
        ["query", "--valid-on", "10000-01-01"], ["query", "--issued-after", "0000-06-01"],
        ["log", "--since", "10000-01-01"]
    ])
    func otherDatesOutsideTheRange(arguments: [String]) throws {
        let cli = try CLIHarness()
        try cli.initVault()
        let r = try cli.run(arguments)
        #expect(r.status == 65 && r.stderr.contains("outside 0001-01-01 to 9999-12-31"), "\(r)")
    }

    /// Near the end of the calendar, a duration reaches to its last day rather than past it.
    @Test func expiringWithinReachesTheLastDay() throws {
        let cli = try CLIHarness(today: "9999-11-01")
        try cli.initVault()
        let id = try cli.add([
            "add", "glasses", "--patient", "P", "--prescriber", "D", "--issued", "9999-10-01", "--expires",
            "9999-12-31",
            "--od", "-1.00"
        ])
        let r = try cli.run(["query", "--expiring-within", "100y"])
        #expect(r.status == 0 && r.stdout.contains(id), "\(r)")
    }

    /// Import files: a date past either end is refused (65) with its position, and nothing is imported.
    @Test func importedDatesOutsideTheRangeAreRefused() throws {
        let (cli, id) = try setUp()
        let exported = try cli.run(["export", id, "--format", "json", "--out", "-"])
        #expect(exported.status == 0, "\(exported)")
        for (from, to) in [
            ("\"expires\" : \"2028-03-01\"", "\"expires\" : \"10000-01-01\""),
            ("\"issued\" : \"2026-03-01\"", "\"issued\" : \"0000-03-01\"")
        ] {
            let changed = exported.stdout.replacingOccurrences(of: from, with: to)
            #expect(changed != exported.stdout, "the export has no \(from)")
            let file = try cli.write(changed, to: "changed.json")
            let r = try cli.run(["import", file, "--update-unverified"])
            #expect(r.status == 65 && r.stderr.contains("outside 0001-01-01 to 9999-12-31"), "\(to): \(r)")
            #expect(r.stderr.contains("nothing was imported"), "\(r)")
        }
        // FHIR the same way.
        let fhir = try cli.run(["export", id, "--format", "fhir", "--out", "-"])
        #expect(fhir.status == 0, "\(fhir)")
        for (from, to) in [
            ("\"valueDate\" : \"2028-03-01\"", "\"valueDate\" : \"10000-01-01\""),
            ("\"dateWritten\" : \"2026-03-01\"", "\"dateWritten\" : \"10000-03-01\"")
        ] {
            let changed = fhir.stdout.replacingOccurrences(of: from, with: to)
            #expect(changed != fhir.stdout, "the FHIR export has no \(from)")
            let r = try cli.run(["import", try cli.write(changed, to: "changed-fhir.json")])
            #expect(r.status == 65 && r.stderr.contains("outside 0001-01-01 to 9999-12-31"), "\(to): \(r)")
        }
        #expect(try cli.run(["check"]).status == 0)
    }
}
