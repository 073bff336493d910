import Foundation
import Testing

/// `rxvault due`: the prescriptions coming due (and so the exams to book), through the binary.
/// The harness's today is 2026-06-15.
@Suite struct DueTests {
    /// A vault with one of each case `due` tells apart.
    struct Recalls {
        let cli: CLIHarness
        /// Quintessa's glasses of 2024, expired, replaced by `glasses` (2026, to 2028): not due.
        let oldGlasses: String
        let glasses: String
        /// Quintessa's contacts, expiring 2026-07-01 (in 16 days): an exam to book.
        let contacts: String
        /// Kim's glasses, expired 2026-01-01 and the newest Kim has: the exam is overdue.
        let kim: String
        /// "Rivera, Sam" (a comma, for iCalendar's escaping): glasses expiring 2026-07-20.
        let sam: String

        init() throws {
            cli = try CLIHarness()
            try cli.initVault()
            oldGlasses = try cli.add([
                "add", "glasses", "--patient", "Quintessa Marlowe", "--dob", "1980-04-02", "--prescriber", "Dr Lee",
                "--issued", "2024-03-01", "--expires", "2026-03-01", "--od", "-2.00", "--os", "-1.50"
            ])
            glasses = try cli.add(CLIHarness.glassesArguments)
            contacts = try cli.add(CLIHarness.contactsArguments)
            kim = try cli.add([
                "add", "glasses", "--patient", "Kim Park", "--prescriber", "Dr Alvarez", "--issued", "2024-01-01",
                "--expires", "2026-01-01", "--od", "+1.50", "--os", "+1.25"
            ])
            sam = try cli.add([
                "add", "glasses", "--patient", "Rivera, Sam", "--prescriber", "Dr Alvarez", "--issued", "2024-07-20",
                "--expires", "2026-07-20", "--od", "-0.50", "--os", "-0.75"
            ])
            // Withdrawn, or without an expiry date: never due.
            let cancelled = try cli.add([
                "add", "contacts", "--patient", "Kim Park", "--prescriber", "Dr Alvarez", "--issued", "2026-01-01",
                "--expires", "2026-06-20", "--od", "+1.50 bc 8.6 dia 14.2", "--os", "+1.25 bc 8.6 dia 14.2",
                "--brand", "Acme"
            ])
            #expect(try cli.run(["edit", cancelled, "--status", "cancelled"]).status == 0)
            _ = try cli.add([
                "add", "glasses", "--patient", "Noor Haddad", "--prescriber", "Dr Alvarez", "--issued", "2025-01-01",
                "--od", "-1.00", "--os", "-1.00"
            ])
        }

        func ids(_ arguments: [String]) throws -> [String] {
            let r = try cli.run(["due", "--format", "json"] + arguments)
            #expect(r.status == 0, "\(r)")
            return (try cli.json(r.stdout)["due"] as? [[String: Any]] ?? []).compactMap {
                ($0["id"] as? String).map { String($0.prefix(8)) }
            }
        }
    }

    @Test func listsTheNewestOfEachKindPerPatientSoonestFirst() throws {
        let v = try Recalls()
        // Default window 60 days: Kim's (expired), Quintessa's contacts, Sam's glasses; not the
        // superseded, the withdrawn, the undated, nor glasses valid to 2028.
        #expect(try v.ids([]) == [v.kim, v.contacts, v.sam])
        #expect(try v.ids(["--within", "0d"]) == [v.kim])
        #expect(try v.ids(["--within", "20d"]) == [v.kim, v.contacts])
        #expect(try v.ids(["--within", "3y"]) == [v.kim, v.contacts, v.sam, v.glasses])

        let table = try v.cli.run(["due"])
        #expect(table.status == 0, "\(table)")
        let lines = table.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 4, "\(table)")
        #expect(lines[0].hasPrefix("EXPIRES"))
        #expect(lines[1].contains(v.kim) && lines[1].contains("Kim Park") && lines[1].contains("expired 165 days ago"))
        #expect(lines[1].contains("exam overdue"))
        #expect(lines[2].contains(v.contacts) && lines[2].contains("expires in 16 days"))
        #expect(lines[2].contains("book an exam") && lines[2].contains("contacts"))
        #expect(lines[3].contains("Rivera, Sam"))
        #expect(!table.stdout.contains(v.oldGlasses))

        let json = try v.cli.json(try v.cli.run(["due", "--format", "json"]).stdout)
        #expect(json["schema"] as? String == "rxvault/due/v1")
        #expect(json["today"] as? String == "2026-06-15")
        #expect(json["withinDays"] as? Int == 60)
        let first = try #require((json["due"] as? [[String: Any]])?.first)
        #expect(first["daysLeft"] as? Int == -165)
        #expect(first["status"] as? String == "expired")
        #expect(first["exam"] as? String == "overdue")
        #expect(first["expires"] as? String == "2026-01-01")
        #expect((first["patient"] as? [String: Any])?["name"] as? String == "Kim Park")
        #expect((first["prescriber"] as? [String: Any])?["name"] as? String == "Dr Alvarez")
    }

    @Test func exitsThreeWhenNothingIsDue() throws {
        let cli = try CLIHarness()
        try cli.initVault()
        _ = try cli.add(CLIHarness.glassesArguments)
        let table = try cli.run(["due"])
        #expect(table.status == 3, "\(table)")
        #expect(table.stdout.isEmpty && table.stderr == "rxvault: nothing is due within 60 days\n")
        let json = try cli.run(["due", "--format", "json"])
        #expect(json.status == 3 && json.stderr.isEmpty, "\(json)")
        #expect((try cli.json(json.stdout)["due"] as? [Any])?.isEmpty == true)
        // An empty calendar, so a subscription drops what is done.
        let ics = try cli.run(["due", "--format", "ics"])
        #expect(ics.status == 3, "\(ics)")
        #expect(ics.stdout.hasPrefix("BEGIN:VCALENDAR\r\n") && !ics.stdout.contains("VEVENT"))
        // Something due: 0. An empty vault: nothing due.
        #expect(try cli.run(["due", "--within", "2y"]).status == 0)
        let empty = try CLIHarness()
        try empty.initVault()
        #expect(try empty.run(["due"]).status == 3)
    }

    @Test func refusesWhatIsNotADurationAndReadsOtherVaults() throws {
        let v = try Recalls()
        let bad = try v.cli.run(["due", "--within", "soon"])
        #expect(bad.status == 65 && bad.stderr.contains("--within 'soon'"), "\(bad)")
        let badJSON = try v.cli.run(["due", "--within", "soon", "--format", "json"])
        #expect(badJSON.status == 65 && badJSON.stderr.contains("\"invalid-input\""), "\(badJSON)")
        #expect(try v.cli.run(["due", "--format", "csv"]).status == 64)
        // --vault over RXVAULT_PATH, as every read command.
        let missing = try v.cli.run(["due", "--vault", v.cli.path("none.rxv")])
        #expect(missing.status == 66, "\(missing)")
        let moved = v.cli.path("moved.rxv")
        try FileManager.default.copyItem(atPath: v.cli.vaultPath, toPath: moved)
        let elsewhere = try v.cli.run(["due", "--vault", moved], environment: ["RXVAULT_PATH": v.cli.path("none.rxv")])
        #expect(elsewhere.status == 0 && elsewhere.stdout.contains(v.kim), "\(elsewhere)")
        // A client app sees what it was granted only: the old glasses, granted alone, read as
        // expired (the newer one is not its to see), so due for it.
        #expect(
            try v.cli.run(["client", "add", "shop", "--generate", "--identity-out", v.cli.path("shop.key")]).status
                == 0)
        #expect(try v.cli.run(["grant", "shop", v.oldGlasses]).status == 0)
        let client = try v.cli.run(["--identity", v.cli.path("shop.key"), "due", "--format", "json"])
        #expect(client.status == 0, "\(client)")
        let ids = (try v.cli.json(client.stdout)["due"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
        #expect(ids.map { String($0.prefix(8)) } == [v.oldGlasses])
    }

    @Test func writesAnICalendarWithStableUIDs() throws {
        let v = try Recalls()
        let stamp = ["RXVAULT_NOW": "2026-06-15T08:30:00Z"]
        let r = try v.cli.run(["due", "--format", "ics"], environment: stamp)
        #expect(r.status == 0, "\(r)")
        let text = r.stdout
        #expect(text.hasPrefix("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//rxvault//rxvault "))
        #expect(text.hasSuffix("END:VCALENDAR\r\n"))
        // Every line ends in CRLF, none is longer than 75 octets.
        let bytes = Array(text.utf8)
        for (i, byte) in bytes.enumerated() where byte == 0x0A { #expect(i > 0 && bytes[i - 1] == 0x0D) }
        let lines = text.components(separatedBy: "\r\n").dropLast()
        #expect(lines.allSatisfy { $0.utf8.count <= 75 })
        // Unfolded: one event per recall, on its expiry date, its UID from the prescription's id.
        let unfolded = text.replacingOccurrences(of: "\r\n ", with: "").components(separatedBy: "\r\n")
        #expect(unfolded.filter { $0 == "BEGIN:VEVENT" }.count == 3)
        let uids = unfolded.filter { $0.hasPrefix("UID:") }
        #expect(uids.count == 3)
        #expect(uids.first?.hasPrefix("UID:" + v.kim) == true)
        #expect(unfolded.contains("DTSTART;VALUE=DATE:20260101"))
        #expect(unfolded.contains("DTSTAMP:20260615T083000Z"))
        #expect(unfolded.contains { $0.hasPrefix("SUMMARY:Eye exam overdue: Kim Park") })
        // A comma in a name is escaped (TEXT, RFC 5545 3.3.11).
        #expect(unfolded.contains("SUMMARY:Eye exam due: Rivera\\, Sam (glasses)"))
        #expect(text.contains("BEGIN:VEVENT\r\nUID:"))
        // Run again the next day: the same UIDs, so a calendar updates rather than duplicates.
        let again = try v.cli.run(
            ["due", "--format", "ics"], environment: ["RXVAULT_NOW": "2026-06-16T08:30:00Z"])
        let uidsAgain = again.stdout.replacingOccurrences(of: "\r\n ", with: "").components(separatedBy: "\r\n")
            .filter { $0.hasPrefix("UID:") }
        #expect(uidsAgain == uids)
    }

    @Test func eachEventCarriesAnAlarmAMonthBeforeUnlessToldOtherwise() throws {
        let v = try Recalls()
        func unfolded(_ arguments: [String]) throws -> [String] {
            let r = try v.cli.run(["due", "--format", "ics"] + arguments)
            #expect(r.status == 0, "\(r)")
            return r.stdout.replacingOccurrences(of: "\r\n ", with: "").components(separatedBy: "\r\n")
        }
        // One display alarm inside each of the three events, 30 days before the day.
        let lines = try unfolded([])
        #expect(lines.filter { $0 == "BEGIN:VALARM" }.count == 3)
        #expect(lines.filter { $0 == "TRIGGER:-P30D" }.count == 3)
        #expect(lines.filter { $0 == "ACTION:DISPLAY" }.count == 3)
        #expect(lines.contains("DESCRIPTION:Eye exam due: Rivera\\, Sam (glasses)"))
        let event = lines.drop { $0 != "BEGIN:VEVENT" }.prefix { $0 != "END:VEVENT" }
        #expect(event.contains("BEGIN:VALARM") && event.contains("END:VALARM"), "\(event)")
        #expect(try unfolded(["--alarm", "2w"]).filter { $0 == "TRIGGER:-P14D" }.count == 3)
        #expect(try unfolded(["--alarm", "0d"]).filter { $0 == "TRIGGER:PT0S" }.count == 3)
        #expect(!(try unfolded(["--alarm", "none"]).contains("BEGIN:VALARM")))
        let bad = try v.cli.run(["due", "--format", "ics", "--alarm", "soon"])
        #expect(bad.status == 65 && bad.stderr.contains("--alarm 'soon'"), "\(bad)")
    }

    @Test func longNamesAreFoldedBetweenCharacters() throws {
        let cli = try CLIHarness()
        try cli.initVault()
        let name = "Zoë Ångström-Þórsdóttir de la Fuente y Montenegro-Écija Łukasiewicz"
        _ = try cli.add([
            "add", "glasses", "--patient", name, "--prescriber", "Dr Alvarez", "--issued", "2025-01-01",
            "--expires", "2026-07-01", "--od", "-1.00", "--os", "-1.00"
        ])
        let r = try cli.run(["due", "--format", "ics"])
        #expect(r.status == 0, "\(r)")
        let lines = r.stdout.components(separatedBy: "\r\n").dropLast()
        // Folding never cuts a UTF-8 sequence: each line is valid UTF-8 on its own.
        #expect(lines.allSatisfy { $0.utf8.count <= 75 && !$0.contains("\u{FFFD}") })
        #expect(lines.contains { $0.hasPrefix(" ") })
        let unfolded = r.stdout.replacingOccurrences(of: "\r\n ", with: "")
        #expect(unfolded.contains("SUMMARY:Eye exam due: \(name) (glasses)\r\n"))
    }
}
