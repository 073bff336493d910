import RxModel
import RxTestSupport
import Testing

private func lens(
    _ sphere: String, _ cylinder: String? = nil, x axis: Int? = nil, add: String? = nil, prism: Prism? = nil,
    bc: String? = nil, dia: String? = nil, vertex: String? = nil, pd: String? = nil, npd: String? = nil
) -> LensSpecification {
    LensSpecification(
        sphere: h(sphere), cylinder: cylinder.map { h($0) }, axis: axis, add: add.map { h($0) }, prism: prism,
        vertexDistance: vertex.map { h($0) }, farPD: pd.map { h($0) }, nearPD: npd.map { h($0) },
        baseCurve: bc.map { h($0) }, diameter: dia.map { h($0) })
}

private func horizontal(_ amount: String, _ base: Prism.HorizontalBase) -> Prism {
    .rectangular(vertical: nil, horizontal: .init(amount: h(amount), base: base))
}

@Suite struct LensNotationParseTests {
    @Test(arguments: [
        // The notation forms prescriptions are written in (DESIGN.md, "Prescription rules").
        ("-2.25 -0.75 x 180", lens("-2.25", "-0.75", x: 180)),
        ("-2.25 -0.75 x180 add +2.00", lens("-2.25", "-0.75", x: 180, add: "2")),
        ("+1.50 DS", lens("1.5")),
        ("+1.50 sph", lens("1.5")),
        ("plano", lens("0")),
        ("pl", lens("0")),
        ("0", lens("0")),
        ("-1.00 -0.50 x 090 prism 1.5 BI", lens("-1", "-0.5", x: 90, prism: horizontal("1.5", .in))),
        ("-3.00 bc 8.6 dia 14.2", lens("-3", bc: "8.6", dia: "14.2")),
        ("-2.75 -1.25 x 170 bc 8.7 dia 14.5", lens("-2.75", "-1.25", x: 170, bc: "8.7", dia: "14.5")),
        (
            "0.50 DS prism 1 BU 2 BO",
            lens(
                "0.5",
                prism: .rectangular(
                    vertical: .init(amount: h("1"), base: .up),
                    horizontal: .init(amount: h("2"), base: .out)))
        ),
        ("+1.00 prism 2 @ 45", lens("1", prism: .polar(amount: h("2"), angle: 45))),
        // Case, touching words, unicode minus and ×.
        ("PLANO", lens("0")),
        ("Pl -0.50 X 90", lens("0", "-0.5", x: 90)),
        ("-2.25-0.75x180", lens("-2.25", "-0.75", x: 180)),
        ("-2.25 -0.75 x180 ADD+2.00", lens("-2.25", "-0.75", x: 180, add: "2")),
        ("-3.00 BC8.6 DIA14.2", lens("-3", bc: "8.6", dia: "14.2")),
        ("\u{2212}2.25 \u{2212}0.75 \u{00D7} 180", lens("-2.25", "-0.75", x: 180)),
        ("\u{2212}2.25\u{2212}0.75\u{00D7}180", lens("-2.25", "-0.75", x: 180)),
        ("+1.00 prism 2@45", lens("1", prism: .polar(amount: h("2"), angle: 45))),
        ("-1.00 prism1.5BI", lens("-1", prism: horizontal("1.5", .in))),
        // Synonyms and separators.
        ("-2.25 -0.75 axis 180 addition +2.00", lens("-2.25", "-0.75", x: 180, add: "2")),
        ("-2.25, -0.75, x 180; add +2.00", lens("-2.25", "-0.75", x: 180, add: "2")),
        ("-2.25 -0.75 DC x 180", lens("-2.25", "-0.75", x: 180)),
        ("+0.25 D", lens("0.25")),
        ("-3.00 b.c. 8.6 diam 14.2", lens("-3", bc: "8.6", dia: "14.2")),
        ("-1.00 prism 1.5 base in", lens("-1", prism: horizontal("1.5", .in))),
        (
            "-1.00 prism 1 BD 0.5 BO",
            lens(
                "-1",
                prism: .rectangular(
                    vertical: .init(amount: h("1"), base: .down),
                    horizontal: .init(amount: h("0.5"), base: .out)))
        ),
        ("-1.00 prism 2 base 270", lens("-1", prism: .polar(amount: h("2"), angle: 270))),
        ("-1.00 prism 2 at 0", lens("-1", prism: .polar(amount: h("2"), angle: 0))),
        ("-4.00 DS vertex 12 pd 32 npd 30", lens("-4", vertex: "12", pd: "32", npd: "30")),
        ("  +1.50   DS  ", lens("1.5")),
        (".75 DS", lens("0.75")),
        (
            "-2.00 add +1.00 prism 1 BI bc 8.6 dia 14",
            lens("-2", add: "1", prism: horizontal("1", .in), bc: "8.6", dia: "14")
        ),
        // Order of the trailing words does not matter.
        ("-2.00 dia 14 bc 8.6 add +1.00", lens("-2", add: "1", bc: "8.6", dia: "14"))
    ])
    func parses(text: String, expected: LensSpecification) throws {
        #expect(try LensNotation.parse(text) == expected)
    }

    @Test(arguments: [
        "", "   ", "foo", "-2 foo", "-2 x", "-2 -1 x", "1.234", "-2.00 -0.755 x 90", "DS", "sph", "sph DS", "x 180",
        "-2.00 add +1.00 add +1.00", "-2.00 add +1.00 addition +1.25", "-2.00 bc 8.6 bc 8.7",
        "-1.00 prism 1 BU 2 BD", "-1.00 prism 1 BI 2 BO", "-1.00 prism 1.5", "-1.00 prism BI", "-1.00 prism 1.5 BX",
        "-1.00 prism 1 BU 2 @ 90", "-1.00 prism 2 @", "-1.00 prism 2 @ 4.5", "-1.00 prism 1 BI prism 1 BU",
        "-2 -1 x 90 180", "-2 -1 x 90.5", "-2 -1 x -90", "-2 -1 x 1800", "-2 -1 x ninety", "-2 add", "-2 bc",
        "-2 # 3", "-2.00 DS x", "-2.00 *", "-2,25 -0,75 x 180", "-", "+", "1e3", "\u{2212}"
    ])
    func refusesGarbage(text: String) {
        #expect(throws: LensNotation.Unreadable.self) { try LensNotation.parse(text) }
    }

    @Test func errorsSayWhatWasWrong() {
        func problem(_ text: String) -> String {
            do {
                _ = try LensNotation.parse(text)
                return ""
            } catch { return error.description }
        }
        #expect(problem("").contains("sphere"))
        #expect(problem("foo").contains("'foo'"))
        #expect(problem("-2 foo").contains("'foo'"))
        #expect(problem("1.234").contains("1.234"))
        #expect(problem("-2.00 add +1 add +1").contains("twice"))
        #expect(problem("-1 prism 1 BU 2 BD").contains("two vertical parts"))
        #expect(problem("-1 prism 1 BI 2 BO").contains("two horizontal parts"))
        #expect(problem("-2 x").contains("axis"))
    }

    @Test(arguments: [
        (
            "prism 1 BU 2 BO",
            Prism.rectangular(
                vertical: .init(amount: Hundredths(1), base: .up),
                horizontal: .init(amount: Hundredths(2), base: .out))
        ),
        (
            "1 BU 2 BO",
            .rectangular(
                vertical: .init(amount: Hundredths(1), base: .up), horizontal: .init(amount: Hundredths(2), base: .out))
        ),
        ("prism 2 @ 45", .polar(amount: Hundredths(2), angle: 45)),
        ("2 @ 45", .polar(amount: Hundredths(2), angle: 45)),
        ("1.5 BI", .rectangular(vertical: nil, horizontal: .init(amount: Hundredths(raw: 150), base: .in))),
        ("0.75 base down", .rectangular(vertical: .init(amount: Hundredths(raw: 75), base: .down), horizontal: nil)),
        ("3 BO", .rectangular(vertical: nil, horizontal: .init(amount: Hundredths(3), base: .out))),
        ("2 base 135", .polar(amount: Hundredths(2), angle: 135))
    ])
    func parsesAPrismOnItsOwn(text: String, expected: Prism) throws {
        #expect(try Prism.parse(text) == expected)
        #expect(try Prism.parse(expected.notation) == expected)
    }

    @Test(arguments: [
        "", "prism", "1.5", "BI", "1.5 BI extra", "1 BU 2 BD", "1 BI 1 BO", "2 @", "2 @ 45 1 BI", "1.5 BX", "1.234 BI"
    ])
    func refusesABadPrism(text: String) {
        #expect(throws: LensNotation.Unreadable.self) { try Prism.parse(text) }
    }

    @Test func prismNotation() {
        #expect(
            Prism.rectangular(vertical: .init(amount: h("1"), base: .up), horizontal: .init(amount: h("2"), base: .out))
                .notation == "1 BU 2 BO")
        #expect(Prism.rectangular(vertical: .init(amount: h("0.5"), base: .down), horizontal: nil).notation == "0.5 BD")
        #expect(horizontal("1.5", .in).notation == "1.5 BI")
        #expect(Prism.polar(amount: h("2"), angle: 45).notation == "2 @ 45")
        #expect(Prism.polar(amount: h("2"), angle: 45).amounts == [h("2")])
        #expect(
            Prism.rectangular(vertical: .init(amount: h("1"), base: .up), horizontal: .init(amount: h("2"), base: .out))
                .amounts == [h("1"), h("2")])
    }
}

/// Inputs the notation reads wrongly today (see the final report).
@Suite struct LensNotationBugTests {
    // BUG (Sources/RxModel/LensNotation.swift:72): a word swallows a following ".", so the decimal point
    // of a touching number such as ".75" is lost: "add.75" is read as add +75.00 and "prism.5 BI" as
    // 5 prism dioptres (ten times too much, and inside the accepted range, so the rules do not catch it).
    // With a space ("add .75", "prism .5 BI") both read correctly.
    @Test func touchingWordBeforeALeadingDotNumber() throws {
        #expect(try LensNotation.parse("+1.00 add .75").add == h("0.75"))
        #expect(try LensNotation.parse("+1.00 prism .5 BI").prism == horizontal("0.5", .in))
        #expect(try LensNotation.parse("+1.00 add.75").add == h("0.75"))
        #expect(try LensNotation.parse("+1.00 prism.5 BI").prism == horizontal("0.5", .in))
    }

    // BUG (Sources/RxModel/LensNotation.swift:66-69): "\u{0394}" (Δ) "marks prism dioptres", but the tokenizer
    // turns it into the keyword "prism", so it only works before the amount ("Δ1.5 BI"). Written the usual
    // way, after the amount ("1.5Δ BI"), it fails with "prism base 'prism': expected BU, BD, BI, BO or @ angle".
    @Test func deltaAfterThePrismAmount() throws {
        #expect(try Prism.parse("\u{0394}1.5 BI") == horizontal("1.5", .in))
        #expect((try? Prism.parse("1.5\u{0394} BI")) == horizontal("1.5", .in))
        #expect(
            (try? LensNotation.parse("-1.00 -0.50 x 090 prism 1.5\u{0394} BI"))
                == lens("-1", "-0.5", x: 90, prism: horizontal("1.5", .in)))
    }
}

@Suite struct LensNotationFormatTests {
    @Test(arguments: [
        (lens("-2.25", "-0.75", x: 180), "-2.25 -0.75 x180"),
        (lens("-2.25", "-0.75", x: 180, add: "2"), "-2.25 -0.75 x180 add +2.00"),
        (lens("-1", "-0.5", x: 90, prism: horizontal("1.5", .in)), "-1.00 -0.50 x090 prism 1.5 BI"),
        (lens("-1", "-0.5", x: 5), "-1.00 -0.50 x005"),
        (lens("1.5"), "+1.50 DS"),
        (lens("-2", add: "2"), "-2.00 add +2.00"),
        (lens("0", add: "1.25"), "plano add +1.25"),
        (lens("0"), "plano"),
        (lens("0", "-0.5", x: 45), "plano -0.50 x045"),
        (lens("-3", "0", x: nil), "-3.00 DS"),
        (lens("-3", bc: "8.6", dia: "14.2"), "-3.00 bc 8.6 dia 14.2"),
        (lens("-2.75", "-1.25", x: 170, bc: "8.7", dia: "14.5"), "-2.75 -1.25 x170 bc 8.7 dia 14.5"),
        (lens("1", prism: .polar(amount: h("2"), angle: 45)), "+1.00 prism 2 @ 45"),
        (lens("1", vertex: "12", pd: "32", npd: "30"), "+1.00 DS")
    ])
    func formatsCanonically(lens: LensSpecification, text: String) {
        #expect(LensNotation.format(lens) == text)
    }

    @Test func formattingLeavesOutBrandPDAndVertex() {
        var spec = LensSpecification(
            sphere: h("-2.00"), vertexDistance: h("12"), farPD: h("32"), nearPD: h("30"), brand: "Acuvue")
        #expect(LensNotation.format(spec) == "-2.00 DS")
        spec.brand = nil
        #expect(LensNotation.format(spec) == "-2.00 DS")
    }

    @Test func generatedLensesRoundTripThroughTheNotation() throws {
        var generator = SeededGenerator(seed: 0x5EED_0F_0D05)
        var seen = (cylinder: 0, add: 0, prism: 0, polar: 0, bc: 0, plano: 0)
        for index in 0..<4000 {
            let kind: PrescriptionKind = index.isMultiple(of: 2) ? .glasses : .contacts
            var spec = generator.validLens(for: kind)
            if index % 50 == 0 { spec.sphere = .zero }
            // The generator must produce what the rules accept, or the property would prove little.
            let rx = Prescription(
                kind: kind, patient: Fixture.patient, prescriber: Fixture.prescriber, issued: Fixture.issued,
                expires: date("2027-03-01"), right: spec)
            let problems = violations(of: rx)
            guard problems.isEmpty else {
                Issue.record("generator made an invalid lens \(spec): \(problems)")
                return
            }

            let text = LensNotation.format(spec)
            let parsed: LensSpecification
            do { parsed = try LensNotation.parse(text) } catch {
                Issue.record("'\(text)' (from \(spec)) did not parse: \(error)")
                return
            }
            guard parsed == spec.notationFields else {
                Issue.record("'\(text)' parsed to \(parsed), expected \(spec.notationFields)")
                return
            }
            // Printing is canonical: printing what was read gives the same text.
            #expect(LensNotation.format(parsed) == text)

            if spec.hasCylinder { seen.cylinder += 1 }
            if spec.add != nil { seen.add += 1 }
            if spec.prism != nil { seen.prism += 1 }
            if case .polar? = spec.prism { seen.polar += 1 }
            if spec.baseCurve != nil { seen.bc += 1 }
            if spec.sphere.isZero { seen.plano += 1 }
        }
        // The generator really exercised every field.
        #expect(
            seen.cylinder > 1000 && seen.add > 500 && seen.prism > 400 && seen.polar > 100 && seen.bc > 500
                && seen.plano > 50)
    }

    @Test func roundTripSurvivesCaseAndUnicodeRewrites() throws {
        // What people type differs from the canonical print only in case, spacing and unicode signs.
        var generator = SeededGenerator(seed: 42)
        for index in 0..<500 {
            let spec = generator.validLens(for: index.isMultiple(of: 2) ? .glasses : .contacts)
            let canonical = LensNotation.format(spec)
            let typed = canonical.uppercased()
                .replacingAll("-", with: "\u{2212}")
                .replacingAll(" X", with: " \u{00D7} ")
            #expect(try LensNotation.parse(typed) == spec.notationFields, "\(typed)")
        }
    }
}

extension String {
    fileprivate func replacingAll(_ target: String, with replacement: String) -> String {
        split(separator: target, omittingEmptySubsequences: false).joined(separator: replacement)
    }
}
