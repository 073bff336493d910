import Foundation
import Testing

/// An import that meets a patient first without a birth date and later with one (two
/// prescriptions of one person from another tool's export): the record gets the date, and the
/// earlier prescription's index entry with it, in the same write, so the vault passes `check`.
@Suite struct ImportPatientTests {
    @Test func aBirthDateArrivingLaterInTheSameImportReachesTheEarlierPrescriptions() throws {
        let source = try CLIHarness()
        try source.initVault()
        let common = [
            "add", "glasses", "--patient", "Ann Lowe", "--prescriber", "Dr Lee", "--od", "-1.00", "--os", "-1.00"
        ]
        _ = try source.add(common + ["--issued", "2026-01-01", "--expires", "2028-01-01"])
        _ = try source.add(common + ["--issued", "2026-02-01", "--expires", "2028-02-01", "--dob", "2001-02-03"])
        let exported = try source.run(["export", "--format", "json", "--out", "-"])
        #expect(exported.status == 0, "\(exported)")
        // As another tool wrote it: the older prescription names the patient without a birth date.
        var document = try source.json(exported.stdout)
        var items = try #require(document["prescriptions"] as? [[String: Any]])
        items.sort {
            (($0["prescription"] as? [String: Any])?["issued"] as? String ?? "")
                < (($1["prescription"] as? [String: Any])?["issued"] as? String ?? "")
        }
        var first = try #require(items[0]["prescription"] as? [String: Any])
        var patient = try #require(first["patient"] as? [String: Any])
        patient["birthDate"] = nil
        first["patient"] = patient
        items[0]["prescription"] = first
        document["prescriptions"] = items
        let file = source.path("two-visits.json")
        try JSONSerialization.data(withJSONObject: document).write(to: URL(fileURLWithPath: file))

        let target = try CLIHarness()
        try target.initVault()
        let imported = try target.run(["import", file])
        #expect(imported.status == 0, "\(imported)")
        let check = try target.run(["check"])
        #expect(check.status == 0, "\(check)")
        let list = try target.run(["list", "--format", "json"])
        let listed = try #require(try target.json(list.stdout)["prescriptions"] as? [[String: Any]])
        #expect(listed.count == 2)
        let patients = try target.run(["patients", "--format", "json"])
        #expect(patients.stdout.contains("2001-02-03"), "\(patients)")
    }

    /// A practice's file makes many patients at once: a few are named, many are counted in one line.
    @Test func manyNewPatientsAreCountedNotListed() throws {
        let source = try CLIHarness()
        try source.initVault()
        for n in 1...7 {
            _ = try source.add([
                "add", "glasses", "--patient", "Patient Number \(n)", "--prescriber", "Dr Lee", "--issued",
                "2026-01-0\(n)", "--expires", "2028-01-01", "--od", "-1.00", "--os", "-1.00"
            ])
        }
        let file = source.path("seven.json")
        #expect(try source.run(["export", "--format", "json", "--out", file]).status == 0)
        let few = try CLIHarness()
        try few.initVault()
        _ = try few.add([
            "add", "glasses", "--patient", "Solo", "--prescriber", "Dr Lee", "--issued", "2026-01-01", "--expires",
            "2028-01-01", "--od", "-1.00", "--os", "-1.00"
        ])
        let imported = try few.run(["import", file])
        #expect(imported.status == 0, "\(imported)")
        #expect(imported.stderr.contains("rxvault: 7 new patients ('rxvault patients' lists them)"), "\(imported)")
        #expect(!imported.stderr.contains("rxvault: new patient "), "\(imported)")
    }
}
