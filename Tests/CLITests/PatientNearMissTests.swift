import Foundation
import Testing

/// A `--patient` name close to an existing patient's ("Sam Rivra" beside "Sam Rivera") is asked
/// about on a terminal and refused without one (64) unless `--new-patient`, by `add` and `edit`;
/// `import` refuses listing every such name (65) unless `--new-patient`. An exact name, a
/// different person's name and a differing birth date are never asked about.
@Suite struct PatientNearMissTests {
    static func glasses(_ patient: String, dob: String? = nil) -> [String] {
        ["add", "glasses", "--patient", patient] + (dob.map { ["--dob", $0] } ?? []) + [
            "--prescriber", "Dr Ana Lee", "--issued", "2026-03-02", "--expires", "2028-03-02",
            "--od", "-2.25 -0.75 x180", "--os", "-2.00 -0.50 x170"
        ]
    }

    func patientNames(_ cli: CLIHarness) throws -> [String] {
        let r = try cli.run(["patients", "--format", "json"])
        #expect(r.status == 0, "\(r)")
        return (try cli.json(r.stdout)["patients"] as? [[String: Any]] ?? []).compactMap { $0["name"] as? String }
    }

    @Test func addRefusesANearMissWithoutATerminalUnlessNewPatient() throws {
        let cli = try CLIHarness()
        try cli.initVault()
        _ = try cli.add(Self.glasses("Sam Rivera", dob: "1984-05-12"))
        for typed in ["Sam Rivra", "sam  rivéra", "Rivera Sam", "Sam Riveira", "Sam-Rivera"] {
            let r = try cli.run(Self.glasses(typed))
            #expect(r.status == 64, "\(typed): \(r)")
            #expect(r.stderr.contains("did you mean 'Sam Rivera'"), "\(typed): \(r.stderr)")
            #expect(r.stderr.contains("--new-patient"), "\(typed): \(r.stderr)")
        }
        #expect(try patientNames(cli) == ["Sam Rivera"], "nothing was written")

        // --no-input refuses the same way, even where a terminal could ask.
        #expect(try cli.run(Self.glasses("Sam Rivra") + ["--no-input"]).status == 64)

        let made = try cli.run(Self.glasses("Sam Rivra") + ["--new-patient"])
        #expect(made.status == 0, "\(made)")
        #expect(made.stderr.contains("new patient") && made.stderr.contains("Sam Rivra"), "\(made.stderr)")
        #expect(try patientNames(cli).sorted() == ["Sam Rivera", "Sam Rivra"])
        // Now an exact name: never asked about, whatever is near it.
        #expect(try cli.run(Self.glasses("Sam Rivra")).status == 0)
        #expect(try cli.run(Self.glasses("sam rivera")).status == 0)
    }

    @Test func otherPeopleAreNotNearMisses() throws {
        let cli = try CLIHarness()
        try cli.initVault()
        _ = try cli.add(Self.glasses("Sam Rivera", dob: "1984-05-12"))
        _ = try cli.add(Self.glasses("Mia Chen"))
        // Other names; a short name one letter off; a differing birth date (another person);
        // another number (twins, numbered records).
        for (typed, dob) in [
            ("Ana Rivera", nil), ("Max Chen", nil), ("Sam Rivra", "1990-01-01"), ("Sara Rivera", nil),
            ("Mia Chen 2", nil)
        ] {
            let r = try cli.run(Self.glasses(typed, dob: dob))
            #expect(r.status == 0, "\(typed): \(r)")
            #expect(r.stderr.contains("new patient"), "\(typed): \(r.stderr)")
        }
    }

    @Test func editPatientRefusesANearMiss() throws {
        let cli = try CLIHarness()
        try cli.initVault()
        _ = try cli.add(Self.glasses("Sam Rivera"))
        let id = try cli.add(Self.glasses("Mia Chen"))
        let refused = try cli.run(["edit", id, "--patient", "Sam Rivra"])
        #expect(refused.status == 64 && refused.stderr.contains("did you mean 'Sam Rivera'"), "\(refused)")
        let show = try cli.run(["show", id, "--format", "json"])
        #expect((try cli.json(show.stdout)["patient"] as? [String: Any])?["name"] as? String == "Mia Chen")
        let moved = try cli.run(["edit", id, "--patient", "Sam Rivra", "--new-patient"])
        #expect(moved.status == 0, "\(moved)")
        #expect(try patientNames(cli).sorted() == ["Mia Chen", "Sam Rivera", "Sam Rivra"])
    }

    /// On a terminal: yes takes the existing patient, no makes the new one.
    @Test func asksOnATerminal() throws {
        let cli = try CLIHarness()
        try cli.initVault()
        _ = try cli.add(Self.glasses("Sam Rivera"))
        let secret = try String(contentsOfFile: cli.passphraseFile, encoding: .utf8).trimmingCharacters(in: .newlines)
        let yes = try PromptTests().drive(cli, Self.glasses("Sam Rivra"), answers: [secret, "y"])
        #expect(yes.status == 0, "\(yes)")
        #expect(yes.stdout.contains("Did you mean") && yes.stdout.contains("Sam Rivera"), "\(yes)")
        #expect(!yes.stdout.contains("rxvault: new patient"), "\(yes)")
        #expect(try patientNames(cli) == ["Sam Rivera"])
        let no = try PromptTests().drive(cli, Self.glasses("Sam Rivra"), answers: [secret, "n"])
        #expect(no.status == 0 && no.stdout.contains("rxvault: new patient"), "\(no)")
        #expect(try patientNames(cli).sorted() == ["Sam Rivera", "Sam Rivra"])
    }

    /// A file is not asked about row by row: the import is refused listing each near miss once,
    /// and --new-patient imports it.
    @Test func importListsNearMissesAndNewPatientAcceptsThem() throws {
        let cli = try CLIHarness()
        try cli.initVault()
        _ = try cli.add(Self.glasses("Sam Rivera"))
        let source = try CLIHarness()
        try source.initVault()
        _ = try source.add(Self.glasses("Sam Rivra"))
        _ = try source.add(
            [
                "add", "contacts", "--patient", "Sam Rivra", "--prescriber", "Dr Ana Lee", "--issued", "2026-03-02",
                "--expires", "2027-03-02", "--brand", "Acuvue Oasys", "--od", "-2.50 bc 8.6 dia 14.2", "--os",
                "-2.25 bc 8.6 dia 14.2"
            ])
        _ = try source.add(Self.glasses("Noor Haddad"))
        let file = source.path("export.json")
        #expect(try source.run(["export", "--format", "json", "--out", file]).status == 0)

        for dryRun in [true, false] {
            let r = try cli.run(["import", file] + (dryRun ? ["--dry-run"] : []))
            #expect(r.status == 65, "\(r)")
            #expect(r.stderr.contains("no patient is named 'Sam Rivra': did you mean 'Sam Rivera'"), "\(r.stderr)")
            #expect(r.stderr.components(separatedBy: "did you mean").count == 2, "one line per name: \(r.stderr)")
            #expect(r.stderr.contains("--new-patient"), "\(r.stderr)")
        }
        #expect(try patientNames(cli) == ["Sam Rivera"], "nothing was imported")
        let imported = try cli.run(["import", file, "--new-patient"])
        #expect(imported.status == 0, "\(imported)")
        #expect(try patientNames(cli).sorted() == ["Noor Haddad", "Sam Rivera", "Sam Rivra"])
    }
}
