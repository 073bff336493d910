import Foundation
import Testing

/// `edit` changes only what it names, `history` says what changed, and values a person can get
/// wrong (a decimal comma, invisible characters, a name of combining marks) are refused with
/// nothing stored.
@Suite struct EditTests {
    /// The README's add example (OS has prism 1.5 BI), then its edit example.
    static let readmeAdd = [
        "add", "glasses", "--patient", "Sam Rivera", "--dob", "1984-05-12",
        "--prescriber", "Dr Ana Lee", "--prescriber-licence", "OD-20417",
        "--issued", "2026-03-01", "--expires", "2028-03-01",
        "--od", "-2.25 -0.75 x180 add +2.00", "--os", "-2.00 -0.50 x170 add +2.00 prism 1.5 BI",
        "--pd", "63", "--near-pd", "60", "--vertex", "12"
    ]

    func setUp() throws -> (CLIHarness, String) {
        let cli = try CLIHarness()
        try cli.initVault()
        return (cli, try cli.add(Self.readmeAdd))
    }

    func lens(_ cli: CLIHarness, _ id: String, _ eye: String, version: Int? = nil) throws -> [String: Any] {
        var arguments = ["show", id, "--format", "json"]
        if let version { arguments += ["--version", String(version)] }
        let json = try cli.json(try cli.run(arguments).stdout)
        return try #require(json[eye] as? [String: Any])
    }

    func versions(_ cli: CLIHarness, _ id: String) throws -> Int {
        let json = try cli.json(try cli.run(["history", id, "--format", "json"]).stdout)
        return (json["prescriptions"] as? [Any])?.count ?? -1
    }

    @Test func theReadmeEditKeepsThePrism() throws {
        let (cli, id) = try setUp()
        let edit = try cli.run(["edit", id, "--os", "-2.25 -0.50 x170 add +2.00", "--note", "new frames"])
        #expect(edit.status == 0, "\(edit)")
        let os = try lens(cli, id, "left")
        #expect(os["notation"] as? String == "-2.25 -0.50 x170 add +2.00 prism 1.5 BI")
        #expect(os["vertexDistance"] as? Double == 12)
    }

    @Test func aNotationWithoutAnAddKeepsTheAdd() throws {
        let (cli, id) = try setUp()
        #expect(try cli.run(["edit", id, "--od", "-2.50 -0.75 x180"]).status == 0)
        #expect(try lens(cli, id, "right")["notation"] as? String == "-2.50 -0.75 x180 add +2.00")
    }

    @Test func aSphereAloneOnALensWithACylinderIsRefused() throws {
        let (cli, id) = try setUp()
        let r = try cli.run(["edit", id, "--od", "-1.25"])
        #expect(r.status == 65, "\(r)")
        #expect(r.stderr.contains("OD notation"))
        #expect(r.stderr.contains("-0.75 x180"), "the message names the stored cylinder")
        #expect(r.stderr.contains("DS"), "and says how to ask for a sphere alone")
        #expect(try versions(cli, id) == 1, "nothing stored")

        // Saying so explicitly works: DS drops the cylinder (only the cylinder).
        let ds = try cli.run(["edit", id, "--od", "-1.25 DS"])
        #expect(ds.status == 0, "\(ds)")
        #expect(try lens(cli, id, "right")["notation"] as? String == "-1.25 add +2.00")
        // On a lens without a cylinder a sphere alone is not ambiguous.
        #expect(try cli.run(["edit", id, "--od", "-1.50"]).status == 0)
        #expect(try lens(cli, id, "right")["notation"] as? String == "-1.50 add +2.00")
        // --od-sphere changes the sphere only, cylinder or not.
        #expect(try cli.run(["edit", id, "--os-sphere", "-2.50"]).status == 0)
        #expect(try lens(cli, id, "left")["notation"] as? String == "-2.50 -0.50 x170 add +2.00 prism 1.5 BI")
    }

    @Test func partsAreRemovedOnlyByName() throws {
        let (cli, id) = try setUp()
        let r = try cli.run(["edit", id, "--no-os-prism", "--no-od-add", "--no-os-cyl"])
        #expect(r.status == 0, "\(r)")
        #expect(try lens(cli, id, "left")["notation"] as? String == "-2.00 add +2.00")
        #expect(try lens(cli, id, "right")["notation"] as? String == "-2.25 -0.75 x180")
        #expect(try lens(cli, id, "left")["vertexDistance"] as? Double == 12)
        #expect(try cli.run(["edit", id, "--no-od-vertex"]).status == 0)
        #expect(try lens(cli, id, "right")["vertexDistance"] == nil)
        #expect(try lens(cli, id, "left")["vertexDistance"] as? Double == 12)

        let both = try cli.run(["edit", id, "--no-od-prism", "--od-prism", "1 BU"])
        #expect(both.status == 64, "\(both)")
        let inNotation = try cli.run(["edit", id, "--no-od-add", "--od", "-2.25 -0.75 x180 add +1.00"])
        #expect(inNotation.status == 64, "\(inNotation)")
        let dsAndCyl = try cli.run(["edit", id, "--no-od-cyl", "--od-cyl", "-0.50"])
        #expect(dsAndCyl.status == 64, "\(dsAndCyl)")
    }

    @Test func historySaysWhatChanged() throws {
        let (cli, id) = try setUp()
        #expect(try cli.run(["edit", id, "--os", "-2.25 -0.50 x170 add +2.00", "--note", "new frames"]).status == 0)
        #expect(try cli.run(["edit", id, "--no-os-prism", "--expires", "2028-06-01"]).status == 0)
        let table = try cli.run(["history", id])
        #expect(table.status == 0, "\(table)")
        let lines = table.stdout.split(separator: "\n")
        try #require(lines.count == 4)
        #expect(lines[1].hasSuffix("added"))
        #expect(lines[2].hasSuffix("OS sphere -2.00 → -2.25; note"), "\(table.stdout)")
        #expect(lines[3].hasSuffix("expiry date 2028-03-01 → 2028-06-01; OS prism 1.5 BI → none"), "\(table.stdout)")

        let json = try cli.json(try cli.run(["history", id, "--format", "json"]).stdout)
        let items = try #require(json["prescriptions"] as? [[String: Any]])
        #expect((items[0]["changes"] as? [Any])?.isEmpty == true)
        let second = try #require(items[1]["changes"] as? [[String: Any]])
        #expect(second.count == 2)
        #expect(second[0]["field"] as? String == "OS sphere")
        #expect(second[0]["from"] as? String == "-2.00")
        #expect(second[0]["to"] as? String == "-2.25")
        #expect(second[1]["field"] as? String == "note")
        #expect(second[1]["from"] == nil)
        #expect(second[1]["to"] as? String == "new frames")
        let third = try #require(items[2]["changes"] as? [[String: Any]])
        #expect(third.last?["field"] as? String == "OS prism")
        #expect(third.last?["from"] as? String == "1.5 BI")
        #expect(third.last?["to"] == nil)
    }

    @Test func aDecimalCommaIsRefusedNotGuessed() throws {
        let (cli, id) = try setUp()
        for (flag, value, dot) in [
            ("--od", "-1,5 x 90", "-1.5"), ("--os", "-2.00 -0,75 x170", "-0.75"),
            ("--od-sphere", "-1,25", "-1.25"), ("--pd", "63,5", "63.5"), ("--os-prism", "1,5 BI", "1.5")
        ] {
            let r = try cli.run(["edit", id, flag, value])
            #expect(r.status == 65, "\(flag) \(value): \(r)")
            #expect(r.stderr.contains("write a dot") && r.stderr.contains(dot), "\(flag) \(value): \(r)")
        }
        #expect(try versions(cli, id) == 1, "nothing stored")
        let add = try cli.run([
            "add", "glasses", "--patient", "P", "--prescriber", "D", "--issued", "2026-03-01", "--od", "-1,5 x 90"
        ])
        #expect(add.status == 65, "\(add)")
        #expect(
            try cli.json(try cli.run(["list", "--format", "json"]).stdout)["prescriptions"].map {
                ($0 as? [Any])?.count
            } == 1)
        // A comma between fields (followed by a space or a sign) is still a separator.
        #expect(try cli.run(["edit", id, "--od", "-2.00, -0.75, x180"]).status == 0)
        #expect(try lens(cli, id, "right")["notation"] as? String == "-2.00 -0.75 x180 add +2.00")
    }

    @Test func namesOfCombiningMarksAndInvisibleCharactersAreRefused() throws {
        let (cli, id) = try setUp()
        let zalgo = "A" + String(repeating: "\u{0301}", count: 60_000)
        for (flag, value) in [
            ("--patient", zalgo), ("--prescriber", "Dr \u{2067}Lee"), ("--patient", "Sam\u{200B}Rivera"),
            ("--patient", "Sam\u{2028}Rivera"),
            ("--prescriber-contact", "x" + String(repeating: "\u{0300}", count: 900))
        ] {
            let r = try cli.run(["edit", id, flag, value])
            #expect(r.status == 65, "\(flag): \(r.status) \(r.stderr.prefix(300))")
        }
        #expect(try versions(cli, id) == 1, "nothing stored")
        // Accents on real names are fine.
        #expect(try cli.run(["edit", id, "--patient", "Zoë Nguyễn"]).status == 0)
    }

    @Test func attachmentNamesThatWouldNotPrintSafelyAreRefused() throws {
        let (cli, id) = try setUp()
        let pdf = AttachmentTests.pdf
        for name in [
            "scan\u{202E}fdp.exe", "a\u{200B}b.pdf", "..", "-rf.pdf", ".hidden.pdf", "a/b.pdf",
            "x" + String(repeating: "\u{0301}", count: 5000) + ".pdf"
        ] {
            let r = try cli.run(["attach", id, pdf, "--name=" + name])
            #expect(r.status == 65, "\(name.debugDescription): \(r.status) \(r.stderr.prefix(300))")
        }
        let list = try cli.json(try cli.run(["attachments", id, "--format", "json"]).stdout)
        #expect((list["attachments"] as? [Any])?.isEmpty == true, "nothing stored")
        // A plain name extracts to itself.
        #expect(try cli.run(["attach", id, pdf, "--name", "scan 2026.pdf"]).status == 0)
        let out = try cli.run(["extract", id, "scan 2026.pdf"])
        #expect(out.status == 0, "\(out)")
        #expect(FileManager.default.fileExists(atPath: cli.path("scan 2026.pdf")))
    }

    @Test func switchingBetweenBinocularAndPerEyePDIsSaidNotSilent() throws {
        let (cli, id) = try setUp()
        let perEye = try cli.run(["edit", id, "--pd-od", "31"])
        #expect(perEye.status == 64, "the binocular PD 63 / near 60 would be dropped: \(perEye)")
        #expect(perEye.stderr.contains("--no-pd"))
        #expect(try versions(cli, id) == 1, "nothing stored")
        let said = try cli.run(["edit", id, "--no-pd", "--pd-od", "31", "--pd-os", "32"])
        #expect(said.status == 0, "\(said)")
        #expect(try lens(cli, id, "left")["pupillaryDistance"].map { ($0 as? [String: Any])?["far"] as? Double } == 32)
        let binocular = try cli.run(["edit", id, "--pd", "63"])
        #expect(binocular.status == 64, "the per-eye PDs would be dropped: \(binocular)")
        #expect(try cli.run(["edit", id, "--no-pd", "--pd", "63"]).status == 0)
    }

    @Test func clientNamesFollowTheSameRule() throws {
        let (cli, _) = try setUp()
        for (i, name) in ["shop\u{202E}pohs", "shop\u{200B}", "s" + String(repeating: "\u{0301}", count: 1000)]
            .enumerated()
        {
            let r = try cli.run(["client", "add", name, "--generate", "--identity-out", cli.path("c\(i).key")])
            #expect(r.status == 65, "\(name.debugDescription): \(r)")
            #expect(!r.stderr.contains(name), "the refused name is not echoed")
        }
        #expect(
            try cli.run(["client", "add", "Zoë's phone", "--generate", "--identity-out", cli.path("z.key")]).status == 0
        )
    }
}
