import Foundation
import Testing

/// Issue 26 through the binary: the Contact Lens Rule's fields (16 CFR 315.2) stored, shown,
/// exported and imported; its warnings (missing contents, under a year, values a soft lens is not
/// made in); the lens-box order and the manufacturers' add codes; slips between the eyes; and a
/// polar prism read back from FHIR's 0.01-step parts.
@Suite struct ClinicalRecordTests {
    static let complete = [
        "add", "contacts", "--patient", "Quintessa Marlowe", "--prescriber", "Dr Ignatius Fairweather",
        "--prescriber-address", "12 Harbour Rd, Portsmouth NH 03801", "--prescriber-phone", "603-555-0100",
        "--prescriber-fax", "603-555-0101", "--exam-date", "2026-02-20", "--issued", "2026-03-01",
        "--expires", "2027-03-01", "--brand", "Acuvue Oasys", "--manufacturer", "Johnson & Johnson",
        "--material", "senofilcon A", "--od", "BC 8.4 DIA 14.0 PWR -3.00",
        "--os", "BC 8.6 DIA 14.5 PWR -2.75 CYL -1.25 AX 170"
    ]

    @Test func aCompleteContactLensPrescriptionIsStoredShownAndCarriedThroughEveryExport() throws {
        let cli = try CLIHarness()
        try cli.initVault()
        let added = try cli.run(Self.complete)
        #expect(added.status == 0 && !added.stderr.contains("warning"), "\(added)")
        let id = added.stdout.trimmingCharacters(in: .whitespacesAndNewlines)

        let shown = try cli.run(["show", id])
        for line in [
            "address", "12 Harbour Rd, Portsmouth NH 03801", "603-555-0100", "fax", "exam date", "2026-02-20",
            "manufacturer", "Johnson & Johnson", "material", "senofilcon A", "-1.25", "170"
        ] {
            #expect(shown.stdout.contains(line), "\(line): \(shown)")
        }
        let json = try cli.json(try cli.run(["show", id, "--format", "json"]).stdout)
        let prescriber = try #require(json["prescriber"] as? [String: Any])
        #expect(prescriber["address"] as? String == "12 Harbour Rd, Portsmouth NH 03801")
        #expect(prescriber["fax"] as? String == "603-555-0101")
        #expect(json["examDate"] as? String == "2026-02-20")
        let left = try #require(json["left"] as? [String: Any])
        #expect(left["manufacturer"] as? String == "Johnson & Johnson" && left["material"] as? String == "senofilcon A")
        // list reads the search index: the fields are there too.
        let listed = try cli.json(try cli.run(["list", "--format", "json"]).stdout)
        let first = try #require((listed["prescriptions"] as? [[String: Any]])?.first)
        #expect(first["examDate"] as? String == "2026-02-20", "\(first)")
        #expect((first["right"] as? [String: Any])?["material"] as? String == "senofilcon A")

        // CSV: the new columns after the existing ones.
        #expect(try cli.run(["export", "--format", "csv", "--out", cli.path("rx.csv")]).status == 0)
        let csv = try String(contentsOfFile: cli.path("rx.csv"), encoding: .utf8)
        let header = csv.split(separator: "\n")[0]
        #expect(
            header.contains(
                "balance,exam_date,short_expiry_reason,prescriber_address,prescriber_phone,prescriber_fax,manufacturer,material,equivalent_brand,tint,wear_duration,lens_note,assumed_expiry"
            ), "\(header)")
        #expect(
            csv.contains(
                "2026-02-20,,\"12 Harbour Rd, Portsmouth NH 03801\",603-555-0100,603-555-0101,Johnson & Johnson,senofilcon A,"
            ))

        // FHIR and rxvault JSON round trips into a second vault keep every field.
        for format in ["fhir", "json"] {
            #expect(try cli.run(["export", "--format", format, "--out", cli.path("out.\(format)")]).status == 0)
            let other = try CLIHarness()
            try other.initVault()
            let imported = try other.run(["import", cli.path("out.\(format)")])
            #expect(imported.status == 0, "\(format): \(imported)")
            let again = try other.json(try other.run(["list", "--format", "json"]).stdout)
            let rx = try #require((again["prescriptions"] as? [[String: Any]])?.first)
            #expect(rx["examDate"] as? String == "2026-02-20", "\(format): \(rx)")
            #expect((rx["prescriber"] as? [String: Any])?["phone"] as? String == "603-555-0100", "\(format)")
            #expect((rx["left"] as? [String: Any])?["manufacturer"] as? String == "Johnson & Johnson", "\(format)")
        }

        // An edit names what changed; an empty value clears a field.
        let edited = try cli.run(["edit", id, "--prescriber-fax", "", "--os-material", "lotrafilcon B"])
        #expect(edited.status == 0, "\(edited)")
        #expect(edited.stderr.contains("prescriber fax"), "the warning names the now missing fax: \(edited)")
        let history = try cli.run(["history", id])
        #expect(history.stdout.contains("prescriber fax") && history.stdout.contains("OS material"), "\(history)")
    }

    @Test func whatTheRuleListsAndIsMissingIsNamedAndAShortExpiryNeedsItsReason() throws {
        let cli = try CLIHarness()
        try cli.initVault()
        let bare = try cli.run([
            "add", "contacts", "--patient", "Quintessa Marlowe", "--prescriber", "Dr Ignatius Fairweather",
            "--issued", "2026-03-01", "--expires", "2026-09-01", "--brand", "Biofinity", "--od", "-3.00 dia 14.0"
        ])
        #expect(bare.status == 0, "\(bare)")
        #expect(
            bare.stderr.contains(
                "rxvault: warning: valid from 2026-03-01 to 2026-09-01, less than a year: the US Contact Lens Rule (16 CFR 315.6)"
            ), "\(bare)")
        #expect(
            bare.stderr.contains(
                "missing what the US Contact Lens Rule (16 CFR 315.2) lists on a contact-lens prescription: exam date (--exam-date); prescriber postal address, phone, fax (--prescriber-address, --prescriber-phone, --prescriber-fax); OD material or manufacturer (--manufacturer, --material); OD base curve"
            ), "\(bare)")
        var args = Self.complete
        args[args.firstIndex(of: "2027-03-01")!] = "2026-09-01"
        let withReason = try cli.run(args + ["--short-expiry-reason", "corneal neovascularisation: review at 6 months"])
        #expect(withReason.status == 0 && !withReason.stderr.contains("warning"), "\(withReason)")
        let id = withReason.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(try cli.run(["show", id]).stdout.contains("corneal neovascularisation: review at 6 months"))
        let onGlasses = try cli.run([
            "add", "glasses", "--patient", "Quintessa Marlowe", "--prescriber", "Dr Ignatius Fairweather",
            "--issued", "2026-03-01", "--expires", "2026-09-01", "--od", "-1.00", "--short-expiry-reason", "review"
        ])
        #expect(
            onGlasses.status == 65 && onGlasses.stderr.contains("short-expiry reason: applies to contact lenses only"),
            "\(onGlasses)")
        let examAfter = try cli.run(Self.complete.map { $0 == "2026-02-20" ? "2026-03-02" : $0 })
        #expect(examAfter.status == 65 && examAfter.stderr.contains("exam date 2026-03-02: must be on or before"))
    }

    @Test func softLensValuesNobodyMakesAreWarnedWithTheNearestOnes() throws {
        let cli = try CLIHarness()
        try cli.initVault()
        var args = Self.complete
        args[args.firstIndex(of: "BC 8.6 DIA 14.5 PWR -2.75 CYL -1.25 AX 170")!] = "-6.25 -1.00 x175 bc 8.6 dia 14.5"
        let r = try cli.run(args + ["--lens-type", "soft"])
        #expect(r.status == 0, "\(r)")
        #expect(
            r.stderr.contains(
                "OS sphere -6.25 is not made in soft lenses: beyond +-6.00 they come in 0.50 steps; nearest -6.50 or -6.00"
            ), "\(r)")
        #expect(r.stderr.contains("OS cylinder -1.00 is not made in soft lenses"), "\(r)")
        #expect(
            r.stderr.contains(
                "OS axis 175 is not made in soft lenses: toric axes come in 10-degree steps; nearest 170 or 180"))
        // A rigid lens is made to order: no such warning.
        let rigid = try cli.run(args + ["--lens-type", "rgp"])
        #expect(rigid.status == 0 && !rigid.stderr.contains("not made in"), "\(rigid)")
    }

    @Test func manufacturersAddCodesAreKeptAsWritten() throws {
        let cli = try CLIHarness()
        try cli.initVault()
        var args = Self.complete
        args[args.firstIndex(of: "BC 8.4 DIA 14.0 PWR -3.00")!] = "-1.25 add HGH bc 8.4 dia 14.3"
        args[args.firstIndex(of: "BC 8.6 DIA 14.5 PWR -2.75 CYL -1.25 AX 170")!] = "BC 8.4 DIA 14.3 PWR -1.50 ADD MID"
        let id = try cli.add(args)
        let json = try cli.json(try cli.run(["show", id, "--format", "json"]).stdout)
        #expect((json["right"] as? [String: Any])?["addDesignation"] as? String == "HGH")
        #expect((json["left"] as? [String: Any])?["notation"] as? String == "-1.50 add MID bc 8.4 dia 14.3")
        args[args.firstIndex(of: "-1.25 add HGH bc 8.4 dia 14.3")!] = "-1.25 add MAX bc 8.4 dia 14.3"
        let refused = try cli.run(args)
        #expect(refused.status == 65 && refused.stderr.contains("LOW, LO, MED, MID, HIGH, HI or HGH"), "\(refused)")
    }

    @Test func slipsBetweenTheEyesAreWarnedNamingBoth() throws {
        let cli = try CLIHarness()
        try cli.initVault()
        func glasses(_ extra: [String]) throws -> CLIHarness.Result {
            try cli.run(
                [
                    "add", "glasses", "--patient", "Quintessa Marlowe", "--prescriber", "Dr Ignatius Fairweather",
                    "--issued", "2026-03-01", "--expires", "2028-03-01"
                ] + extra)
        }
        let forms = try glasses(["--od", "-2.00 -0.75 x180", "--os", "-1.50 +0.50 x090"])
        #expect(
            forms.status == 0
                && forms.stderr.contains("OD cylinder -0.75 is minus-cyl and OS cylinder +0.50 is plus-cyl"), "\(forms)"
        )
        let oneAdd = try glasses(["--od", "+1.00 add +2.00", "--os", "+1.25"])
        #expect(oneAdd.stderr.contains("OD has add +2.00 and OS has none"), "\(oneAdd)")
        let signs = try glasses(["--od", "+2.00", "--os", "-2.25"])
        #expect(
            signs.stderr.contains("OD sphere +2.00 and OS sphere -2.25 have opposite signs, 4.25 D apart"), "\(signs)")
        let monocular = try glasses(["--od", "-1.00", "--os", "-1.00", "--pd", "31"])
        #expect(
            monocular.status == 0 && monocular.stderr.contains("PD 31 mm is almost certainly one eye's (monocular) PD"),
            "\(monocular)")
        #expect(!monocular.stderr.contains("child"), "\(monocular)")
    }

    @Test func aPolarPrismRxvaultExportedIsReadBackWithoutItsExtension() throws {
        let cli = try CLIHarness()
        try cli.initVault()
        let id = try cli.add([
            "add", "glasses", "--patient", "Quintessa Marlowe", "--prescriber", "Dr Ignatius Fairweather",
            "--issued", "2026-03-01", "--expires", "2028-03-01", "--od", "-1.00 prism 2 @ 45",
            "--os", "-1.00 prism 1.75 @ 200"
        ])
        #expect(try cli.run(["export", "--format", "fhir", "--out", cli.path("bundle.json")]).status == 0)
        // A server that keeps only FHIR's own elements drops rxvault's base-angle extension.
        var bundle = try cli.json(try String(contentsOfFile: cli.path("bundle.json"), encoding: .utf8))
        var entries = try #require(bundle["entry"] as? [[String: Any]])
        for (i, entry) in entries.enumerated() {
            guard var resource = entry["resource"] as? [String: Any],
                resource["resourceType"] as? String == "VisionPrescription",
                var specs = resource["lensSpecification"] as? [[String: Any]]
            else { continue }
            for j in specs.indices {
                #expect(specs[j]["prism"] != nil)
                specs[j]["extension"] = (specs[j]["extension"] as? [[String: Any]])?.filter {
                    !(($0["url"] as? String)?.hasSuffix("prism-base-angle") ?? false)
                }
            }
            resource["lensSpecification"] = specs
            resource["identifier"] = nil
            entries[i]["resource"] = resource
        }
        bundle["entry"] = entries
        let stripped = try JSONSerialization.data(withJSONObject: bundle)
        try stripped.write(to: URL(fileURLWithPath: cli.path("stripped.json")))
        let other = try CLIHarness()
        try other.initVault()
        let imported = try other.run(["import", cli.path("stripped.json")])
        #expect(imported.status == 0, "\(imported)")
        let listed = try other.json(try other.run(["list", "--format", "json"]).stdout)
        let rx = try #require((listed["prescriptions"] as? [[String: Any]])?.first)
        #expect((rx["right"] as? [String: Any])?["notation"] as? String == "-1.00 prism 2 @ 45", "\(rx)")
        #expect((rx["left"] as? [String: Any])?["notation"] as? String == "-1.00 prism 1.75 @ 200", "\(rx)")
        _ = id
    }
}

extension ClinicalRecordTests {
    /// Issue 26: one +0.50 ortho-k record turned a -0.60 D/yr progressor into -0.13 D/yr.
    @Test func anOrthoKLensPowerIsLeftOutOfTheRefractionTrendAndListedUnderIt() throws {
        let cli = try CLIHarness()
        try cli.initVault()
        let child = ["--patient", "Mia Chen", "--dob", "2014-05-01", "--prescriber", "Dr Ignatius Fairweather"]
        for (issued, od) in [("2021-03-01", "-1.00"), ("2022-03-01", "-1.50"), ("2023-03-01", "-2.25")] {
            _ = try cli.add(["add", "glasses"] + child + ["--issued", issued, "--expires", "2028-03-01", "--od", od])
        }
        let orthoK = try cli.add(
            ["add", "contacts"] + child + [
                "--issued", "2023-09-01", "--expires", "2024-09-01", "--lens-type", "ortho-k", "--brand", "Paragon CRT",
                "--od", "+0.50 bc 8.4 dia 10.5"
            ])
        let json = try cli.json(try cli.run(["trend", "Mia Chen", "--format", "json"]).stdout)
        let eyes = try #require(json["eyes"] as? [[String: Any]])
        let right = try #require(eyes.first)
        #expect((right["points"] as? [Any])?.count == 3, "\(right)")
        let rate = try #require(right["ratePerYear"] as? Double)
        #expect(abs(rate - -0.625) < 0.001, "\(rate)")
        let skipped = try #require(json["skipped"] as? [[String: Any]])
        #expect(skipped.count == 1 && (skipped[0]["prescription"] as? String)?.hasPrefix(orthoK) == true, "\(skipped)")
        let table = try cli.run(["trend", "Mia Chen"])
        #expect(
            table.stdout.contains("left out: \(orthoK) 2023-09-01: ortho-k, not a refraction (Paragon CRT)"), "\(table)"
        )
    }

    /// A soft myopia-control lens's labelled power is the distance correction: it counts, marked;
    /// a brand naming an ortho-k design is ortho-k without the lens type (an import's source may
    /// have none).
    @Test func aSoftMyopiaControlLensCountsMarkedAndAnOrthoKBrandIsLeftOut() throws {
        let cli = try CLIHarness()
        try cli.initVault()
        let child = ["--patient", "Mia Chen", "--dob", "2014-05-01", "--prescriber", "Dr Ignatius Fairweather"]
        for (issued, od) in [("2021-03-01", "-1.00"), ("2022-03-01", "-1.50")] {
            _ = try cli.add(["add", "glasses"] + child + ["--issued", issued, "--expires", "2028-03-01", "--od", od])
        }
        let misight = try cli.add(
            ["add", "contacts"] + child + [
                "--issued", "2023-03-01", "--expires", "2024-03-01", "--brand", "MiSight 1 day",
                "--od", "-2.00 bc 8.7 dia 14.2"
            ])
        let crt = try cli.add(
            ["add", "contacts"] + child + [
                "--issued", "2023-09-01", "--expires", "2024-09-01", "--brand", "Paragon CRT 100",
                "--od", "+0.50 bc 8.4 dia 10.5"
            ])
        let json = try cli.json(try cli.run(["trend", "Mia Chen", "--format", "json"]).stdout)
        let right = try #require((json["eyes"] as? [[String: Any]])?.first)
        let points = try #require(right["points"] as? [[String: Any]])
        #expect(points.count == 3, "the two glasses and MiSight: \(points)")
        let marked = points.filter { $0["myopiaControl"] != nil }
        #expect(marked.count == 1 && marked[0]["myopiaControl"] as? String == "MiSight", "\(points)")
        #expect((marked.first?["prescription"] as? String)?.hasPrefix(misight) == true)
        // MiSight -2.00 at the cornea is -2.00 / (1 - 0.012 × 2.00) = -2.049 at the spectacle plane.
        #expect(marked.first?["sphericalEquivalent"] as? Double == -2.049, "\(marked)")
        let skipped = try #require(json["skipped"] as? [[String: Any]])
        #expect(skipped.count == 1 && (skipped[0]["prescription"] as? String)?.hasPrefix(crt) == true, "\(skipped)")
        #expect((skipped.first?["reason"] as? String)?.contains("(Paragon CRT)") == true, "\(skipped)")
        let table = try cli.run(["trend", "Mia Chen"])
        #expect(
            table.stdout.contains("myopia control: MiSight from 2023-03-01 (power corrects distance)"),
            "\(table)")
        #expect(
            table.stdout.contains(
                "left out: \(crt) 2023-09-01 OD: ortho-k, not a refraction (Paragon CRT)"
            ), "\(table)")
        // The chart marks where each treatment began.
        let pdf = cli.path("trend.pdf")
        #expect(try cli.run(["trend", "Mia Chen", "--out", pdf]).status == 0)
        let text = try PrintTests.poppler(cli, ["pdftotext", "-layout", pdf, "-"])
        for label in ["MiSight from 2023-03-01", "Paragon CRT from 2023-09-01"] {
            #expect(text.stdout.contains(label), "the chart shows \(label):\n\(text.stdout)")
        }
    }
}

extension ClinicalRecordTests {
    /// A renewal keeps what describes the lenses (an imported tint and wear duration) and drops
    /// what belonged to the old visit (exam date) and, for another patient, the old patient's
    /// FHIR name parts (review of issue 26).
    @Test func aRenewalKeepsTheLensesClinicalElementsAndNotTheOldVisitOrPatient() throws {
        let cli = try CLIHarness()
        try cli.initVault()
        let imported = try cli.run([
            "import", FHIRBareImportTests.contacts, "--patient", "Peter Chalmers", "--assume-expiry", "1y"
        ])
        #expect(imported.status == 0, "\(imported)")
        let listed = try cli.json(try cli.run(["list", "--format", "json"]).stdout)
        let old = try #require((listed["prescriptions"] as? [[String: Any]])?.first?["id"] as? String)
        let renewed = try cli.run([
            "add", "--from", String(old.prefix(8)), "--expires", "2028-01-01", "--exam-date", "2026-02-01",
            "--patient", "Alex Kim", "--new-patient"
        ])
        #expect(renewed.status == 0, "\(renewed)")
        let id = renewed.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let json = try cli.json(try cli.run(["show", id, "--format", "json"]).stdout)
        let fhir = try #require(json["fhir"] as? [String: Any], "\(json)")
        #expect((fhir["right"] as? [String: Any])?["color"] as? String == "green", "\(fhir)")
        #expect((fhir["resource"] as? [String: Any])?["id"] == nil, "\(fhir)")
        let patient = try #require(json["patient"] as? [String: Any])
        #expect(patient["name"] as? String == "Alex Kim" && patient["family"] == nil, "\(patient)")
        #expect(json["examDate"] as? String == "2026-02-01")
        // Renewed for the same patient without --exam-date: the old visit's date is not copied.
        let same = try cli.run(["add", "--from", String(old.prefix(8)), "--expires", "2028-01-01"])
        #expect(same.status == 0 && same.stderr.contains("exam date (--exam-date)"), "\(same)")
    }
}
