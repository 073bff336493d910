import Foundation
import RxTestSupport
import Testing

/// Every output describes the same lens: random valid prescriptions, added through the
/// binary, read back through `show`, `list`, `query` and `export` in every format and cylinder
/// form, parsed here (independently of rxvault's own parsers) and compared in one canonical form.
@Suite struct LensConsistencyTests {
    static let seeds: [UInt64] = [0x14, 0x1C]
    static let prescriptionsPerSeed = 6

    @Test(arguments: seeds)
    func everyOutputDescribesTheLensThatWasAdded(seed: UInt64) throws {
        var rng = Generator(state: seed)
        let cli = try CLIHarness()
        try cli.initVault()
        var added: [String: WrittenPrescription] = [:] // by short id
        for index in 0..<Self.prescriptionsPerSeed {
            let rx = WrittenPrescription.random(index: index, using: &rng)
            let r = try cli.run(rx.arguments)
            try #require(r.status == 0, "\(rx.arguments)\n\(r)")
            added[r.stdout.trimmingCharacters(in: .whitespacesAndNewlines)] = rx
        }
        // The seeds are chosen so that each covers every case: say so if the generator changes.
        let lenses = added.values.flatMap { $0.eyes.values }
        for (name, covered) in [
            ("plus cylinder", lenses.contains { ($0.cylinder ?? 0) > 0 }),
            ("minus cylinder", lenses.contains { ($0.cylinder ?? 0) < 0 }),
            ("no cylinder", lenses.contains { $0.cylinder == nil }),
            ("prism by base directions", lenses.contains { if case .rectangular? = $0.prism { true } else { false } }),
            ("prism by base angle", lenses.contains { if case .polar? = $0.prism { true } else { false } }),
            ("add", lenses.contains { $0.add != nil }), ("vertex", lenses.contains { $0.vertex != nil }),
            ("monocular PD", lenses.contains { $0.farPD != nil }), ("contacts", added.values.contains { !$0.glasses }),
            ("per-field flags", lenses.contains(where: \.byFields)),
            ("axis written 0", lenses.contains { $0.axis == 0 }),
            ("one eye only", added.values.contains { $0.eyes.count == 1 }),
            ("binocular PD", added.values.contains { $0.binocularPD != nil })
        ] {
            #expect(covered, "seed \(seed) generates no \(name)")
        }
        func expect(
            _ read: [String: [String: Lens]], _ source: String, form: Form, notationOnly: Bool = false,
            sourceLocation: SourceLocation = #_sourceLocation
        ) {
            #expect(
                read.count == added.count, "\(source): \(read.count) prescriptions read, \(added.count) added",
                sourceLocation: sourceLocation)
            for (id, eyes) in read {
                guard let rx = added.first(where: { id.hasPrefix($0.key) })?.value else {
                    Issue.record("\(source): unknown prescription \(id)", sourceLocation: sourceLocation)
                    continue
                }
                compare(
                    eyes, rx, source: "\(source) \(id.prefix(8))", form: form, notationOnly: notationOnly,
                    sourceLocation: sourceLocation)
            }
        }

        for (id, rx) in added {
            for form in Form.allCases {
                let table = try cli.run(["show", id] + form.arguments)
                try #require(table.status == 0, "\(table)")
                compare(try Parse.showTable(table.stdout), rx, source: "show \(id) \(form)", form: form)
                let json = try cli.run(["show", id, "--format", "json"] + form.arguments)
                try #require(json.status == 0, "\(json)")
                compare(
                    try Parse.lenses(of: try cli.json(json.stdout)), rx, source: "show json \(id) \(form)", form: form)
            }
            let history = try cli.run(["history", id, "--format", "json"])
            try #require(history.status == 0, "\(history)")
            let versions = try Parse.prescriptions(try cli.json(history.stdout)["prescriptions"])
            #expect(versions.count == 1, "history \(id): \(versions.count) versions")
            for lenses in versions.values { compare(lenses, rx, source: "history json \(id)", form: .asWritten) }
        }
        // The query's filters match every prescription added (cylinders compared in minus-cyl form).
        let queryFilters = [
            "--issued-before", "2026-06-15", "--cyl-min", "-10", "--cyl-max", "0", "--sphere-min", "-40",
            "--sphere-max", "40"
        ]
        for command in [["list"], ["query"] + queryFilters] {
            for form in Form.allCases {
                let name = "\(command[0]) \(form)"
                let table = try cli.run(command + form.arguments)
                try #require(table.status == 0, "\(table)")
                expect(try Parse.listTable(table.stdout), "\(name) table", form: form, notationOnly: true)
                let json = try cli.run(command + ["--format", "json"] + form.arguments)
                try #require(json.status == 0, "\(json)")
                expect(try Parse.prescriptions(try cli.json(json.stdout)["prescriptions"]), "\(name) json", form: form)
                let ndjson = try cli.run(command + ["--format", "ndjson"] + form.arguments)
                try #require(ndjson.status == 0, "\(ndjson)")
                let lines = try ndjson.stdout.split(separator: "\n").map { try cli.json(String($0)) }
                expect(try Parse.prescriptions(lines), "\(name) ndjson", form: form)
                let csv = try cli.run(command + ["--format", "csv"] + form.arguments)
                try #require(csv.status == 0, "\(csv)")
                expect(try Parse.csv(csv.stdout), "\(name) csv", form: form)
            }
        }
        for format in ["json", "csv", "fhir"] {
            let export = try cli.run(["export", "--format", format, "--out", "-"])
            try #require(export.status == 0, "\(export)")
            switch format {
            case "json":
                let items = try #require(try cli.json(export.stdout)["prescriptions"] as? [[String: Any]])
                expect(
                    try Parse.prescriptions(
                        items.map { item in
                            var rx = item["prescription"] as? [String: Any] ?? [:]
                            rx["id"] = item["id"]
                            return rx
                        }), "export json", form: .asWritten)
            case "csv": expect(try Parse.csv(export.stdout), "export csv", form: .asWritten)
            default: expect(try Parse.fhir(try cli.json(export.stdout)), "export fhir", form: .asWritten)
            }
        }
        // The index agrees with the records.
        let check = try cli.run(["check"])
        #expect(check.status == 0, "\(check)")
        // A client reads the records themselves, not the owner's index: the same lenses.
        #expect(
            try cli.run(["client", "add", "shop", "--generate", "--identity-out", cli.path("shop.key")]).status == 0)
        #expect(try cli.run(["grant", "shop"] + Array(added.keys)).status == 0)
        let asClient = ["--identity", cli.path("shop.key")]
        for form in Form.allCases {
            let json = try cli.run(asClient + ["list", "--format", "json"] + form.arguments)
            try #require(json.status == 0, "\(json)")
            expect(
                try Parse.prescriptions(try cli.json(json.stdout)["prescriptions"]), "client list json \(form)",
                form: form)
        }
        let clientExport = try cli.run(asClient + ["export", "--format", "fhir", "--out", "-"])
        try #require(clientExport.status == 0, "\(clientExport)")
        expect(try Parse.fhir(try cli.json(clientExport.stdout)), "client export fhir", form: .asWritten)
    }

    /// The same lens as was added, in the form asked for: as written, exactly what was written;
    /// transposed, the same lens in canonical form with every cylinder of the sign asked for.
    /// `notationOnly`: the output (the list table) gives no vertex distance or PD.
    func compare(
        _ read: [String: Lens], _ rx: WrittenPrescription, source: String, form: Form, notationOnly: Bool = false,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(
            Set(read.keys) == Set(rx.eyes.keys), "\(source): eyes \(read.keys.sorted())", sourceLocation: sourceLocation
        )
        for (eye, written) in rx.eyes {
            guard var lens = read[eye] else { continue }
            let expected = written.stored
            if notationOnly {
                (lens.vertex, lens.farPD, lens.nearPD) = (expected.vertex, expected.farPD, expected.nearPD)
            }
            let what = "\(source) \(eye): read \(lens), added \(expected) (\(written.notation))"
            switch form {
            case .asWritten:
                #expect(lens == expected, "\(what)", sourceLocation: sourceLocation)
            case .minus:
                #expect(
                    lens.canonical == expected.canonical && lens.cylinder <= 0, "\(what), asked in minus-cyl form",
                    sourceLocation: sourceLocation)
            case .plus:
                #expect(
                    lens.canonical == expected.canonical && lens.cylinder >= 0, "\(what), asked in plus-cyl form",
                    sourceLocation: sourceLocation)
            }
        }
    }

    enum Form: CaseIterable, CustomStringConvertible {
        case asWritten, minus, plus
        var arguments: [String] {
            switch self {
            case .asWritten: return []
            case .minus: return ["--cyl", "minus"]
            case .plus: return ["--cyl", "plus"]
            }
        }
        var description: String { self == .asWritten ? "as written" : "--cyl \(self == .minus ? "minus" : "plus")" }
    }

    // MARK: - The lens

    /// One eye as an output describes it, in hundredths; prism as its vertical part (base up
    /// positive) and horizontal part (base in positive), a base angle rounded to hundredths as
    /// FHIR's base directions are.
    struct Lens: Equatable, CustomStringConvertible {
        var sphere = 0
        var cylinder = 0
        var axis = 0
        var add: Int?
        var prismUp = 0
        var prismIn = 0
        var vertex: Int?
        var farPD: Int?
        var nearPD: Int?
        var baseCurve: Int?
        var diameter: Int?

        /// Minus-cyl form, axis 1...180; no axis without a cylinder.
        var canonical: Lens {
            var lens = self
            if cylinder == 0 { lens.axis = 0 }
            if cylinder > 0 {
                lens.sphere = sphere + cylinder
                lens.cylinder = -cylinder
                lens.axis = axis > 90 ? axis - 90 : axis + 90
            }
            return lens
        }

        static func prismParts(amount: Int, angle: Int, eye: String) -> (up: Int, in: Int) {
            let radians = Double(angle) * .pi / 180
            let v = Int((Double(amount) / 100 * sin(radians) * 100).rounded())
            let h = Int((Double(amount) / 100 * cos(radians) * 100).rounded())
            // 0 degrees is base in for OD, base out for OS.
            return (v, eye == "right" ? h : -h)
        }

        var description: String {
            "\(sphere) \(cylinder) x\(axis) add \(add.map(String.init) ?? "-") prism up \(prismUp) in \(prismIn) vertex \(vertex.map(String.init) ?? "-") "
                + "pd \(farPD.map(String.init) ?? "-")/\(nearPD.map(String.init) ?? "-") bc \(baseCurve.map(String.init) ?? "-") dia \(diameter.map(String.init) ?? "-")"
        }
    }

    // MARK: - Random valid prescriptions

    /// RxTestSupport's SplitMix64: the same cases on every run.
    typealias Generator = SeededGenerator

    enum WrittenPrism {
        case rectangular(up: Int?, in: Int?) // signed: down and out negative
        case polar(amount: Int, angle: Int)
    }

    struct WrittenEye {
        var sphere = 0
        var cylinder: Int?
        var axis: Int?
        var add: Int?
        var prism: WrittenPrism?
        var vertex: Int?
        var farPD: Int?
        var nearPD: Int?
        var baseCurve: Int?
        var diameter: Int?
        let eye: String
        /// Added with --od-sphere, --od-cyl, ... rather than the notation.
        var byFields = false

        /// What the vault stores: an axis written 0 is 180.
        var stored: Lens {
            var lens = Lens(
                sphere: sphere, cylinder: cylinder ?? 0, axis: axis.map { $0 == 0 ? 180 : $0 } ?? 0, add: add,
                vertex: vertex, farPD: farPD, nearPD: nearPD, baseCurve: baseCurve, diameter: diameter)
            switch prism {
            case .rectangular(let up, let inward)?:
                lens.prismUp = up ?? 0
                lens.prismIn = inward ?? 0
            case .polar(let amount, let angle)?:
                (lens.prismUp, lens.prismIn) = Lens.prismParts(amount: amount, angle: angle, eye: eye)
            case nil: break
            }
            return lens
        }

        var prismText: String? {
            switch prism {
            case .rectangular(let up, let inward)?:
                return [
                    up.map { "\(plain(abs($0))) \($0 > 0 ? "BU" : "BD")" },
                    inward.map { "\(plain(abs($0))) \($0 > 0 ? "BI" : "BO")" }
                ]
                .compactMap { $0 }.joined(separator: " ")
            case .polar(let amount, let angle)?: return "\(plain(amount)) @ \(angle)"
            case nil: return nil
            }
        }

        /// The notation as a person would copy it from the paper (axis as x30 or x 030).
        var notation: String {
            var parts = [sphere == 0 ? "plano" : signed(sphere)]
            if let cylinder, let axis {
                parts += [signed(cylinder), axis % 2 == 0 ? "x\(axis)" : "x " + String(format: "%03d", axis)]
            }
            if let add { parts += ["add", signed(add)] }
            if let prismText { parts += ["prism", prismText] }
            if let baseCurve { parts += ["bc", plain(baseCurve)] }
            if let diameter { parts += ["dia", plain(diameter)] }
            return parts.joined(separator: " ")
        }

        /// The same eye as per-field flags (--od-sphere, --od-cyl, ...).
        var fieldFlags: [String] {
            let p = eye == "right" ? "--od-" : "--os-"
            var flags = [p + "sphere", sphere == 0 ? "plano" : signed(sphere)]
            if let cylinder, let axis { flags += [p + "cyl", signed(cylinder), p + "axis", String(axis)] }
            if let add { flags += [p + "add", signed(add)] }
            if let prismText { flags += [p + "prism", prismText] }
            if let baseCurve { flags += [p + "bc", plain(baseCurve)] }
            if let diameter { flags += [p + "dia", plain(diameter)] }
            return flags
        }
    }

    struct WrittenPrescription {
        var glasses: Bool
        var patient: String
        var issued: String
        var expires: String?
        var eyes: [String: WrittenEye] = [:]
        var binocularPD: (Int, Int?)?

        static func random(index: Int, using rng: inout Generator) -> WrittenPrescription {
            let glasses = rng.chance(65)
            var rx = WrittenPrescription(
                glasses: glasses, patient: "Patient \(index)", issued: "2026-0\(rng.int(1...6))-1\(rng.int(0...4))",
                expires: glasses && rng.chance(30) ? nil : "2027-0\(rng.int(1...9))-2\(rng.int(0...8))")
            let which = rng.int(0...4) // mostly both eyes
            for eye in ["right", "left"] where which > 1 || (eye == "right") == (which == 0) {
                var lens = WrittenEye(eye: eye)
                lens.sphere = rng.int(-3000...3000, step: 25)
                if rng.chance(75) {
                    lens.cylinder = rng.nonZero(-1000...1000, step: 25)
                    lens.axis = rng.chance(5) ? 0 : rng.int(1...180)
                }
                if rng.chance(40) { lens.add = rng.int(25...400, step: 25) }
                if glasses {
                    if rng.chance(50) {
                        // Prism amounts are 0.25 to 20 prism dioptres, in 0.25 steps.
                        func amount() -> Int { rng.int(25...2000, step: 25) * (rng.chance(50) ? 1 : -1) }
                        switch rng.int(0...3) {
                        case 0: lens.prism = .rectangular(up: amount(), in: nil)
                        case 1: lens.prism = .rectangular(up: nil, in: amount())
                        case 2: lens.prism = .rectangular(up: amount(), in: amount())
                        default: lens.prism = .polar(amount: rng.int(25...2000, step: 25), angle: rng.int(0...360))
                        }
                    }
                } else {
                    if rng.chance(70) { lens.baseCurve = rng.int(700...1000) }
                    if rng.chance(70) { lens.diameter = rng.int(800...1650) }
                }
                lens.byFields = rng.chance(25)
                rx.eyes[eye] = lens
            }
            if glasses {
                if rng.chance(40) {
                    let vertex = rng.int(500...2500)
                    for eye in rx.eyes.keys { rx.eyes[eye]!.vertex = vertex }
                }
                switch rng.int(0...2) {
                case 0: rx.binocularPD = (rng.int(5500...7500), rng.chance(50) ? rng.int(4000...5400) : nil)
                case 1:
                    for eye in rx.eyes.keys {
                        rx.eyes[eye]!.farPD = rng.int(2800...3800)
                        if rng.chance(50) { rx.eyes[eye]!.nearPD = rng.int(2000...2700) }
                    }
                default: break
                }
            }
            return rx
        }

        var arguments: [String] {
            var arguments = [
                "add", glasses ? "glasses" : "contacts", "--patient", patient, "--prescriber", "Dr Lens", "--issued",
                issued
            ]
            if let expires { arguments += ["--expires", expires] }
            for (eye, lens) in eyes.sorted(by: { $0.key > $1.key }) {
                arguments += lens.byFields ? lens.fieldFlags : [eye == "right" ? "--od" : "--os", lens.notation]
                let suffix = eye == "right" ? "od" : "os"
                if let far = lens.farPD { arguments += ["--pd-\(suffix)", plain(far)] }
                if let near = lens.nearPD { arguments += ["--near-pd-\(suffix)", plain(near)] }
            }
            if let vertex = eyes.values.first?.vertex { arguments += ["--vertex", plain(vertex)] }
            if let (far, near) = binocularPD {
                arguments += ["--pd", plain(far)]
                if let near { arguments += ["--near-pd", plain(near)] }
            }
            if !glasses { arguments += ["--brand", "Zylo Aqua"] }
            return arguments
        }
    }

    static func plainText(_ hundredths: Int) -> String {
        String(format: "%@%d.%02d", hundredths < 0 ? "-" : "", abs(hundredths) / 100, abs(hundredths) % 100)
    }
}

private func plain(_ hundredths: Int) -> String { LensConsistencyTests.plainText(hundredths) }
private func signed(_ hundredths: Int) -> String { (hundredths > 0 ? "+" : "") + plain(hundredths) }

extension SeededGenerator {
    mutating func int(_ range: ClosedRange<Int>, step: Int = 1) -> Int {
        Int.random(in: (range.lowerBound / step)...(range.upperBound / step), using: &self) * step
    }

    mutating func nonZero(_ range: ClosedRange<Int>, step: Int = 1) -> Int {
        while true {
            let v = int(range, step: step)
            if v != 0 { return v }
        }
    }
}
