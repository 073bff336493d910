import Foundation
import RxStore
import Testing

/// `rxvault measurement` (issue 26) through the binary: axial length and visual acuity recorded,
/// listed, edited, removed and exported as FHIR; values read strictly with documented exit codes;
/// sealed in the file; covered by `check`, backups and restores like the patient record they live
/// in; and shown by `trend` beside the refraction.
@Suite struct MeasurementTests {
    /// A child with a birth date and two yearly glasses prescriptions.
    func child(_ cli: CLIHarness) throws {
        try cli.initVault()
        _ = try cli.add([
            "add", "glasses", "--patient", "Mia Chen", "--dob", "2016-05-10", "--prescriber", "Dr Ana Lee",
            "--issued", "2025-03-01", "--expires", "2027-03-01", "--od", "-1.50", "--os", "-1.25"
        ])
        _ = try cli.add([
            "add", "glasses", "--patient", "Mia Chen", "--prescriber", "Dr Ana Lee",
            "--issued", "2026-03-01", "--expires", "2028-03-01", "--od", "-2.00", "--os", "-1.75"
        ])
    }

    func measurements(_ cli: CLIHarness) throws -> [[String: Any]] {
        let r = try cli.run(["measurement", "list", "--format", "json"])
        #expect(r.status == 0, "\(r)")
        return try cli.json(r.stdout)["measurements"] as? [[String: Any]] ?? []
    }

    /// A birth date that a later `add` fills in for a patient who had none answers to the
    /// patient's measurements too: one after a measurement is refused and nothing is written.
    @Test func aBirthDateFilledInByAddIsNotAfterAMeasurement() throws {
        let cli = try CLIHarness()
        try cli.initVault()
        _ = try cli.add([
            "add", "glasses", "--patient", "Noor Haddad", "--prescriber", "Dr Ana Lee",
            "--issued", "2024-03-01", "--expires", "2026-03-01", "--od", "-1.00", "--os", "-0.75"
        ])
        _ = try cli.add(["measurement", "add", "Noor Haddad", "--date", "2024-03-01", "--axial-length-od", "23.52"])
        let later = try cli.run([
            "add", "glasses", "--patient", "Noor Haddad", "--dob", "2025-01-01", "--prescriber", "Dr Ana Lee",
            "--issued", "2026-03-01", "--expires", "2028-03-01", "--od", "-1.50", "--os", "-1.25"
        ])
        #expect(later.status == 65 && later.stderr.contains("is after measurement"), "\(later)")
        let listed = try cli.json(try cli.run(["list", "--format", "json"]).stdout)
        #expect((listed["prescriptions"] as? [[String: Any]])?.count == 1)
        let patient = try cli.run(["patient", "show", "Noor Haddad"])
        #expect(patient.status == 0 && !patient.stdout.contains("2025-01-01"), "\(patient)")
        #expect(try cli.run(["check"]).status == 0)
    }

    @Test func addListEditRemove() throws {
        let cli = try CLIHarness()
        try child(cli)
        let first = try cli.add([
            "measurement", "add", "Mia Chen", "--date", "2025-03-01", "--axial-length-od", "23.8",
            "--axial-length-os", "23.71", "--device", "IOLMaster 700", "--cycloplegic", "--va-od", "6/6",
            "--va-os-uncorrected", "20/40", "--va-ou", "logMAR -0.10"
        ])
        #expect(first.count == 8)
        var listed = try measurements(cli)
        #expect(listed.count == 1)
        let m = try #require(listed.first)
        #expect(m["date"] as? String == "2025-03-01")
        #expect((m["axialLengthOD"] as? NSNumber)?.doubleValue == 23.8)
        #expect((m["axialLengthOS"] as? NSNumber)?.doubleValue == 23.71)
        #expect(m["device"] as? String == "IOLMaster 700")
        #expect(m["cycloplegic"] as? Bool == true)
        let acuity = m["acuity"] as? [[String: Any]] ?? []
        #expect(acuity.count == 3)
        // Kept as written, with logMAR beside: 20/40 is 0.30, 6/6 is 0.00.
        let uncorrected = acuity.first { $0["corrected"] as? Bool == false }
        #expect(uncorrected?["written"] as? String == "20/40")
        #expect(uncorrected?["notation"] as? String == "snellen-feet")
        #expect((uncorrected?["logMAR"] as? NSNumber)?.doubleValue == 0.3)
        #expect(acuity.contains { $0["written"] as? String == "6/6" && ($0["logMAR"] as? NSNumber)?.doubleValue == 0 })
        #expect(acuity.contains { $0["written"] as? String == "logMAR -0.10" && $0["eye"] as? String == "ou" })

        let table = try cli.run(["measurement", "list", "Mia"])
        #expect(
            table.status == 0 && table.stdout.contains("23.80 mm") && table.stdout.contains("OS sc 20/40"), "\(table)")

        let edited = try cli.run([
            "measurement", "edit", first, "--axial-length-od", "23.85", "--clear", "device", "--cycloplegic", "false"
        ])
        #expect(edited.status == 0, "\(edited)")
        listed = try measurements(cli)
        #expect((listed.first?["axialLengthOD"] as? NSNumber)?.doubleValue == 23.85)
        #expect(listed.first?["device"] == nil && listed.first?["cycloplegic"] as? Bool == false)
        #expect(try cli.run(["measurement", "edit", first]).status == 64)

        let shown = try cli.run(["patient", "show", "Mia Chen"])
        #expect(shown.stdout.contains("1, the last on 2025-03-01"), "\(shown)")
        // A birth date after a measurement is refused, as a measurement before the birth date is.
        let later = try cli.run(["patient", "rename", "Mia Chen", "--dob", "2025-04-01"])
        #expect(later.status == 65 && later.stderr.contains("is after measurement \(first)"), "\(later)")
        // A patient with measurements is not removed with them unnoticed.
        let refused = try cli.run(["patient", "remove", "Mia Chen", "--yes"])
        #expect(refused.status == 65, "\(refused)")

        let unconfirmed = try cli.run(["measurement", "remove", first])
        #expect(unconfirmed.status == 64 && unconfirmed.stderr.contains("--yes"), "\(unconfirmed)")
        let removed = try cli.run(["measurement", "remove", first, "--yes"])
        #expect(removed.status == 0 && removed.stdout.contains("removed measurement \(first)"), "\(removed)")
        #expect(try measurements(cli).isEmpty)
        #expect(try cli.run(["measurement", "remove", first, "--yes"]).status == 67)
        #expect(try cli.run(["check"]).status == 0)
    }

    /// Every wrong value is refused before anything is written, with its exit code and a message
    /// naming the option and the value.
    @Test func wrongValuesAreRefused() throws {
        let cli = try CLIHarness()
        try child(cli)
        func refused(_ extra: [String], _ status: Int32, _ text: String, date: String = "2026-03-01") throws {
            let r = try cli.run(["measurement", "add", "Mia Chen", "--date", date] + extra)
            #expect(r.status == status, "\(extra): \(r)")
            #expect(r.stderr.contains(text), "\(extra): \(r.stderr)")
        }
        try refused(["--axial-length-od", "14.99"], 65, "--axial-length-od 14.99 mm is outside 15.00-35.00 mm")
        try refused(["--axial-length-os", "35.01"], 65, "outside 15.00-35.00 mm")
        try refused(["--axial-length-od", "2.41"], 65, "2.41 mm is outside")
        try refused(["--axial-length-od", "23,45"], 65, "not a comma")
        try refused(["--axial-length-od", "23.456"], 65, "at most two decimals")
        try refused(["--va-od", "0.00"], 65, "a logMAR value is written 'logMAR 0.00'")
        try refused(["--va-od", "6/6-2"], 65, "letters missed")
        try refused(["--va-od", "5/10"], 65, "20/x (feet) or 6/x")
        try refused(["--va-od", "CF"], 65, "count fingers")
        try refused(["--va-os", "0,8"], 65, "not a comma")
        try refused(["--va-ou", "20/8"], 65, "outside -0.30 to 2.00")
        try refused(["--va-od-uncorrected", "logMAR x"], 65, "a logMAR value is a number")
        try refused(["--va-od", "6/6"], 65, "in the future", date: "2026-06-16")
        try refused(["--va-od", "6/6"], 65, "before the patient's birth date", date: "2016-05-09")
        try refused(["--va-od", "6/6"], 65, "--date '2026-02-30'", date: "2026-02-30")
        try refused([], 64, "nothing to record")
        let unknown = try cli.run(["measurement", "add", "Nobody", "--date", "2026-03-01", "--va-od", "6/6"])
        #expect(unknown.status == 67, "\(unknown)")
        #expect(try cli.run(["measurement", "remove", "0123456789abcdef", "--yes"]).status == 67)
        #expect(try cli.run(["measurement", "remove", "xyz", "--yes"]).status == 64)
        #expect(try measurements(cli).isEmpty)
        // Accepted forms: decimal, metres with a half line, the word after the number.
        for va in ["1.0", "0.5", "6/7.5", "4/4", "0.20 logMAR", "20/2000"] {
            let r = try cli.run(["measurement", "add", "Mia Chen", "--date", "2026-03-01", "--va-od", va])
            #expect(r.status == 0, "\(va): \(r)")
        }
    }

    /// The values are inside the patient's sealed record: nothing of them is in the file.
    @Test func sealedInTheFile() throws {
        let cli = try CLIHarness()
        try child(cli)
        _ = try cli.add([
            "measurement", "add", "Mia Chen", "--date", "2026-03-01", "--axial-length-od", "24.12",
            "--device", "Biometer Zeta-9", "--va-od", "6/7.5"
        ])
        let bytes = cli.vaultFileBytes()
        for text in ["24.12", "Biometer Zeta-9", "6/7.5", "axialLength", "Mia"] {
            #expect(!bytes.contains(text), "\(text) is in the vault file")
        }
    }

    /// Trend: the axial-length series beside the refraction, with age (birth date known) and the
    /// rate per year, in the table, JSON and the chart.
    @Test func trendShowsAxialLength() throws {
        let cli = try CLIHarness()
        try child(cli)
        for (date, od, os) in [("2025-03-01", "23.80", "23.70"), ("2026-03-01", "24.10", "24.05")] {
            _ = try cli.add([
                "measurement", "add", "Mia Chen", "--date", date, "--axial-length-od", od, "--axial-length-os", os
            ])
        }
        let table = try cli.run(["trend", "Mia Chen"])
        #expect(table.status == 0, "\(table)")
        #expect(table.stdout.contains("axial length, in mm"), "\(table.stdout)")
        #expect(table.stdout.contains("OD: +0.30 mm/yr"), "\(table.stdout)")
        #expect(table.stdout.contains("OS: +0.35 mm/yr"), "\(table.stdout)")
        #expect(table.stdout.contains("9.8"), "age at 2026-03-01: \(table.stdout)")
        let json = try cli.json(try cli.run(["trend", "Mia Chen", "--format", "json"]).stdout)
        let axial = json["axialLength"] as? [[String: Any]] ?? []
        #expect(axial.count == 2)
        #expect((axial.first?["ratePerYear"] as? NSNumber)?.doubleValue == 0.3)
        let points = axial.first?["points"] as? [[String: Any]] ?? []
        #expect((points.last?["ageYears"] as? NSNumber)?.doubleValue == 9.8)
        #expect((points.last?["millimetres"] as? NSNumber)?.doubleValue == 24.1)
        let svg = cli.path("trend.svg")
        #expect(try cli.run(["trend", "Mia Chen", "--out", svg]).status == 0)
        let drawn = try String(contentsOfFile: svg, encoding: .utf8)
        #expect(drawn.contains("<svg"))
        // A patient with axial lengths and no prescription left still has a trend: the axial one.
        try patientWithOnlyAMeasurement(cli, "Leo Park", ["--axial-length-od", "23.00"])
        let leo = try cli.run(["trend", "Leo Park"])
        #expect(leo.status == 0 && leo.stdout.contains("23.00 mm") && leo.stdout.contains("one date"), "\(leo)")
    }

    /// Trend: each visual acuity recorded as a series of its own (eye or both, with or without
    /// correction) as written, with its logMAR value and the change since the previous one, in the
    /// table, JSON and the chart; `--eye` keeps that eye's; a patient with acuities alone has a trend.
    @Test func trendShowsVisualAcuity() throws {
        let cli = try CLIHarness()
        try child(cli)
        _ = try cli.add([
            "measurement", "add", "Mia Chen", "--date", "2025-03-01", "--va-od-uncorrected", "20/25", "--va-od", "1.0",
            "--va-ou", "6/6"
        ])
        _ = try cli.add([
            "measurement", "add", "Mia Chen", "--date", "2026-03-01", "--va-od-uncorrected", "6/12", "--va-os", "0.8"
        ])
        let table = try cli.run(["trend", "Mia Chen"])
        #expect(table.status == 0, "\(table)")
        let rows = table.stdout.split(separator: "\n").filter { $0.hasPrefix("VA ") }.map {
            $0.split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ")
        }
        // In slot order (OD, OS, OU with correction, then without), oldest first; 20/25 is
        // logMAR 0.10 and 6/12 0.30: 0.20 worse. A table at 80 columns.
        #expect(
            rows == [
                "VA OD cc 2025-03-01 8.8 1.0 0.00 - \(try measurementID(cli, "2025-03-01").prefix(8))",
                "VA OS cc 2026-03-01 9.8 0.8 0.10 - \(try measurementID(cli, "2026-03-01").prefix(8))",
                "VA OU cc 2025-03-01 8.8 6/6 0.00 - \(try measurementID(cli, "2025-03-01").prefix(8))",
                "VA OD sc 2025-03-01 8.8 20/25 0.10 - \(try measurementID(cli, "2025-03-01").prefix(8))",
                "VA OD sc 2026-03-01 9.8 6/12 0.30 +0.20 \(try measurementID(cli, "2026-03-01").prefix(8))"
            ], "\(table.stdout)")
        #expect(table.stdout.split(separator: "\n").allSatisfy { $0.count <= 80 }, "\(table.stdout)")

        let json = try cli.json(try cli.run(["trend", "Mia Chen", "--format", "json"]).stdout)
        let acuity = json["visualAcuity"] as? [[String: Any]] ?? []
        #expect(acuity.map { $0["acuity"] as? String } == ["od", "os", "ou", "od-uncorrected"])
        #expect(acuity.map { $0["eye"] as? String } == ["right", "left", "both", "right"])
        #expect(acuity.map { $0["corrected"] as? Bool } == [true, true, true, false])
        let uncorrected = acuity.last?["points"] as? [[String: Any]] ?? []
        #expect(uncorrected.map { $0["written"] as? String } == ["20/25", "6/12"])
        #expect(uncorrected.map { $0["notation"] as? String } == ["snellen-feet", "snellen-metres"])
        #expect(uncorrected.map { ($0["logMAR"] as? NSNumber)?.doubleValue } == [0.1, 0.3])
        #expect((uncorrected.last?["change"] as? NSNumber)?.doubleValue == 0.2)
        #expect(uncorrected.first?["change"] == nil)
        #expect((uncorrected.last?["ageYears"] as? NSNumber)?.doubleValue == 9.8)

        // One eye: its acuities, not both eyes' together.
        let right = try cli.json(try cli.run(["trend", "Mia Chen", "--eye", "right", "--format", "json"]).stdout)
        #expect(
            (right["visualAcuity"] as? [[String: Any]])?.map { $0["acuity"] as? String } == ["od", "od-uncorrected"])

        // The chart draws the strip; with acuities it differs from the same chart without them.
        let with = cli.path("with.png")
        #expect(try cli.run(["trend", "Mia Chen", "--out", with]).status == 0)
        let png = try Data(contentsOf: URL(fileURLWithPath: with))
        #expect(png.starts(with: [0x89, 0x50, 0x4E, 0x47]))
        // The audit log says whose measurements left with the chart, as the FHIR export does.
        let log = try cli.json(try cli.run(["log", "--format", "json"]).stdout)
        let patient = try #require(
            (try cli.json(try cli.run(["trend", "Mia Chen", "--format", "json"]).stdout)["patient"]
                as? [String: Any])?["id"] as? String)
        #expect(
            (log["entries"] as? [[String: Any]] ?? []).compactMap { $0["detail"] as? String }.contains(
                "trend chart (png, 2 measurements of patient \(patient.prefix(8)))"), "\(log)")
        for id in [try measurementID(cli, "2025-03-01"), try measurementID(cli, "2026-03-01")] {
            #expect(try cli.run(["measurement", "remove", id, "--yes"]).status == 0)
        }
        let without = cli.path("without.png")
        #expect(try cli.run(["trend", "Mia Chen", "--out", without]).status == 0)
        #expect(try Data(contentsOf: URL(fileURLWithPath: without)) != png)

        // Acuities alone make a trend (table and chart): a patient whose prescription is gone.
        try patientWithOnlyAMeasurement(cli, "Leo Park", ["--va-ou-uncorrected", "6/6"])
        let leo = try cli.run(["trend", "Leo Park"])
        #expect(leo.status == 0 && leo.stdout.contains("VA OU sc"), "\(leo)")
        // One eye of a patient with a both-eyes acuity only: nothing to show, and it says where it is.
        let leoRight = try cli.run(["trend", "Leo Park", "--eye", "right"])
        #expect(leoRight.status == 67, "\(leoRight)")
        #expect(leoRight.stderr.contains("without --eye the trend shows what there is"), "\(leoRight)")
        #expect(try cli.run(["trend", "Leo Park", "--out", cli.path("leo.svg")]).status == 0)
    }

    /// A patient whose only prescription was removed, with one measurement of `values` (2026-03-01).
    func patientWithOnlyAMeasurement(_ cli: CLIHarness, _ name: String, _ values: [String]) throws {
        let rx = try cli.add([
            "add", "glasses", "--patient", name, "--prescriber", "Dr Ana Lee", "--issued", "2026-03-01",
            "--expires", "2028-03-01", "--od", "-0.50", "--os", "-0.50"
        ])
        _ = try cli.add(["measurement", "add", name, "--date", "2026-03-01"] + values)
        #expect(try cli.run(["remove", rx, "--yes"]).status == 0)
    }

    /// The id of the measurement made on `date` (one per date in these tests).
    func measurementID(_ cli: CLIHarness, _ date: String) throws -> String {
        try #require(try measurements(cli).first { $0["date"] as? String == date }?["id"] as? String)
    }

    /// FHIR R4: an Observation per axial length and acuity with its LOINC code, the Patient once,
    /// and the export recorded in the audit log.
    @Test func fhirObservations() throws {
        let cli = try CLIHarness()
        try child(cli)
        _ = try cli.add([
            "measurement", "add", "Mia Chen", "--date", "2026-03-01", "--axial-length-od", "24.12",
            "--axial-length-os", "24.05", "--va-od-uncorrected", "6/12", "--va-os", "6/6", "--cycloplegic"
        ])
        let r = try cli.run(["measurement", "list", "--format", "fhir"])
        #expect(r.status == 0, "\(r)")
        let bundle = try cli.json(r.stdout)
        #expect(bundle["resourceType"] as? String == "Bundle" && bundle["type"] as? String == "collection")
        let resources = (bundle["entry"] as? [[String: Any]] ?? []).compactMap { $0["resource"] as? [String: Any] }
        #expect(resources.filter { $0["resourceType"] as? String == "Patient" }.count == 1)
        let observations = resources.filter { $0["resourceType"] as? String == "Observation" }
        #expect(observations.count == 4)
        func codes(_ o: [String: Any]) -> [String] {
            ((o["code"] as? [String: Any])?["coding"] as? [[String: Any]] ?? []).compactMap { $0["code"] as? String }
        }
        let right = observations.first { codes($0) == ["64742-0"] }
        let quantity = right?["valueQuantity"] as? [String: Any]
        #expect((quantity?["value"] as? NSNumber)?.doubleValue == 24.12 && quantity?["code"] as? String == "mm")
        #expect(right?["effectiveDateTime"] as? String == "2026-03-01" && right?["status"] as? String == "final")
        #expect(observations.contains { codes($0) == ["66067-0"] })
        let va = observations.first { codes($0) == ["98505-1"] }
        #expect(va?["valueString"] as? String == "6/12")
        #expect(r.stdout.contains("\"{logMAR}\""))
        #expect(r.stdout.contains("measured under cycloplegia"))
        let log = try cli.run(["log"])
        #expect(log.stdout.contains("measurements (FHIR"), "\(log.stdout)")
        // The entry names whose measurements left.
        let patients = try cli.json(try cli.run(["patients", "--format", "json"]).stdout)
        let id = try #require((patients["patients"] as? [[String: Any]])?.first?["id"] as? String)
        #expect(log.stdout.contains("of patient(s) \(id.prefix(8))"), "\(log.stdout)")
    }

    /// The whole life of a child's record: measured, a prescription granted to a client (who sees
    /// no measurement), backed up, restored, checked; a measurement row put back from an older
    /// copy is caught by `check`; the FHIR export carries what is current.
    @Test func wholeLife() throws {
        let cli = try CLIHarness()
        try child(cli)
        let rx = try cli.run(["list", "--format", "json"])
        let ids = (try cli.json(rx.stdout)["prescriptions"] as? [[String: Any]] ?? []).compactMap {
            $0["id"] as? String
        }
        let first = try cli.add([
            "measurement", "add", "Mia Chen", "--date", "2025-03-01", "--axial-length-od", "23.80",
            "--axial-length-os", "23.70", "--va-od", "6/6"
        ])
        let second = try cli.add([
            "measurement", "add", "Mia Chen", "--date", "2026-03-01", "--axial-length-od", "24.10",
            "--axial-length-os", "24.05"
        ])
        // A client granted the prescriptions reads them, and no measurement.
        let recipient = try cli.ageKeygen("mom.key")
        #expect(try cli.run(["client", "add", "moms-phone", "--recipient", recipient]).status == 0)
        #expect(try cli.run(["grant", "moms-phone"] + ids.map { String($0.prefix(8)) }).status == 0)
        let clientExport = cli.path("client.json")
        let asClient = try cli.run([
            "--identity", cli.path("mom.key"), "export", "--format", "fhir", "--out", clientExport
        ])
        #expect(asClient.status == 0, "\(asClient)")
        let seen = try String(contentsOfFile: clientExport, encoding: .utf8)
        #expect(seen.contains("VisionPrescription"), "\(seen)")
        #expect(!seen.contains("64742-0") && !seen.contains("24.1") && !seen.contains("Observation"), "\(seen)")
        // Granted without --measurements: the client reads none (MeasurementGrantTests: with).
        let none = try cli.run(["--identity", cli.path("mom.key"), "measurement", "list", "--format", "json"])
        #expect(none.status == 0 && !none.stdout.contains("24.1"), "\(none)")

        // Backed up, restored beside, checked: the measurements come back whole.
        let backup = cli.path("b.age")
        #expect(try cli.run(["backup", backup]).status == 0)
        let restored = cli.path("restored.rxv")
        let restore = try cli.run(["restore", backup, "--to", restored])
        #expect(restore.status == 0, "\(restore)")
        let fromBackup = try cli.run(["measurement", "list", "--format", "json", "--vault", restored])
        #expect(fromBackup.status == 0 && fromBackup.stdout.contains("24.10"), "\(fromBackup)")
        #expect(try cli.run(["check", "--vault", restored]).status == 0)
        // The FHIR export holds both measurements. (From the vault: an export is logged, an owner
        // write, and an owner write to the copy beside it would be a write this computer made that
        // the vault lacks: format 8 then names the vault an older copy until the two are merged.)
        let fhir = try cli.run(["measurement", "list", "--format", "fhir"])
        #expect(fhir.status == 0 && fhir.stdout.contains("64742-0") && fhir.stdout.contains("24.1"), "\(fhir)")
        #expect(fhir.stdout.contains(first) || fhir.stdout.contains("urn:rxvault:measurement"))

        // A measurement removed, then the patient row put back from the older copy: check fails.
        let old = try cli.consistentCopy("before-remove.rxv")
        #expect(try cli.run(["measurement", "remove", second, "--yes"]).status == 0)
        #expect(try cli.run(["check"]).status == 0)
        let db = try Database(path: cli.vaultPath)
        try db.prepare("ATTACH DATABASE ? AS old").run([.text(old)])
        try db.execute(
            "UPDATE main.person SET info = (SELECT info FROM old.person), mac = (SELECT mac FROM old.person)")
        let check = try cli.run(["check"])
        #expect(check.status == 76, "\(check)")
        #expect(check.stdout.contains("patient records are not the ones the owner wrote last"), "\(check)")
        #expect(try cli.run(["measurement", "list"]).status == 76)
        // The patient row deleted outright: the same.
        try db.execute("DELETE FROM main.person")
        #expect(try cli.run(["check"]).status == 76)
    }

    /// docs/guide.md's child's myopia record, run as written on a new vault (sh -e, rxvault on
    /// PATH): the chart and the FHIR file are made, and the trend shows the rates it prints.
    @Test func theGuideRunsAsWritten() throws {
        let block = try ReadmeTourTests.block(
            after: "### A child's myopia record: axial length and visual acuity", in: "docs/guide.md")
        let cli = try CLIHarness()
        try cli.initVault()
        let bin = cli.path("bin")
        try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: false)
        try FileManager.default.createSymbolicLink(atPath: bin + "/rxvault", withDestinationPath: CLIHarness.binary)
        var environment = cli.environment
        environment["PATH"] = bin + ":/usr/bin:/bin"
        let ran = try CLIHarness.spawn(
            ["/bin/sh", "-e", "-c", block], environment: environment, directory: cli.directory)
        #expect(ran.status == 0, "guide:\n\(block)\n\(ran)")
        #expect(ran.stdout.contains("OD: +0.30 mm/yr") && ran.stdout.contains("OS: +0.33 mm/yr"), "\(ran.stdout)")
        #expect(FileManager.default.fileExists(atPath: cli.path("myopia.png")))
        let fhir = try cli.json(try String(contentsOfFile: cli.path("mia-observations.json"), encoding: .utf8))
        // The Patient, six axial lengths, seven acuities.
        let entries = (fhir["entry"] as? [Any])?.count
        #expect(entries == 14)
        // The trend lists the acuities, the uncorrected ones a chart line worse a year on.
        #expect(ran.stdout.contains("VA OD sc  2025-03-01  8.8  6/12"), "\(ran.stdout)")
    }
}
