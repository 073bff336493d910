import Foundation
import RxModel
import RxTestSupport
import Testing

// Differential tests: `Prescription(json:)` over `JSONTree` (the fast path every export and import
// uses) against Foundation's `JSONDecoder` with the `Codable` definitions (the reference). What
// one accepts the other must accept with the same value; what one refuses the other must refuse,
// with the same kind of error at the same coding path.

/// A decoding outcome reduced to what must agree: the value, or the error's kind and path (and
/// the message of rxvault's own refusals).
enum Outcome: Equatable, CustomStringConvertible {
    case value(AnyHashable)
    case refused(String)

    var description: String {
        switch self {
        case .value(let v): return "value \(v)"
        case .refused(let r): return "refused \(r)"
        }
    }

    static func of<T: Hashable>(_ body: () throws -> T) -> Outcome {
        do { return .value(AnyHashable(try body())) } catch let error as DecodingError {
            return .refused(describe(error))
        } catch {
            return .refused("not JSON")
        }
    }

    static func describe(_ error: DecodingError) -> String {
        func path(_ c: DecodingError.Context) -> String {
            c.codingPath.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined()
        }
        switch error {
        case .keyNotFound(let key, let c): return "missing \(path(c)).\(key.stringValue)"
        // null for a required value is a valueNotFound or a typeMismatch depending on the container: both "wrong type".
        case .typeMismatch(_, let c), .valueNotFound(_, let c): return "wrong type at \(path(c))"
        case .dataCorrupted(let c): return "corrupted at \(path(c)): \(c.debugDescription)"
        @unknown default: return "?"
        }
    }
}

func referencePrescription(_ json: String) -> Outcome {
    Outcome.of { try JSONDecoder().decode(Prescription.self, from: Data(json.utf8)) }
}

func fastPrescription(_ json: String) -> Outcome {
    Outcome.of {
        let tree: JSONTree
        do { tree = try JSONTree(parsing: Array(json.utf8)) } catch {
            throw DecodingError.dataCorrupted(
                .init(codingPath: [], debugDescription: "The given data was not valid JSON.", underlyingError: error))
        }
        return try Prescription(json: JSONValueReader(tree))
    }
}

/// Random prescriptions exercising every field the JSON can carry (not all valid by the rules:
/// decoding does not check them).
enum Generated {
    static let awkward = [
        "Zoë \"Zee\" O'Brien", "back\\slash", "tab\there", "line\nbreak", "bell\u{07}nul\u{0}",
        "emoji 👓 and ✓", "中文 名字", "", "slash/ok", "\u{1F}\u{7F}", "combining e\u{301}", "\u{2028}sep"
    ]

    static func text(_ rng: inout SeededGenerator) -> String {
        rng.next() % 3 == 0 ? awkward.randomElement(using: &rng)! : "Name \(rng.next() % 10_000)"
    }

    static func hundredths(_ rng: inout SeededGenerator, _ range: ClosedRange<Int>) -> Hundredths {
        Hundredths(raw: Int.random(in: range, using: &rng))
    }

    static func maybe<T>(_ rng: inout SeededGenerator, _ make: (inout SeededGenerator) -> T) -> T? {
        Bool.random(using: &rng) ? make(&rng) : nil
    }

    static func date(_ rng: inout SeededGenerator) -> CalendarDate {
        CalendarDate(
            year: Int.random(in: 1...9999, using: &rng), month: Int.random(in: 1...12, using: &rng),
            day: Int.random(in: 1...28, using: &rng))!
    }

    static func prism(_ rng: inout SeededGenerator) -> Prism {
        if Bool.random(using: &rng) {
            return .polar(amount: hundredths(&rng, 0...1000), angle: Int.random(in: 0...360, using: &rng))
        }
        let vertical = maybe(&rng) {
            Prism.Part(amount: hundredths(&$0, 0...1000), base: Prism.VerticalBase.allCases.randomElement(using: &$0)!)
        }
        let horizontal = maybe(&rng) {
            Prism.Part(
                amount: hundredths(&$0, 0...1000), base: Prism.HorizontalBase.allCases.randomElement(using: &$0)!)
        }
        return .rectangular(
            vertical: vertical,
            horizontal: vertical == nil && horizontal == nil
                ? Prism.Part(amount: Hundredths(raw: 150), base: .in) : horizontal)
    }

    static func lens(_ rng: inout SeededGenerator) -> LensSpecification {
        var lens = LensSpecification(
            sphere: hundredths(&rng, -3000...3000), cylinder: maybe(&rng) { hundredths(&$0, -1000...1000) },
            axis: maybe(&rng) { Int.random(in: 0...180, using: &$0) }, add: maybe(&rng) { hundredths(&$0, 0...400) },
            prism: maybe(&rng, prism), vertexDistance: maybe(&rng) { hundredths(&$0, 0...2500) },
            farPD: maybe(&rng) { hundredths(&$0, 2000...4000) }, nearPD: maybe(&rng) { hundredths(&$0, 2000...4000) },
            baseCurve: maybe(&rng) { hundredths(&$0, 500...1000) },
            diameter: maybe(&rng) { hundredths(&$0, 800...2400) },
            brand: maybe(&rng, text))
        lens.addDesignation = maybe(&rng) { AddDesignation.allCases.randomElement(using: &$0)! }
        lens.dominance = maybe(&rng) { LensDominance.allCases.randomElement(using: &$0)! }
        lens.balance = rng.next() % 5 == 0
        return lens
    }

    static func fhirValue(_ rng: inout SeededGenerator, depth: Int = 0) -> FHIRValue {
        switch Int.random(in: 0...(depth > 2 ? 4 : 6), using: &rng) {
        case 0: return .null
        case 1: return .bool(Bool.random(using: &rng))
        case 2: return .integer(Int.random(in: -1_000_000...1_000_000, using: &rng))
        case 3: return .number([0.5, -2.25, 1e-7, 3.141592653589793, 1.5e300, 0.1].randomElement(using: &rng)!)
        case 4: return .string(text(&rng))
        case 5: return .array((0..<Int.random(in: 0...3, using: &rng)).map { _ in fhirValue(&rng, depth: depth + 1) })
        default: return .object(members(&rng, depth: depth + 1))
        }
    }

    static func members(_ rng: inout SeededGenerator, depth: Int = 0) -> [String: FHIRValue] {
        var o: [String: FHIRValue] = [:]
        for _ in 0..<Int.random(in: 0...3, using: &rng) { o[text(&rng)] = fhirValue(&rng, depth: depth) }
        return o
    }

    static func prescription(_ rng: inout SeededGenerator) -> Prescription {
        let kind = PrescriptionKind.allCases.randomElement(using: &rng)!
        let patient: Patient =
            rng.next() % 4 == 0
            ? Patient(
                name: Bool.random(using: &rng) ? "" : text(&rng), birthDate: maybe(&rng, date),
                id: String(format: "%032x", rng.next()))
            : Patient(name: text(&rng), birthDate: maybe(&rng, date))
        var rx = Prescription(
            kind: kind, patient: patient,
            prescriber: Prescriber(name: text(&rng), licence: maybe(&rng, text), contact: maybe(&rng, text)),
            issued: date(&rng), expires: maybe(&rng, date), note: maybe(&rng, text),
            right: maybe(&rng, lens), left: maybe(&rng, lens),
            pupillaryDistance: maybe(&rng) {
                PupillaryDistance(far: hundredths(&$0, 4000...8000), near: maybe(&$0) { hundredths(&$0, 4000...8000) })
            })
        if rng.next() % 3 == 0 {
            rx.fhir = KeptFHIR(
                resource: members(&rng), right: maybe(&rng) { members(&$0) }, left: maybe(&rng) { members(&$0) },
                prescriber: maybe(&rng) { members(&$0) }, practitioner: maybe(&rng) { members(&$0) })
        }
        if kind == .contacts {
            rx.contactLensType = maybe(&rng) { ContactLensType.allCases.randomElement(using: &$0)! }
        }
        return rx
    }
}

@Suite struct JSONReadingTests {
    /// Thousands of generated prescriptions, written by the `Codable` encoder, read both ways.
    @Test func generatedPrescriptionsReadTheSameBothWays() throws {
        var rng = SeededGenerator(seed: 15)
        let encoder = JSONEncoder()
        for round in 0..<3000 {
            let rx = Generated.prescription(&rng)
            // Compact and pretty-printed, as stored content and exports are written.
            encoder.outputFormatting = round % 2 == 0 ? [] : [.prettyPrinted, .sortedKeys]
            let json = String(decoding: try encoder.encode(rx), as: UTF8.self)
            let fast = try Prescription(json: JSONValueReader(JSONTree(parsing: Array(json.utf8))))
            #expect(fast == rx, "round \(round): \(json)")
            #expect(fastPrescription(json) == referencePrescription(json), "round \(round): \(json)")
        }
    }

    static let base = #"{"kind":"glasses","patient":{"name":"A"},"prescriber":{"name":"B"},"issued":"2026-03-01""#

    /// Hand-made documents at every edge of the shape: each must be accepted or refused alike.
    static let edges: [String] = [
        base + "}",
        base + #","right":{"sphere":-2.25,"axis":90.0}}"#, // 90.0 reads as the Int 90
        base + #","right":{"sphere":-2.25,"axis":9e1}}"#,
        base + #","right":{"sphere":-2.25,"axis":90.5}}"#,
        base + #","right":{"sphere":-2.25,"axis":"90"}}"#,
        base + #","right":{"sphere":-2.25,"axis":99999999999999999999}}"#,
        base + #","right":{"sphere":1.234}}"#,
        base + #","right":{"sphere":1.10000000000000000001}}"#,
        base + #","right":{"sphere":-0}}"#,
        base + #","right":{"sphere":1e2}}"#,
        base + #","right":{"sphere":1E-2}}"#,
        base + #","right":{"sphere":1e400}}"#,
        base + #","right":{"sphere":1000000}}"#,
        base + #","right":{"sphere":999999.99}}"#,
        base + #","right":{"sphere":null}}"#,
        base + #","right":{"cylinder":-1}}"#,
        base + #","right":{"sphere":"1"}}"#,
        base + #","right":null}"#,
        base + #","right":[]}"#,
        base + #","right":{"sphere":0,"prism":{}}}"#,
        base + #","right":{"sphere":0,"prism":{"angle":45}}}"#,
        base + #","right":{"sphere":0,"prism":{"angle":null,"vertical":{"amount":1,"base":"up"}}}}"#,
        base + #","right":{"sphere":0,"prism":{"vertical":{"amount":1,"base":"in"}}}}"#,
        base + #","right":{"sphere":0,"prism":{"horizontal":{"amount":1}}}}"#,
        base + #","right":{"sphere":0,"prism":{"vertical":null,"horizontal":null}}}"#,
        base + #","right":{"sphere":0,"prism":{"amount":1,"angle":45,"vertical":{"amount":1,"base":"up"}}}}"#,
        base + #","right":{"sphere":0,"pupillaryDistance":{}}}"#,
        base + #","right":{"sphere":0,"pupillaryDistance":{"far":31.5,"near":"x"}}}"#,
        base + #","right":{"sphere":0,"pupillaryDistance":null}}"#,
        base + #","right":{"sphere":0,"dominance":"dom"}}"#,
        base + #","right":{"sphere":0,"dominance":"sideways"}}"#,
        base + #","right":{"sphere":0,"addDesignation":"low"}}"#,
        base + #","right":{"sphere":0,"addDesignation":"HIGH","balance":true}}"#,
        base + #","right":{"sphere":0,"balance":1}}"#,
        base + #","right":{"sphere":0,"balance":null}}"#,
        base + #","right":{"sphere":0,"unknown":[1,{"x":null}]}}"#,
        base + #","expires":"2026-02-30"}"#,
        base + #","expires":"10000-01-01"}"#,
        base + #","expires":null,"note":null}"#,
        base + #","expires":20260301}"#,
        base + #","pupillaryDistance":{"far":63}}"#,
        base + #","pupillaryDistance":{"near":60}}"#,
        base + #","contactLensType":"ortho-k"}"#,
        base + #","contactLensType":"orthok"}"#,
        base + #","fhir":{}}"#,
        base + #","fhir":{"resource":null}}"#,
        base + #","fhir":{"resource":{"a":1.0,"b":1e2,"c":1.5,"d":[null,true,"x"],"e":{"f":-0.0}}}}"#,
        base + #","fhir":{"resource":{"big":12345678901234567890,"huge":1e400}}}"#,
        base + #","fhir":{"resource":{},"right":[]}}"#,
        base + #","fhir":{"resource":{},"practitioner":null}}"#,
        base + #","note":"\u00e9\ud83d\udc53\n\t\"\\\/"}"#,
        base + #","note":"\ud83d"}"#,
        base + #","note":"\udc53x"}"#,
        base + #","note":"\x"}"#,
        base + #","note":"\u12"}"#,
        base + "," + #""note":"raw"# + "\u{01}" + #"control"}"#,
        base + #","note":"a",}"#, // one trailing comma is accepted
        base + #","right":{"sphere":1,"prism":{"amount":1,"angle":45,},},}"#,
        base + #",,"note":"a"}"#,
        base + #","note":"a",,}"#,
        #"{"kind":"spectacles","patient":{"name":"A"},"prescriber":{"name":"B"},"issued":"2026-03-01"}"#,
        #"{"kind":"glasses","patient":{"id":"abc"},"prescriber":{"name":"B"},"issued":"2026-03-01"}"#,
        #"{"kind":"glasses","patient":{"id":null},"prescriber":{"name":"B"},"issued":"2026-03-01"}"#,
        #"{"kind":"glasses","patient":{},"prescriber":{"name":"B"},"issued":"2026-03-01"}"#,
        #"{"kind":"glasses","patient":{"name":"A","birthDate":"1990-13-01"},"prescriber":{"name":"B"},"issued":"2026-03-01"}"#,
        #"{"kind":"glasses","patient":{"name":"A"},"prescriber":{"name":"B","licence":7},"issued":"2026-03-01"}"#,
        #"{"kind":"glasses","patient":{"name":"A"},"prescriber":{},"issued":"2026-03-01"}"#,
        #"{"kind":"glasses","patient":{"name":"A"},"prescriber":{"name":"B"}}"#,
        #"{"patient":{"name":"A"},"prescriber":{"name":"B"},"issued":"2026-03-01"}"#,
        // Not JSON, or not an object.
        base + "",
        base + "},",
        base + "} x",
        base + ",}",
        base + #","right":{"sphere":01}}"#,
        base + #","right":{"sphere":+1}}"#,
        base + #","right":{"sphere":.5}}"#,
        base + #","right":{"sphere":1.}}"#,
        base + #","right":{"sphere":1e}}"#,
        base + #","right":{"sphere":-}}"#,
        base + #","right":{"sphere":NaN}}"#,
        base + #","right":{"sphere":tru}}"#,
        "[]", "null", "1", "\"x\"", "", " ", "{", "{}",
        " \n\t" + base + "} \r\n"
    ]

    @Test(arguments: JSONReadingTests.edges)
    func edgeDocumentsReadTheSameBothWays(json: String) {
        #expect(fastPrescription(json) == referencePrescription(json))
    }

    /// A key given twice is where the two readers part on purpose: `JSONDecoder` takes the first
    /// and other readers the last, so one file could be read two ways (an import's filter and its
    /// stored record did); JSONTree refuses it, naming the key, at any depth and in large objects.
    @Test(arguments: [
        (Self.base + #","note":"a","note":"b"}"#, "note"),
        (Self.base + #","kind":"contacts"}"#, "kind"),
        (
            #"{"kind":"glasses","patient":{"name":"A","name":"B"},"prescriber":{"name":"B"},"issued":"2026-03-01"}"#,
            "name"
        ),
        ("{" + (0..<40).map { "\"k\($0)\":\($0)," }.joined() + #""k7":0}"#, "k7")
    ])
    func aKeyGivenTwiceIsRefused(json: String, key: String) {
        do {
            _ = try JSONTree(parsing: Array(json.utf8))
            Issue.record("JSONTree read \(json)")
        } catch {
            #expect(error.duplicateKey == key, "\(error)")
            #expect(error.problem == "the key \"\(key)\" appears twice in one object")
        }
    }

    /// Bytes that are not UTF-8 are refused by both.
    @Test func invalidUTF8IsRefusedBothWays() {
        for bad: [UInt8] in [[0xff], [0xc3, 0x28], [0xed, 0xa0, 0x80], [0xe2, 0x82]] {
            let bytes = Array(Self.base.utf8) + Array(#","note":""#.utf8) + bad + Array("\"}".utf8)
            let reference = Outcome.of { try JSONDecoder().decode(Prescription.self, from: Data(bytes)) }
            let fast = Outcome.of { try Prescription(json: JSONValueReader(JSONTree(parsing: bytes))) }
            if case .value = reference { Issue.record("JSONDecoder took invalid UTF-8 \(bad)") }
            if case .value = fast { Issue.record("JSONTree took invalid UTF-8 \(bad)") }
        }
    }

    /// Any JSON value, read as `FHIRValue` both ways (how kept FHIR elements are stored).
    @Test(arguments: [
        "1", "1.0", "-0.0", "1e2", "2.5", "1e-400", "1e400", "12345678901234567890", "-9223372036854775808",
        "9223372036854775807", "9223372036854775808", "0.1", "123456789012345678.5", "-123456789012345678.9e1",
        "1234567890123456789.5e-1", "1.5e17", "[1,[2,[3,{}]]]", "[1,]", "[,]", "[1,,]", "{\"a\":1,}",
        #"{"a":{"b":[null,false,"\u0000"]}}"#, "\"\"", "true", "null", "[1,]", "{\"a\"}", "[1 2]"
    ])
    func anyValueReadsTheSameAsFHIRValue(json: String) {
        let reference = Outcome.of { try JSONDecoder().decode(FHIRValue.self, from: Data(json.utf8)) }
        let fast = Outcome.of { () throws -> FHIRValue in
            let tree: JSONTree
            do { tree = try JSONTree(parsing: Array(json.utf8)) } catch {
                throw DecodingError.dataCorrupted(
                    .init(
                        codingPath: [], debugDescription: "The given data was not valid JSON.", underlyingError: error))
            }
            return try JSONValueReader(tree).fhirValue()
        }
        #expect(fast == reference)
    }
}
