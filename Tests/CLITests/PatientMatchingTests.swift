import Foundation
import Testing

/// `trend` and `patient show` find a patient as `query --patient` does (a name containing the
/// text, any case; an equal name first; else an id prefix), and two or more matches are the same
/// ambiguous-patient error (64) listing them.
@Suite struct PatientMatchingTests {
    @Test func trendAndShowMatchAsQueryDoes() throws {
        let cli = try CLIHarness()
        try cli.initVault()
        _ = try cli.add(PatientNearMissTests.glasses("Mia Chen", dob: "2014-02-03"))
        _ = try cli.add(PatientNearMissTests.glasses("Sam Rivera"))
        _ = try cli.add(PatientNearMissTests.glasses("Samuel Rivera Jr"))

        // query --patient chen finds Mia Chen's; so do trend and patient show.
        let query = try cli.run(["query", "--patient", "chen", "--format", "json"])
        #expect(query.status == 0 && query.stdout.contains("Mia Chen"), "\(query)")
        for part in ["chen", "MIA", "ia ch"] {
            let show = try cli.run(["patient", "show", part, "--format", "json"])
            #expect(show.status == 0, "\(part): \(show)")
            #expect(try cli.json(show.stdout)["name"] as? String == "Mia Chen", "\(part): \(show)")
            let trend = try cli.run(["trend", part, "--format", "json"])
            #expect(trend.status == 0, "\(part): \(trend)")
            #expect(trend.stdout.contains("Mia Chen"), "\(part): \(trend)")
        }

        // "rivera" is in two names: ambiguous, both listed, as for an id prefix.
        for command in [["patient", "show", "rivera"], ["trend", "rivera"]] {
            let r = try cli.run(command)
            #expect(r.status == 64, "\(command): \(r)")
            #expect(r.stderr.contains("Sam Rivera") && r.stderr.contains("Samuel Rivera Jr"), "\(command): \(r)")
        }
        // An equal name wins over one that only contains it.
        let exact = try cli.run(["patient", "show", "sam rivera", "--format", "json"])
        #expect(exact.status == 0, "\(exact)")
        #expect(try cli.json(exact.stdout)["name"] as? String == "Sam Rivera", "\(exact)")
        // No match at all: not found (67), as before.
        #expect(try cli.run(["patient", "show", "nobody"]).status == 67)
        #expect(try cli.run(["trend", "nobody"]).status == 67)
        // An id prefix still works.
        let listed = try cli.run(["patients", "--format", "json"])
        let mia = try #require(
            (try cli.json(listed.stdout)["patients"] as? [[String: Any]])?.first { $0["name"] as? String == "Mia Chen" }
        )
        let id = try #require(mia["id"] as? String)
        #expect(try cli.run(["trend", String(id.prefix(8))]).status == 0)
    }
}
