import Foundation
import RxModel
import RxTestSupport
import Testing

private func encode<T: Encodable>(_ value: T) throws -> String {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys]
    return String(decoding: try encoder.encode(value), as: UTF8.self)
}

private func decode<T: Decodable>(_ type: T.Type, _ json: String) throws -> T {
    try JSONDecoder().decode(type, from: Data(json.utf8))
}

@Suite struct PrescriptionJSONTests {
    /// A glasses prescription with every field set, both prism forms and both PD forms.
    static let fullGlasses = Prescription(
        kind: .glasses,
        patient: Patient(name: "Ada Lovelace", birthDate: CalendarDate(year: 1990, month: 5, day: 1)),
        prescriber: Prescriber(name: "Dr. Iris Hale", licence: "OPT-1234", contact: "12 High St, +1 555 0100"),
        issued: CalendarDate(year: 2026, month: 3, day: 1)!,
        expires: CalendarDate(year: 2028, month: 3, day: 1),
        note: "Progressives; \"anti-glare\" ✓\nsecond line",
        right: LensSpecification(
            sphere: Hundredths(raw: -225), cylinder: Hundredths(raw: -75), axis: 180, add: Hundredths(raw: 200),
            prism: .rectangular(
                vertical: .init(amount: Hundredths(raw: 100), base: .up),
                horizontal: .init(amount: Hundredths(raw: 150), base: .in)),
            vertexDistance: Hundredths(raw: 1200), farPD: Hundredths(raw: 3150), nearPD: Hundredths(raw: 2950)),
        left: LensSpecification(
            sphere: Hundredths(raw: 1025), cylinder: Hundredths(raw: 125), axis: 5, add: Hundredths(raw: 225),
            prism: .polar(amount: Hundredths(raw: 225), angle: 315),
            vertexDistance: Hundredths(raw: 1350), farPD: Hundredths(raw: 3200), nearPD: Hundredths(raw: 3010)),
        pupillaryDistance: PupillaryDistance(far: Hundredths(raw: 6350), near: Hundredths(raw: 6010)))

    /// A contact-lens prescription with every contacts field set.
    static let fullContacts = Prescription(
        kind: .contacts,
        patient: Patient(name: "Grace Hopper", birthDate: CalendarDate(year: 1956, month: 12, day: 9)),
        prescriber: Prescriber(name: "Dr. Omar Reyes", licence: "CL-998", contact: "reyes@example.org"),
        issued: CalendarDate(year: 2026, month: 1, day: 15)!,
        expires: CalendarDate(year: 2027, month: 1, day: 15),
        note: "Daily wear",
        right: LensSpecification(
            sphere: Hundredths(raw: -300), add: Hundredths(raw: 150), baseCurve: Hundredths(raw: 860),
            diameter: Hundredths(raw: 1420), brand: "Acuvue Oasys"),
        left: LensSpecification(
            sphere: Hundredths(raw: -275), cylinder: Hundredths(raw: -125), axis: 170, add: Hundredths(raw: 150),
            baseCurve: Hundredths(raw: 865), diameter: Hundredths(raw: 1450), brand: "Biofinity Toric"))

    @Test(arguments: [
        PrescriptionJSONTests.fullGlasses, PrescriptionJSONTests.fullContacts, Fixture.glasses(),
        Fixture.contacts(left: nil),
        Fixture.glasses(right: nil, expires: nil)
    ])
    func encodeThenDecodeIsTheIdentity(rx: Prescription) throws {
        let json = try encode(rx)
        let decoded = try decode(Prescription.self, json)
        #expect(decoded == rx)
        // Encoding is stable.
        #expect(try encode(decoded) == json)
    }

    @Test func fixturesUsedHereAreValidPrescriptions() throws {
        #expect(violations(of: Self.fullContacts).isEmpty)
        var glasses = Self.fullGlasses
        glasses.pupillaryDistance = nil // both PD forms at once is refused, but the JSON carries both
        #expect(violations(of: glasses).isEmpty)
    }

    @Test func shapeUsesExactNumbersISODatesAndLeavesOutAbsentValues() throws {
        let json = try encode(Fixture.glasses(left: nil, expires: nil))
        #expect(json.contains(#""sphere":-2.25"#))
        #expect(json.contains(#""cylinder":-0.75"#))
        #expect(json.contains(#""axis":180"#))
        #expect(json.contains(#""issued":"2026-03-01""#))
        #expect(json.contains(#""birthDate":"1990-05-01""#))
        #expect(json.contains(#""kind":"glasses""#))
        #expect(!json.contains("null"))
        #expect(!json.contains("expires"))
        #expect(!json.contains("\"left\""))
        #expect(!json.contains("\"note\""))
        #expect(!json.contains("\"add\""))

        let full = try encode(Self.fullGlasses)
        #expect(full.contains(#""vertexDistance":12"#))
        #expect(full.contains(#""pupillaryDistance":{"far":31.5,"near":29.5}"#))
        #expect(
            full.contains(#""prism":{"horizontal":{"amount":1.5,"base":"in"},"vertical":{"amount":1,"base":"up"}}"#))
        #expect(full.contains(#""prism":{"amount":2.25,"angle":315}"#))
        #expect(full.contains(#""pupillaryDistance":{"far":63.5,"near":60.1}"#))
    }

    @Test func decodesAHandWrittenDocument() throws {
        let json = """
            {"kind":"contacts","patient":{"name":"Grace Hopper"},"prescriber":{"name":"Dr. Omar Reyes"},
             "issued":"2026-01-15","expires":"2027-01-15",
             "right":{"sphere":-3,"baseCurve":8.6,"diameter":14.2,"brand":"Acuvue Oasys"},
             "left":{"sphere":-2.75,"cylinder":-1.25,"axis":170,"baseCurve":8.7,"diameter":14.5,"brand":"Acuvue Oasys",
                     "pupillaryDistance":{"near":30}}}
            """
        let rx = try decode(Prescription.self, json)
        #expect(rx.kind == .contacts)
        #expect(rx.patient == Patient(name: "Grace Hopper"))
        var written = Fixture.contactsRight
        written.manufacturer = nil
        #expect(rx.right == written)
        #expect(rx.left?.sphere == h("-2.75") && rx.left?.cylinder == h("-1.25") && rx.left?.axis == 170)
        #expect(rx.left?.baseCurve == h("8.7") && rx.left?.diameter == h("14.5"))
        #expect(rx.left?.farPD == nil && rx.left?.nearPD == h("30"))
        #expect(rx.expires == date("2027-01-15"))
    }

    @Test(arguments: [
        #"{"sphere":1.234}"#, #"{"sphere":-2.251}"#, #"{"sphere":-2.25,"cylinder":0.001}"#, #"{"sphere":1e300}"#,
        #"{"sphere":"-2.25"}"#, #"{"cylinder":-0.75}"#, #"{"sphere":-2,"axis":90.5}"#,
        #"{"sphere":-2,"baseCurve":8.655}"#,
        #"{"sphere":-2,"prism":{}}"#, #"{"sphere":-2,"prism":{"amount":1.5}}"#,
        #"{"sphere":-2,"prism":{"amount":1.005,"angle":90}}"#,
        #"{"sphere":-2,"prism":{"vertical":{"amount":1,"base":"left"}}}"#,
        #"{"sphere":-2,"pupillaryDistance":{"far":31.555}}"#
    ])
    func refusesBadLensJSON(json: String) {
        #expect(throws: DecodingError.self) { try decode(LensSpecification.self, json) }
    }

    @Test func refusesAnInexactValueInsideAPrescription() throws {
        var json = try encode(Fixture.glasses())
        #expect(json.contains(#""sphere":-2.25"#))
        json = json.replacingOccurrences(of: #""sphere":-2.25"#, with: #""sphere":1.234"#)
        #expect(throws: DecodingError.self) { try decode(Prescription.self, json) }
    }

    @Test(arguments: ["2026-02-30", "2026-3-1", "01/03/2026", "", "2026-03-01T00:00:00Z"])
    func refusesBadDates(text: String) throws {
        let json = try encode(Fixture.glasses()).replacingOccurrences(of: "2026-03-01", with: text)
        #expect(throws: DecodingError.self) { try decode(Prescription.self, json) }
    }

    @Test func refusesAnUnknownKind() throws {
        let json = try encode(Fixture.glasses()).replacingOccurrences(
            of: #""kind":"glasses""#, with: #""kind":"monocle""#)
        #expect(throws: DecodingError.self) { try decode(Prescription.self, json) }
    }

    @Test func everyHundredthSurvivesJSON() throws {
        let values = (-100_000...100_000).map { Hundredths(raw: $0) }
        let decoded = try decode([Hundredths].self, try encode(values))
        #expect(decoded == values)
    }

    @Test func generatedLensesSurviveJSON() throws {
        var generator = SeededGenerator(seed: 2026)
        for index in 0..<2000 {
            let lens = generator.validLens(for: index.isMultiple(of: 2) ? .glasses : .contacts)
            #expect(try decode(LensSpecification.self, try encode(lens)) == lens)
        }
    }
}
