import RxModel
import Testing

/// `LensNotation.Reading.applied(to:)`: an eye written again replaces only what it writes.
@Suite struct NotationEditTests {
    static let stored = LensSpecification(
        sphere: h("-2.00"), cylinder: h("-0.50"), axis: 170, add: h("2.00"),
        prism: .rectangular(vertical: nil, horizontal: .init(amount: h("1.5"), base: .in)),
        vertexDistance: h("12"), farPD: h("31"), nearPD: h("29"))

    func apply(_ text: String, to lens: LensSpecification? = stored) throws -> LensSpecification {
        try LensNotation.read(text).applied(to: lens)
    }

    @Test func whatTheNotationDoesNotWriteStays() throws {
        let edited = try apply("-2.25 -0.50 x170 add +2.00")
        var expected = Self.stored
        expected.sphere = h("-2.25")
        #expect(edited == expected)
        #expect(try apply("-2.25 -0.75 x180").add == h("2.00"))
        #expect(
            try apply("-2.25 -0.75 x180 prism 1 BU").prism
                == .rectangular(vertical: .init(amount: h("1"), base: .up), horizontal: nil))
        #expect(try apply("-2.25 -0.75 x180 vertex 14").vertexDistance == h("14"))
        #expect(try apply("-2.25 -0.75 x180").farPD == h("31"))
    }

    @Test func cylinderAndAxisAreOneUnit() throws {
        #expect(throws: LensNotation.Unreadable.self) { try apply("-1.25") }
        #expect(throws: LensNotation.Unreadable.self) { try apply("plano add +2.00") }
        let ds = try apply("-1.25 DS")
        #expect(ds.cylinder == nil && ds.axis == nil && ds.prism == Self.stored.prism && ds.add == h("2.00"))
        let axisOnly = try apply("-1.25 x90")
        #expect(axisOnly.cylinder == nil && axisOnly.axis == 90, "left for the rules to refuse, not merged")
        // Left for the rules to store as spherical, with a warning.
        let zeroCyl = try apply("-1.25 0.00 x90")
        #expect(zeroCyl.cylinder == .zero && zeroCyl.axis == 90)
        #expect(try apply("-1.25 0.00").cylinder == nil)
        var noCylinder = Self.stored
        LensField.cylinder.remove(from: &noCylinder)
        #expect(noCylinder.axis == nil)
        #expect(try apply("-1.25", to: noCylinder).sphere == h("-1.25"))
    }

    @Test func theMessageSaysHowToWriteEither() {
        do {
            _ = try LensNotation.read("-1.25").applied(to: Self.stored)
            Issue.record("accepted")
        } catch {
            #expect(error.problem.contains("-0.50 x170"))
            #expect(error.problem.contains("\"-1.25 -0.50 x170\""))
            #expect(error.problem.contains("\"-1.25 DS\""))
        }
    }

    @Test func aNewEyeIsTheNotation() throws {
        #expect(try apply("-1.25", to: nil) == LensSpecification(sphere: h("-1.25")))
    }

    @Test func readingSaysWhatWasWritten() throws {
        let reading = try LensNotation.read("-2.00 -0.50 x170 add +2 prism 1 BI bc 8.6")
        #expect(reading.given == [.sphere, .cylinder, .axis, .add, .prism, .baseCurve])
        #expect(try LensNotation.read("+1.50 DS").sphereOnly)
        #expect(try LensNotation.read("+1.50").sphereOnly == false)
    }
}
