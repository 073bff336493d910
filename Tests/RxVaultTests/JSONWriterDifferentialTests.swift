import Foundation
import RxModel
import RxTestSupport
import Testing

@testable import RxVault

/// Exports are written by `JSONWriter` (RxModel) instead of JSONEncoder / JSONSerialization. These
/// compare the two on many generated prescriptions: the rxvault export entry with JSONEncoder's
/// bytes for the `Codable` entry (pretty, and the compact form the export binding covers), and
/// each FHIR Bundle entry with JSONSerialization's bytes for the same resource.
@Suite struct JSONWriterDifferentialTests {
    /// A JSONEncoder configured as the exports used to be written.
    static func encoder(pretty: Bool, slashes: Bool = false) -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting =
            pretty
            ? [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
            : slashes ? [.sortedKeys] : [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }

    @Test func numbersAreWrittenAsJSONEncoderWritesTheirDoubles() throws {
        let encoder = Self.encoder(pretty: false)
        var raws = Array(-100_000...100_000)
        var random = Generator(seed: 7)
        for _ in 0..<20_000 { raws.append(Int.random(in: -99_999_999...99_999_999, using: &random)) }
        raws += [99_999_999, -99_999_999, 100_000_000, 123_456_789_012, -1_000_000_000_000_000]
        for raw in raws {
            var writer = JSONWriter(style: .compact)
            writer.number(Hundredths(raw: raw))
            let expected = try encoder.encode(Hundredths(raw: raw))
            #expect(writer.bytes == Array(expected), "raw \(raw)")
            if writer.bytes != Array(expected) { return }
        }
        for value in [0.1 + 0.2, 1e-7, 1e21, -0.0, 5e-324, 1.7976931348623157e308, 123456789.125, 2.0, -3.5] {
            var writer = JSONWriter(style: .compact)
            writer.double(value)
            #expect(writer.bytes == Array(try encoder.encode(value)), "\(value)")
        }
        for value in [0, 7, -7, 10, 1_234_567_890, Int.max, Int.min] {
            var writer = JSONWriter(style: .compact)
            writer.int(value)
            #expect(writer.bytes == Array(try encoder.encode(value)), "\(value)")
        }
    }

    @Test func stringsAreEscapedAsJSONEncoderEscapesThem() throws {
        var texts = (0..<128).map { String(UnicodeScalar(UInt8($0))) }
        texts += ["", "a/b\\c\"d", "Zoë 𝄞 \u{7f}\u{2028}\u{2029}\u{feff}", "e\u{301}", "\u{1f}\u{0}\u{8}\u{c}\t\r\n"]
        var random = Generator(seed: 11)
        for _ in 0..<500 { texts.append(random.text()) }
        for slashes in [false, true] {
            let encoder = Self.encoder(pretty: false, slashes: slashes)
            for text in texts {
                var writer = JSONWriter(style: .compact, escapeSlashes: slashes)
                writer.string(text)
                #expect(writer.bytes == Array(try encoder.encode(text)), "\(text.debugDescription)")
            }
        }
    }

    @Test func exportEntriesAreJSONEncodersBytes() throws {
        var random = Generator(seed: 2026)
        let pretty = Self.encoder(pretty: true)
        let compact = Self.encoder(pretty: false)
        for n in 0..<1500 {
            let item = random.item(n)
            let entry = RxvaultExport.entry(item)
            var writer = JSONWriter(style: .pretty)
            try RxvaultExport.writeEntry(item, to: &writer, attachmentData: true)
            let expected = Array(try pretty.encode(entry))
            #expect(
                writer.bytes == expected,
                "entry \(n): \(String(decoding: writer.bytes, as: UTF8.self))\nvs\n\(String(decoding: expected, as: UTF8.self))"
            )
            var bound = JSONWriter(style: .compact)
            try RxvaultExport.writeEntry(item, to: &bound, attachmentData: false)
            #expect(bound.bytes == Array(try compact.encode(RxvaultExport.stripped(entry))), "bound entry \(n)")
            if writer.bytes != expected { return }
        }
    }

    /// The sealed content of a version (what `seal` encrypts) is JSONEncoder's bytes for the
    /// `Codable` RecordContent: sorted keys, compact, slashes escaped.
    @Test func sealedRecordContentIsJSONEncodersBytes() throws {
        var random = Generator(seed: 15)
        let encoder = Self.encoder(pretty: false, slashes: true)
        for n in 0..<1500 {
            let content = RecordContent(
                schema: RecordContent.currentSchema, recorded: "2026-04-20T10:00:0\(n % 10)Z",
                prescription: random.prescription(), change: n % 3 == 0 ? "re-keyed: a/b \"c\"" : nil)
            let expected = Array(try encoder.encode(content))
            #expect(try content.sealedJSON() == expected, "content \(n)")
            if try content.sealedJSON() != expected { return }
        }
    }

    /// The whole streamed export still reads back, and its binding (the MAC over the compact
    /// content) is the one the import recomputes.
    @Test func aStreamedExportReadsBackWithItsBinding() throws {
        var random = Generator(seed: 99)
        let items = (0..<300).map { random.item($0) }
        var covered: [UInt8] = []
        let bytes = try RxvaultExport.encode(items, exported: "2026-04-20T10:00:00Z") { content in
            covered = content
            return (vaultID: Array(repeating: 7, count: 16), mac: Array(repeating: 9, count: 32))
        }
        let file = try RxvaultExport.decodeFile(bytes)
        let read = try file.items
        #expect(read.count == items.count)
        // Compared as JSON: a kept FHIR number written `3` reads back as an integer.
        let encoder = Self.encoder(pretty: false)
        for (back, item) in zip(read, items) {
            #expect(try encoder.encode(back.prescription) == encoder.encode(item.record.prescription))
            #expect(
                try back.history.map { try encoder.encode($0.prescription) }
                    == item.history.map { try encoder.encode($0.prescription) })
        }
        let binding = try #require(try file.binding)
        #expect(binding.content == covered)
        #expect(
            binding.content
                == Array(
                    try Self.encoder(pretty: false).encode(
                        items.map { RxvaultExport.stripped(RxvaultExport.entry($0)) })))
    }

    /// Each FHIR Bundle entry as the writer writes it and as JSONSerialization wrote the same
    /// resource (the keys rxvault writes, and kept elements with lower-case names, sort alike).
    @Test func fhirEntriesAreJSONSerializationsBytes() throws {
        var random = Generator(seed: 4)
        var patients: Set<String> = []
        var practitioners: Set<String> = []
        for n in 0..<1500 {
            for entry in FHIR.entries(
                random.item(n, fhirKeys: true), patients: &patients, practitioners: &practitioners)
            {
                var writer = JSONWriter(style: .pretty)
                writer.value(entry)
                let expected = Array(
                    try JSONSerialization.data(
                        withJSONObject: entry.foundation,
                        options: [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]))
                #expect(
                    writer.bytes == expected,
                    "item \(n): \(String(decoding: writer.bytes, as: UTF8.self))\nvs\n\(String(decoding: expected, as: UTF8.self))"
                )
                if writer.bytes != expected { return }
            }
        }
    }

    /// The Practitioner id is named by JSONEncoder's compact text (slashes escaped): unchanged.
    @Test func practitionerIDsAreNamedAsBefore() throws {
        let practitioner: [String: FHIRValue] = [
            "resourceType": .string("Practitioner"), "id": .string("p/1"),
            "identifier": .array([
                .object(["system": .string("http://hl7.org/fhir/sid/us-npi"), "value": .string("1234567893")])
            ]),
            "name": .array([.object(["text": .string("Dr. \"Q\" Ng")])])
        ]
        let entry = try #require(FHIR.practitionerEntry(KeptFHIR(practitioner: practitioner)))
        let canonical = String(
            decoding: try Self.encoder(pretty: false, slashes: true).encode(FHIRValue.object(practitioner)),
            as: UTF8.self)
        #expect(entry.id == FHIR.uuid("practitioner|" + canonical))
        #expect(canonical.contains(#"http:\/\/"#))
    }
}

typealias Generator = SeededGenerator

/// Deterministic prescriptions with every field the JSON carries.
extension SeededGenerator {
    mutating func h(_ range: ClosedRange<Int>) -> Hundredths { Hundredths(raw: Int.random(in: range, using: &self)) }

    static let pieces = [
        "Ada", "Zoë", "O'Brien", "\"Doc\"", "back\\slash", "a/b", "tab\there", "new\nline", "\u{1}\u{1f}\u{7f}",
        "名前", "🙂", "e\u{301}", "  ", "Ünïcödé", "\u{2028}", "&<>"
    ]

    mutating func text() -> String {
        (0..<Int.random(in: 1...4, using: &self)).map { _ in Self.pieces.randomElement(using: &self)! }.joined(
            separator: " ")
    }

    mutating func lens(_ kind: PrescriptionKind) -> LensSpecification {
        var lens = LensSpecification(sphere: h(-3000...3000))
        if chance(60) {
            lens.cylinder = h(-1000...1000)
            lens.axis = Int.random(in: 0...180, using: &self)
        }
        if chance(40) { lens.add = h(25...400) }
        if chance(40) {
            switch Int.random(in: 0..<4, using: &self) {
            case 0:
                lens.prism = .rectangular(
                    vertical: .init(amount: h(1...2000), base: chance(50) ? .up : .down), horizontal: nil)
            case 1:
                lens.prism = .rectangular(
                    vertical: nil, horizontal: .init(amount: h(1...2000), base: chance(50) ? .in : .out))
            case 2:
                lens.prism = .rectangular(
                    vertical: .init(amount: h(1...2000), base: .down), horizontal: .init(amount: h(1...2000), base: .in)
                )
            default: lens.prism = .polar(amount: h(1...2000), angle: Int.random(in: 0...360, using: &self))
            }
        }
        if chance(30) { lens.vertexDistance = h(500...2500) }
        if chance(30) { lens.farPD = h(2000...4000) }
        if chance(20) { lens.nearPD = h(2000...4000) }
        if kind == .contacts || chance(10) {
            if chance(80) { lens.baseCurve = h(700...1000) }
            if chance(80) { lens.diameter = h(800...1650) }
            if chance(60) { lens.brand = text() }
        }
        if chance(20) { lens.addDesignation = AddDesignation.allCases.randomElement(using: &self) }
        if chance(20) { lens.dominance = chance(50) ? .dominant : .nonDominant }
        if chance(10) { lens.balance = true }
        return lens
    }

    mutating func value(depth: Int = 0) -> FHIRValue {
        switch Int.random(in: 0..<(depth > 2 ? 5 : 7), using: &self) {
        case 0: return .null
        case 1: return .bool(chance(50))
        case 2: return .integer(Int.random(in: -1000...100_000, using: &self))
        case 3: return .number([0.5, 1.25, 0.1 + 0.2, 1e-7, 1e21, -2.75, 3.0].randomElement(using: &self)!)
        case 4: return .string(text())
        case 5: return .array((0..<Int.random(in: 0...3, using: &self)).map { _ in value(depth: depth + 1) })
        default: return .object(members(depth: depth + 1))
        }
    }

    static let keys = [
        "meta", "text", "encounter", "color", "duration", "note", "status", "created", "valueCode", "value", "url",
        "code", "display", "system", "coding", "authorReference", "extension", "identifier"
    ]

    mutating func members(depth: Int) -> [String: FHIRValue] {
        var members: [String: FHIRValue] = [:]
        for _ in 0..<Int.random(in: 0...3, using: &self) {
            members[Self.keys.randomElement(using: &self)!] = value(depth: depth)
        }
        return members
    }

    mutating func kept() -> KeptFHIR {
        var kept = KeptFHIR(resource: members(depth: 1))
        if chance(30) { kept.resource["id"] = .string("src-\(Int.random(in: 0...99, using: &self))") }
        if chance(30) {
            kept.resource["identifier"] = .array([.object(["system": .string("urn:x"), "value": .string(text())])])
        }
        if chance(30) { kept.resource["dateWritten"] = .string("2026-03-01T10:00:00Z") }
        if chance(30) { kept.right = members(depth: 1) }
        if chance(30) { kept.left = members(depth: 1) }
        if chance(30) { kept.prescriber = ["type": .string("Practitioner")] }
        if chance(20) {
            kept.practitioner = [
                "resourceType": .string("Practitioner"), "name": .array([.object(["text": .string(text())])])
            ]
        }
        return kept
    }

    mutating func prescription() -> Prescription {
        let kind: PrescriptionKind = chance(50) ? .glasses : .contacts
        let patient =
            chance(30)
            ? Patient(name: chance(50) ? "" : text(), birthDate: nil, id: String(repeating: "ab", count: 16))
            : Patient(
                name: text(),
                birthDate: chance(70)
                    ? CalendarDate(year: Int.random(in: 1930...2020, using: &self), month: 5, day: 17) : nil)
        var rx = Prescription(
            kind: kind, patient: patient,
            prescriber: Prescriber(
                name: text(), licence: chance(50) ? text() : nil, contact: chance(50) ? text() : nil),
            issued: CalendarDate(year: 2025, month: Int.random(in: 1...12, using: &self), day: 3)!,
            expires: chance(60) ? CalendarDate(year: 2027, month: 1, day: 31) : nil,
            note: chance(40) ? text() : nil,
            right: chance(90) ? lens(kind) : nil, left: chance(90) ? lens(kind) : nil,
            pupillaryDistance: chance(40)
                ? PupillaryDistance(far: h(5000...7000), near: chance(50) ? h(5000...7000) : nil) : nil)
        if kind == .contacts && chance(50) { rx.contactLensType = ContactLensType.allCases.randomElement(using: &self) }
        return rx
    }

    mutating func item(_ n: Int, fhirKeys: Bool = true) -> ExportItem {
        let id = PrescriptionID(hex: String(format: "%032x", n))!
        var rx = prescription()
        if fhirKeys && chance(40) { rx.fhir = kept() }
        let versions = Int.random(in: 1...3, using: &self)
        let history = (1..<versions).map {
            PrescriptionRecord(id: id, version: $0, recorded: "2026-01-0\($0)T08:00:00Z", prescription: prescription())
        }
        return ExportItem(
            record: PrescriptionRecord(id: id, version: versions, recorded: "2026-02-01T09:30:00Z", prescription: rx),
            history: history, attachments: [])
    }
}

/// A patient record's sealed info read with `JSONTree` (`PatientInfo(json:)`) and with the
/// `Codable` decoding it replaced: the same values, and both refuse what is not one.
@Suite struct PatientInfoReadingTests {
    /// A measurement (issue 26) with every field, or only some, by `n`.
    static func measurement(_ n: Int, device: String) -> StoredMeasurement {
        var m = EyeMeasurement(
            id: "0123456789abcdef0123456789abcdef", date: CalendarDate(year: 2020 + n % 6, month: 3, day: 1)!,
            axialLengthRight: Hundredths(raw: 2300 + n), axialLengthLeft: n % 8 == 0 ? nil : Hundredths(raw: 2405),
            device: n % 8 == 0 ? device : nil, cycloplegic: n % 8 == 0)
        m.acuity[.od] = try? VisualAcuity(parsing: "6/7.5")
        if n % 8 == 0 { m.acuity[.ouUncorrected] = try? VisualAcuity(parsing: "logMAR 0.10") }
        return StoredMeasurement(m)
    }

    @Test func patientInfoReadsAsJSONDecoderReadsIt() throws {
        var random = Generator(seed: 21)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        for n in 0..<500 {
            let info = PatientInfo(
                schema: 1, name: random.text(),
                birthDate: n % 2 == 0 ? CalendarDate(year: 1950 + n % 70, month: 1 + n % 12, day: 1 + n % 28) : nil,
                merged: n % 3 == 0 ? [random.text(), "0123456789abcdef0123456789abcdef"] : nil,
                measurements: n % 4 == 0 ? [Self.measurement(n, device: random.text())] : nil)
            let bytes = Array(try encoder.encode(info))
            // Written directly, the same bytes as the encoder's.
            #expect(info.sealedJSON() == bytes, "patient info \(n)")
            let fast = try bytes.withUnsafeBytes { try PatientInfo(json: $0) }
            let slow = try JSONDecoder().decode(PatientInfo.self, from: Data(bytes))
            #expect(
                fast.name == slow.name && fast.birthDate == slow.birthDate && fast.merged == slow.merged
                    && fast.schema == slow.schema && fast.measurements == slow.measurements)
        }
        for bad in [
            #"{"name":"A"}"#, #"{"schema":1}"#, #"{"schema":1,"name":"A","birthDate":"2026-02-30"}"#,
            #"{"schema":1,"name":"A","merged":[1]}"#, #"[1]"#, #"{"schema":1,"name":"A""#
        ] {
            let bytes = Array(bad.utf8)
            #expect(throws: (any Error).self) { try bytes.withUnsafeBytes { try PatientInfo(json: $0) } }
            #expect(throws: (any Error).self) { try JSONDecoder().decode(PatientInfo.self, from: Data(bytes)) }
        }
    }
}

/// An audit entry's event read with `JSONTree` (`AuditEvent(json:)`) and with the `Codable`
/// decoding it replaced: the same events, and both refuse what is not one.
@Suite struct AuditEventReadingTests {
    @Test func auditEventsReadAsJSONDecoderReadsThem() throws {
        var random = Generator(seed: 33)
        let actions = AuditEvent.Action.allCases
        for n in 0..<500 {
            let event = AuditEvent(
                time: "2026-04-20T10:00:\(10 + n % 50)Z", actor: n % 2 == 0 ? AuditEvent.ownerActor : random.text(),
                action: actions[n % actions.count], client: n % 3 == 0 ? nil : random.text(),
                prescriptions: (0..<(n % 7)).map { _ in random.text() },
                attachments: n % 4 == 0 ? [random.text()] : nil, detail: n % 5 == 0 ? nil : random.text())
            let bytes = Array(try JSONEncoder().encode(event))
            #expect(try AuditEvent(json: bytes) == JSONDecoder().decode(AuditEvent.self, from: Data(bytes)))
            #expect(try AuditEvent(json: bytes) == event)
        }
        for bad in [
            #"{"time":"t","actor":"owner","action":"read"}"#,
            #"{"time":"t","actor":"owner","action":"nope","prescriptions":[]}"#,
            #"{"time":1,"actor":"owner","action":"read","prescriptions":[]}"#,
            #"{"time":"t","actor":"owner","action":"read","prescriptions":[1]}"#,
            #"{"time":"t","actor":"owner","action":"read","prescriptions":[]"#
        ] {
            let bytes = Array(bad.utf8)
            #expect(throws: (any Error).self) { try AuditEvent(json: bytes) }
            #expect(throws: (any Error).self) { try JSONDecoder().decode(AuditEvent.self, from: Data(bytes)) }
        }
    }
}
