import Foundation
import Testing

/// `rxvault add --from ID`: renewing a prescription, through the binary (today is 2026-06-15).
@Suite struct RenewTests {
    @Test func copiesEveryFieldWithNewDates() throws {
        let cli = try CLIHarness()
        try cli.initVault()
        let old = try cli.add(CLIHarness.glassesArguments)
        let renewed = try cli.add(["add", "--from", old, "--expires", "2028-06-15"])
        #expect(renewed != old)
        func shown(_ id: String) throws -> [String: Any] {
            let r = try cli.run(["show", id, "--format", "json"])
            #expect(r.status == 0, "\(r)")
            return try cli.json(r.stdout)
        }
        let before = try shown(old)
        let after = try shown(renewed)
        #expect(after["issued"] as? String == "2026-06-15")
        #expect(after["expires"] as? String == "2028-06-15")
        #expect(after["version"] as? Int == 1)
        #expect(after["status"] as? String == "valid")
        // Everything else as it was: patient (the same record), prescriber, lenses, PD, note.
        for key in ["kind", "patient", "prescriber", "right", "left", "pupillaryDistance", "note"] {
            #expect(
                try JSONSerialization.data(withJSONObject: ["v": after[key] as Any], options: .sortedKeys)
                    == (try JSONSerialization.data(withJSONObject: ["v": before[key] as Any], options: .sortedKeys)),
                "\(key)")
        }
        #expect((after["patient"] as? [String: Any])?["id"] != nil)
        // The old one is now superseded by the renewal.
        #expect(before["status"] as? String == "superseded")
        #expect((before["supersededBy"] as? String)?.hasPrefix(renewed) == true)
    }

    @Test func flagsReplaceWhatIsCopied() throws {
        let cli = try CLIHarness()
        try cli.initVault()
        let old = try cli.add(CLIHarness.glassesArguments)
        let r = try cli.run([
            "add", "--from", old, "--issued", "2026-06-01", "--expires", "2028-06-01", "--od",
            "-2.50 -0.75 x180 add +2.25", "--prescriber", "Dr Rosalind Okafor", "--note", ""
        ])
        #expect(r.status == 0, "\(r)")
        let json = try cli.json(
            try cli.run(["show", r.stdout.trimmingCharacters(in: .newlines), "--format", "json"]).stdout)
        #expect(json["issued"] as? String == "2026-06-01")
        #expect((json["right"] as? [String: Any])?["notation"] as? String == "-2.50 -0.75 x180 add +2.25")
        // OD's vertex distance stays (the notation writes none); OS is copied whole.
        #expect(((json["right"] as? [String: Any])?["vertexDistance"] as? NSNumber)?.doubleValue == 12)
        #expect(
            (json["left"] as? [String: Any])?["notation"] as? String
                == "-1.75 -0.50 x170 add +2.00 prism 1.5 BI")
        #expect((json["prescriber"] as? [String: Any])?["name"] as? String == "Dr Rosalind Okafor")
        // The licence belonged to the copied prescriber: kept unless replaced, as edit does.
        #expect((json["prescriber"] as? [String: Any])?["licence"] as? String == "OPT-77123")
        #expect(json["note"] == nil)
        // Another patient name is another patient, by add's rule.
        let other = try cli.run(["add", "--from", old, "--expires", "2028-06-15", "--patient", "Kim Park"])
        #expect(other.status == 0 && other.stderr.contains("new patient"), "\(other)")
    }

    @Test func expiryIsNotCopied() throws {
        let cli = try CLIHarness()
        try cli.initVault()
        let glasses = try cli.add(CLIHarness.glassesArguments)
        let contacts = try cli.add(CLIHarness.contactsArguments)
        // Contacts need one, as add says; nothing is written.
        let refused = try cli.run(["add", "--from", contacts])
        #expect(refused.status == 65 && refused.stderr.contains("expiry date"), "\(refused)")
        #expect(try cli.run(["list"]).stdout.split(separator: "\n").count == 3)
        // Glasses may go without, with add's warning.
        let undated = try cli.run(["add", "--from", glasses])
        #expect(undated.status == 0 && undated.stderr.contains("no expiry date"), "\(undated)")
        let json = try cli.json(
            try cli.run(["show", undated.stdout.trimmingCharacters(in: .newlines), "--format", "json"]).stdout)
        #expect(json["expires"] == nil)
    }

    @Test func expiresTakesADurationFromTheIssueDate() throws {
        let cli = try CLIHarness()
        try cli.initVault()
        func expires(_ id: String) throws -> String? {
            try cli.json(try cli.run(["show", id, "--format", "json"]).stdout)["expires"] as? String
        }
        var arguments = CLIHarness.glassesArguments
        arguments[arguments.firstIndex(of: "2028-03-01")!] = "2y"
        let glasses = try cli.add(arguments)
        #expect(try expires(glasses) == "2028-03-01")
        // A renewal is issued today (2026-06-15); years and months by the calendar.
        #expect(try expires(try cli.add(["add", "--from", glasses, "--expires", "18m"])) == "2027-12-15")
        #expect(try expires(try cli.add(["add", "--from", glasses, "--expires", "90d"])) == "2026-09-13")
        // A 29 February plus a year is the 28th; edit counts from the issue date it leaves.
        #expect(try cli.run(["edit", glasses, "--issued", "2024-02-29", "--expires", "1y"]).status == 0)
        #expect(try expires(glasses) == "2025-02-28")
        let bad = try cli.run(["add", "--from", glasses, "--expires", "2q"])
        #expect(bad.status == 65 && bad.stderr.contains("expiry date '2q'"), "\(bad)")
        #expect(bad.stderr.contains("2y, 18m"), "\(bad)")
    }

    @Test func unknownIDsFailAsShowFails() throws {
        let cli = try CLIHarness()
        try cli.initVault()
        let glasses = try cli.add(CLIHarness.glassesArguments)
        for id in ["ffffffff", "zz", "f"] {
            let show = try cli.run(["show", id])
            let renew = try cli.run(["add", "--from", id, "--expires", "2028-01-01"])
            #expect(show.status != 0 && renew.status == show.status, "\(id): \(renew)")
            #expect(renew.stderr == show.stderr, "\(id)")
        }
        // The kind, when given, must be the source's; without either, the kind is missing.
        let kind = try cli.run(["add", "contacts", "--from", glasses, "--expires", "2028-01-01"])
        #expect(kind.status == 64 && kind.stderr.contains("glasses prescription"), "\(kind)")
        let none = try cli.run(["add", "--patient", "Kim Park"])
        #expect(none.status == 64 && none.stderr.contains("glasses or contacts"), "\(none)")
        // Owner only, as add.
        #expect(
            try cli.run(["client", "add", "shop", "--generate", "--identity-out", cli.path("shop.key")]).status == 0)
        #expect(try cli.run(["grant", "shop", glasses]).status == 0)
        let client = try cli.run(["--identity", cli.path("shop.key"), "add", "--from", glasses])
        #expect(client.status == 64, "\(client)")
    }
}
