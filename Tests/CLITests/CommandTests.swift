import Foundation
import RxStore
import Testing

/// Every command through the binary: stdout, stderr, exit codes, and the vault afterwards.
@Suite struct CommandTests {
    @Test func addListShowAsAUserWould() throws {
        let cli = try CLIHarness()
        try cli.initVault()
        let glasses = try cli.add(CLIHarness.glassesArguments)
        let contacts = try cli.add(CLIHarness.contactsArguments)
        #expect(glasses.count == 8 && contacts.count == 8)

        let list = try cli.run(["list"])
        #expect(list.status == 0)
        let lines = list.stdout.split(separator: "\n")
        #expect(lines.count == 3)
        #expect(lines[0].hasPrefix("ID"))
        #expect(list.stdout.contains("\(glasses)  glasses   Quintessa Marlowe  2026-03-01  2028-03-01  valid"))
        // RXVAULT_TODAY is 2026-06-15: the contacts expire on 2026-07-01, within 60 days.
        #expect(list.stdout.contains("expiring in 16 days"))
        #expect(list.stdout.contains("-2.25 -0.75 x180 add +2.00"))

        let show = try cli.run(["show", glasses])
        #expect(show.status == 0, "\(show)")
        #expect(show.stdout.contains("Quintessa Marlowe (born 1980-04-02)"))
        #expect(show.stdout.contains("Dr Ignatius Fairweather, licence OPT-77123"))
        #expect(show.stdout.contains("63.5 mm far, 60.5 mm near"))
        #expect(show.stdout.contains("OD   -2.25  -0.75  180   +2.00  -       12.0"))
        #expect(show.stdout.contains("OS   -1.75  -0.50  170   +2.00  1.5 BI  12.0"))
        #expect(show.stdout.contains("-2.625"), "spherical equivalent")

        let plus = try cli.run(["show", glasses, "--cyl", "plus"])
        #expect(plus.stdout.contains("OD   -3.00  +0.75  90"))
        #expect(plus.stdout.contains("OS   -2.25  +0.50  80"))

        let contactsShow = try cli.run(["show", contacts])
        #expect(contactsShow.stdout.contains("OD   -3.25  -      -     -    8.6  14.2  Zylofocus Aquaclear"))
        #expect(contactsShow.stdout.contains("expires today") == false)
    }

    @Test func jsonShapeIsStableAndComplete() throws {
        let cli = try CLIHarness()
        try cli.initVault()
        let id = try cli.add(CLIHarness.glassesArguments)
        let r = try cli.run(["show", id, "--format", "json"])
        #expect(r.status == 0)
        let object = try cli.json(r.stdout)
        #expect((object["id"] as? String)?.hasPrefix(id) == true)
        #expect(object["version"] as? Int == 1)
        #expect(object["kind"] as? String == "glasses")
        #expect(object["status"] as? String == "valid")
        #expect(object["issued"] as? String == "2026-03-01")
        #expect((object["patient"] as? [String: Any])?["birthDate"] as? String == "1980-04-02")
        let right = try #require(object["right"] as? [String: Any])
        #expect(right["sphere"] as? Double == -2.25)
        #expect(right["cylinder"] as? Double == -0.75)
        #expect(right["axis"] as? Int == 180)
        #expect(right["add"] as? Double == 2)
        #expect(right["vertexDistance"] as? Double == 12)
        #expect(right["notation"] as? String == "-2.25 -0.75 x180 add +2.00")
        #expect(right["sphericalEquivalent"] as? Double == -2.625)
        let left = try #require(object["left"] as? [String: Any])
        #expect(((left["prism"] as? [String: Any])?["horizontal"] as? [String: Any])?["base"] as? String == "in")
        #expect((object["pupillaryDistance"] as? [String: Any])?["near"] as? Double == 60.5)

        let list = try cli.json(try cli.run(["list", "--format", "json"]).stdout)
        #expect(list["schema"] as? String == "rxvault/prescriptions/v1")
        #expect((list["prescriptions"] as? [Any])?.count == 1)
    }

    @Test func csvHasOneRowPerEyeAndDefusesFormulas() throws {
        let cli = try CLIHarness()
        try cli.initVault()
        var arguments = CLIHarness.contactsArguments
        arguments[arguments.firstIndex(of: "--patient")! + 1] = "=HYPERLINK(\"x\")"
        _ = try cli.add(arguments)
        let r = try cli.run(["list", "--format", "csv"])
        let lines = r.stdout.split(separator: "\n")
        #expect(lines.count == 3)
        #expect(lines[0].hasPrefix("id,version,kind,status,patient"))
        #expect(lines[1].contains(",right,-3.25,"))
        #expect(lines[2].contains(",left,-2.75,-1.25,170,"))
        #expect(lines[1].contains("\"'=HYPERLINK(\"\"x\"\")\""))
    }

    @Test func refusalsNameEyeFieldValueAndWriteNothing() throws {
        let cli = try CLIHarness()
        try cli.initVault()
        let before = cli.vaultFileBytes()
        let r = try cli.run([
            "add", "glasses", "--patient", "Zebedee Quorn", "--prescriber", "Dr X", "--issued", "2026-03-01",
            "--od", "-31.00 -0.75", "--os", "+1.13 add 4.25", "--pd", "95"
        ])
        #expect(r.status == 65)
        #expect(r.stderr.contains("OD sphere -31.00: accepted -30.00 to +30.00 in 0.25 steps"))
        #expect(r.stderr.contains("OD axis: required with a cylinder"))
        #expect(r.stderr.contains("OS sphere +1.13"))
        #expect(r.stderr.contains("OS add +4.25: accepted +0.25 to +4.00"))
        #expect(r.stderr.contains("PD 95: accepted 30 to 85 mm"))
        #expect(!r.stderr.contains("Zebedee"), "no patient data in errors")
        #expect(r.stdout.isEmpty)
        #expect(cli.vaultFileBytes() == before)

        let future = try cli.run([
            "add", "glasses", "--patient", "P", "--prescriber", "D", "--issued", "2026-06-16", "--od", "plano"
        ])
        #expect(future.status == 65)
        #expect(future.stderr.contains("issue date 2026-06-16: must not be in the future"))

        let badDate = try cli.run([
            "add", "glasses", "--patient", "P", "--prescriber", "D", "--issued", "2026-02-30", "--od", "plano"
        ])
        #expect(badDate.status == 65)
        #expect(badDate.stderr.contains("issue date '2026-02-30': not a date in the form YYYY-MM-DD"))

        let notation = try cli.run([
            "add", "glasses", "--patient", "P", "--prescriber", "D", "--issued", "2026-01-01", "--od", "-2.00 x"
        ])
        #expect(notation.status == 65)
        #expect(notation.stderr.contains("OD notation: expected an axis"))

        let missing = try cli.run(["add", "contacts", "--od", "plano"])
        #expect(missing.status == 64)
        #expect(missing.stderr.contains("missing --patient, --prescriber, --issued"))
        #expect(cli.vaultFileBytes() == before)
    }

    @Test func perFieldFlagsMatchTheNotation() throws {
        let cli = try CLIHarness()
        try cli.initVault()
        let byFields = try cli.add([
            "add", "glasses", "--patient", "P", "--prescriber", "D", "--issued", "2026-01-01",
            "--od-sphere", "-2.25", "--od-cyl", "-0.75", "--od-axis", "180", "--od-add", "+2.00",
            "--os-sphere", "plano", "--os-prism", "1 BU 2 BO", "--pd-od", "32", "--pd-os", "31.5"
        ])
        let json = try cli.json(try cli.run(["show", byFields, "--format", "json"]).stdout)
        let right = try #require(json["right"] as? [String: Any])
        #expect(right["notation"] as? String == "-2.25 -0.75 x180 add +2.00")
        #expect((right["pupillaryDistance"] as? [String: Any])?["far"] as? Double == 32)
        let left = try #require(json["left"] as? [String: Any])
        #expect(left["notation"] as? String == "plano prism 1 BU 2 BO")
        #expect(json["pupillaryDistance"] == nil)
        let warnings = try cli.run([
            "add", "glasses", "--patient", "P", "--prescriber", "D", "--issued", "2026-01-01",
            "--od", "-1.00 -0.50 x0 add +1.00", "--os", "-1.00 add +1.50"
        ])
        #expect(warnings.status == 0)
        #expect(warnings.stderr.contains("rxvault: warning: OD axis 0 read as 180"))
        #expect(warnings.stderr.contains("add +1.00 and OS add +1.50 differ"))
        #expect(warnings.stderr.contains("no expiry date"))
        // An edit warns of what it introduces, not of what the prescription already had.
        let id = warnings.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let edited = try cli.run(["edit", id, "--note", "checked"])
        #expect(edited.status == 0 && !edited.stderr.contains("warning"), "\(edited)")
        let changed = try cli.run(["edit", id, "--os", "-1.00 add +1.75"])
        #expect(changed.stderr.contains("add +1.00 and OS add +1.75 differ"), "\(changed)")
        #expect(!changed.stderr.contains("no expiry date"), "\(changed)")
    }

    @Test func editKeepsHistoryAndPrefixesWork() throws {
        let cli = try CLIHarness()
        try cli.initVault()
        let id = try cli.add(CLIHarness.contactsArguments)
        let edit = try cli.run(["edit", String(id.prefix(5)), "--os", "-3.00 -1.25 x170", "--os-brand", "Other Brand"])
        #expect(edit.status == 0, "\(edit)")
        #expect(edit.stdout == "\(id) version 2\n")
        let same = try cli.run(["edit", id, "--os-brand", "Other Brand"])
        #expect(same.status == 0)
        #expect(same.stderr.contains("nothing changed"))
        let nothing = try cli.run(["edit", id])
        #expect(nothing.status == 64)
        let history = try cli.run(["history", id])
        #expect(history.stdout.split(separator: "\n").count == 3)
        #expect(history.stdout.contains("-2.75 -1.25 x170 bc 8.7 dia 14.5"))
        #expect(
            history.stdout.contains("-3.00 -1.25 x170 bc 8.7 dia 14.5"), "bc and dia kept when the notation omits them")
        let v1 = try cli.json(try cli.run(["show", id, "--version", "1", "--format", "json"]).stdout)
        #expect((v1["left"] as? [String: Any])?["brand"] as? String == "Zylofocus Aquaclear")
        let dropEye = try cli.run(["edit", id, "--no-od"])
        #expect(dropEye.status == 0)
        let both = try cli.run(["edit", id, "--no-os"])
        #expect(both.status == 65, "removing the last eye is refused")
        #expect(both.stderr.contains("give at least one eye"))
    }

    @Test func idsThatDoNotMatch() throws {
        let cli = try CLIHarness()
        try cli.initVault()
        let id = try cli.add(CLIHarness.glassesArguments)
        let other = id.hasPrefix("0") ? "ffff" : "0000"
        let missing = try cli.run(["show", other])
        #expect(missing.status == 67)
        #expect(missing.stderr.contains("rxvault: error: no prescription \(other)"))
        let malformed = try cli.run(["show", "zz"])
        #expect(malformed.status == 64)
        #expect(try cli.run(["remove", other, "--yes"]).status == 67)
    }

    @Test func removeNeedsConfirmationOffATerminal() throws {
        let cli = try CLIHarness()
        try cli.initVault()
        let id = try cli.add(CLIHarness.glassesArguments)
        let refused = try cli.run(["remove", id])
        #expect(refused.status == 64)
        #expect(refused.stderr.contains("--yes"))
        #expect(try cli.run(["show", id]).status == 0)
        let removed = try cli.run(["remove", id, "-y"])
        #expect(removed.status == 0)
        #expect(removed.stdout == "removed \(id)\n")
    }

    @Test func emptyVaultListsNothing() throws {
        let cli = try CLIHarness()
        try cli.initVault()
        let table = try cli.run(["list"])
        #expect(table.status == 0 && table.stdout.isEmpty)
        #expect(table.stderr.contains("no prescriptions yet"))
        let json = try cli.json(try cli.run(["list", "--format", "json"]).stdout)
        #expect((json["prescriptions"] as? [Any])?.isEmpty == true)
    }

    @Test func versionAndHelp() throws {
        let cli = try CLIHarness()
        #expect(try cli.run(["--version"]).stdout == "0.5.0-dev\n")
        let help = try cli.run(["add", "--help"])
        #expect(help.status == 0)
        #expect(help.stdout.contains("--od <spec>"))
        #expect(try cli.run(["frobnicate"]).status == 64)
    }
}
