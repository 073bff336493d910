import RxModel
import Testing

/// One rule for stored text: limits that combining marks cannot get past, and no character that
/// changes how the rest prints (bidirectional controls, zero-width characters, line separators).
@Suite struct TextFieldTests {
    static let combiningFlood = "A" + String(repeating: "\u{0301}", count: 60_000)

    @Test func aNameOfCombiningMarksIsRefusedByPrescriptionRules() {
        var rx = Fixture.glasses()
        rx.patient.name = Self.combiningFlood
        #expect(rx.patient.name.count == 1, "one grapheme cluster: a character count lets it through")
        #expect(violations(of: rx).map(\.field) == ["patient name"])
        rx = Fixture.contacts()
        rx.left!.brand = "Acuvue" + String(repeating: "\u{0300}", count: 1000)
        #expect(violations(of: rx).map(\.field) == ["brand"])
        rx = Fixture.glasses()
        rx.note = "n" + String(repeating: "\u{0300}", count: 5000)
        #expect(violations(of: rx).map(\.field) == ["note"])
    }

    @Test(arguments: [
        "\u{202A}", "\u{202B}", "\u{202C}", "\u{202D}", "\u{202E}", "\u{2066}", "\u{2067}", "\u{2068}", "\u{2069}",
        "\u{200E}", "\u{200F}", "\u{200B}", "\u{200C}", "\u{200D}", "\u{2060}", "\u{FEFF}", "\u{2028}", "\u{2029}",
        "\u{0085}", "\u{001B}", "\u{0000}"
    ])
    func invisibleAndControlCharactersAreRefusedInEveryName(character: String) {
        let value = "Ada" + character + "Hale"
        var rx = Fixture.contacts()
        rx.patient.name = value
        rx.prescriber.name = value
        rx.prescriber.licence = value
        rx.prescriber.contact = value
        rx.left!.brand = value
        #expect(
            Set(violations(of: rx).map(\.field)) == [
                "patient name", "prescriber name", "prescriber licence", "prescriber contact", "brand"
            ])
        #expect(TextField.name.problem(with: value) != nil)
        #expect(TextField.attachmentNameProblem(value + ".pdf") != nil)
    }
    @Test func realNamesAreAccepted() {
        for name in ["Zoë Nguyễn", "Ζωή Παπαδοπούλου", "김민준", "Ngũgĩ wa Thiong'o", "O'Brien-Smith", "محمد علي"] {
            #expect(TextField.name.problem(with: name) == nil, "\(name)")
        }
        var rx = Fixture.glasses()
        rx.patient.name = String(repeating: "é", count: PrescriptionRules.maxTextLength)
        #expect(violations(of: rx).isEmpty, "200 accented letters are within the limit")
        rx.patient.name = String(repeating: "\u{1F600}", count: PrescriptionRules.maxTextLength)
        #expect(violations(of: rx).isEmpty, "200 emoji (4 bytes each) are within the limit")
        rx.note = "line one\nline two"
        #expect(violations(of: rx).isEmpty)
    }

    @Test func limitsSayWhatIsAccepted() {
        #expect(TextField.name.problem(with: String(repeating: "a", count: 201)) == "at most 200 characters")
        #expect(TextField.name.problem(with: Self.combiningFlood)?.contains("bytes") == true)
        #expect(TextField.note.problem(with: "a\nb") == nil)
        #expect(TextField.name.problem(with: "a\nb") != nil)
    }

    @Test func fileNames() {
        for good in ["scan.pdf", "scan 2026.pdf", "Brille-Rezept_ä.png", "a.b.c.png"] {
            #expect(TextField.attachmentNameProblem(good) == nil, "\(good)")
        }
        for bad in [
            "", " ", ".", "..", ".hidden.pdf", "-rf.pdf", "a/b.pdf", "a\\b.pdf", " scan.pdf", "scan.pdf ",
            "scan\u{202E}fdp.exe", "a\u{200B}b.pdf", "a\nb.pdf", "x" + String(repeating: "\u{0301}", count: 5000)
        ] {
            #expect(TextField.attachmentNameProblem(bad) != nil, "\(bad.debugDescription)")
        }
    }
}
