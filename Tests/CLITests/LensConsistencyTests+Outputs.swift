import Foundation
import Testing

/// How each output of rxvault is read back into a lens, for the comparison.
extension LensConsistencyTests {
    // MARK: - Reading the outputs

    struct Unreadable: Error, CustomStringConvertible { let description: String }

    enum Parse {
        /// "-2.25", "+1.00", "plano", "12.5" in hundredths.
        static func hundredths(_ text: some StringProtocol) throws -> Int {
            let t = text.trimmingCharacters(in: .whitespaces)
            if t == "plano" { return 0 }
            guard let value = Double(t.hasPrefix("+") ? String(t.dropFirst()) : t) else {
                throw Unreadable(description: "not a number: '\(t)'")
            }
            return Int((value * 100).rounded())
        }

        static func hundredths(_ value: Any?) throws -> Int? {
            guard let value else { return nil }
            guard let number = value as? Double else { throw Unreadable(description: "not a number: \(value)") }
            return Int((number * 100).rounded())
        }

        static func optional(_ text: some StringProtocol) throws -> Int? {
            text.isEmpty || text == "-" ? nil : try hundredths(text)
        }

        /// The notation rxvault prints ("+1.00 -2.00 x030 add +1.50 prism 1 BU 2 BI", "plano DS", "-3.00 bc 8.6 dia 14.2").
        static func notation(_ text: String, eye: String) throws -> Lens {
            var words = text.split(separator: " ").map(String.init)[...]
            var lens = Lens()
            guard let sphere = words.popFirst() else { throw Unreadable(description: "empty notation") }
            lens.sphere = try hundredths(sphere)
            if words.first == "DS" { words.removeFirst() }
            if let next = words.first, next.hasPrefix("+") || next.hasPrefix("-") {
                lens.cylinder = try hundredths(words.removeFirst())
                guard let axis = words.popFirst(), axis.hasPrefix("x"), let degrees = Int(axis.dropFirst()) else {
                    throw Unreadable(description: "no axis in '\(text)'")
                }
                lens.axis = degrees
            }
            while let word = words.popFirst() {
                switch word {
                case "add": lens.add = try hundredths(words.popFirst() ?? "")
                case "bc": lens.baseCurve = try hundredths(words.popFirst() ?? "")
                case "dia": lens.diameter = try hundredths(words.popFirst() ?? "")
                case "prism":
                    while let amount = words.first, Double(amount) != nil {
                        words.removeFirst()
                        let value = try hundredths(amount)
                        switch words.popFirst() {
                        case "BU": lens.prismUp = value
                        case "BD": lens.prismUp = -value
                        case "BI": lens.prismIn = value
                        case "BO": lens.prismIn = -value
                        case "@":
                            guard let angle = words.popFirst().flatMap({ Int($0) }) else {
                                throw Unreadable(description: "no angle in '\(text)'")
                            }
                            (lens.prismUp, lens.prismIn) = Lens.prismParts(amount: value, angle: angle, eye: eye)
                        default: throw Unreadable(description: "no prism base in '\(text)'")
                        }
                    }
                default: throw Unreadable(description: "unexpected '\(word)' in '\(text)'")
                }
            }
            return lens
        }

        /// Table cells: columns are at least two spaces apart, cells hold single spaces at most.
        static func cells(_ line: some StringProtocol) -> [String] {
            line.components(separatedBy: "  ").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        }

        /// `list` / `query` table: the OD and OS columns, by short id.
        static func listTable(_ text: String) throws -> [String: [String: Lens]] {
            var result: [String: [String: Lens]] = [:]
            let lines = text.split(separator: "\n")
            guard let header = lines.first,
                cells(header) == ["ID", "KIND", "PATIENT", "ISSUED", "EXPIRES", "STATUS", "OD", "OS"]
            else {
                throw Unreadable(description: "unexpected list header in\n\(text)")
            }
            for line in lines.dropFirst() {
                let row = cells(line)
                guard row.count == 8 else { throw Unreadable(description: "unexpected list row '\(line)'") }
                var eyes: [String: Lens] = [:]
                if row[6] != "-" { eyes["right"] = try notation(row[6], eye: "right") }
                if row[7] != "-" { eyes["left"] = try notation(row[7], eye: "left") }
                result[row[0]] = eyes
            }
            return result
        }

        /// `show` table: one row per eye under the EYE header.
        static func showTable(_ text: String) throws -> [String: Lens] {
            let lines = text.split(separator: "\n")
            guard let headerIndex = lines.firstIndex(where: { $0.hasPrefix("EYE") }) else {
                throw Unreadable(description: "no eye table in\n\(text)")
            }
            let header = cells(lines[headerIndex])
            var result: [String: Lens] = [:]
            for line in lines[(headerIndex + 1)...] {
                let row = cells(line)
                guard row.count == header.count else {
                    throw Unreadable(description: "unexpected show row '\(line)' for \(header)")
                }
                let eye = row[0] == "OD" ? "right" : "left"
                func cell(_ name: String) -> String? { header.firstIndex(of: name).map { row[$0] } }
                var lens = Lens(
                    sphere: try hundredths(row[1]), cylinder: try optional(row[2]) ?? 0, axis: Int(row[3]) ?? 0,
                    add: try optional(row[4]))
                if let prism = cell("PRISM"), prism != "-" {
                    let parsed = try notation("plano prism \(prism)", eye: eye)
                    (lens.prismUp, lens.prismIn) = (parsed.prismUp, parsed.prismIn)
                }
                lens.vertex = try cell("VERTEX").flatMap(optional)
                lens.farPD = try cell("PD").flatMap(optional)
                lens.nearPD = try cell("NEAR PD").flatMap(optional)
                lens.baseCurve = try cell("BC").flatMap(optional)
                lens.diameter = try cell("DIA").flatMap(optional)
                result[eye] = lens
            }
            return result
        }

        /// Prescription JSON v1: the `right` and `left` objects.
        static func lenses(of rx: [String: Any]) throws -> [String: Lens] {
            var result: [String: Lens] = [:]
            for eye in ["right", "left"] {
                guard let object = rx[eye] as? [String: Any] else { continue }
                var lens = Lens(
                    sphere: try hundredths(object["sphere"]) ?? 0, cylinder: try hundredths(object["cylinder"]) ?? 0,
                    axis: object["axis"] as? Int ?? 0, add: try hundredths(object["add"]))
                if let prism = object["prism"] as? [String: Any] {
                    if let amount = try hundredths(prism["amount"]) {
                        (lens.prismUp, lens.prismIn) = Lens.prismParts(
                            amount: amount, angle: prism["angle"] as? Int ?? -1, eye: eye)
                    }
                    if let v = prism["vertical"] as? [String: Any] {
                        lens.prismUp = (try hundredths(v["amount"]) ?? 0) * (v["base"] as? String == "down" ? -1 : 1)
                    }
                    if let h = prism["horizontal"] as? [String: Any] {
                        lens.prismIn = (try hundredths(h["amount"]) ?? 0) * (h["base"] as? String == "out" ? -1 : 1)
                    }
                }
                lens.vertex = try hundredths(object["vertexDistance"])
                let pd = object["pupillaryDistance"] as? [String: Any]
                lens.farPD = try hundredths(pd?["far"])
                lens.nearPD = try hundredths(pd?["near"])
                lens.baseCurve = try hundredths(object["baseCurve"])
                lens.diameter = try hundredths(object["diameter"])
                result[eye] = lens
            }
            return result
        }

        static func prescriptions(_ list: Any?) throws -> [String: [String: Lens]] {
            guard let list = list as? [[String: Any]] else { throw Unreadable(description: "no prescriptions array") }
            var result: [String: [String: Lens]] = [:]
            for rx in list {
                guard let id = rx["id"] as? String else { throw Unreadable(description: "a prescription without id") }
                result[id] = try lenses(of: rx)
            }
            return result
        }

        /// RFC 4180 lines (quoted cells may hold commas and doubled quotes).
        static func csvRows(_ text: String) -> [[String]] {
            var rows: [[String]] = []
            var row: [String] = []
            var cell = ""
            var quoted = false
            var chars = Array(text)[...]
            while let c = chars.popFirst() {
                if quoted {
                    if c == "\"" {
                        if chars.first == "\"" {
                            cell.append("\"")
                            chars.removeFirst()
                        } else {
                            quoted = false
                        }
                    } else {
                        cell.append(c)
                    }
                } else if c == "\"" {
                    quoted = true
                } else if c == "," {
                    row.append(cell)
                    cell = ""
                } else if c == "\n" {
                    row.append(cell)
                    rows.append(row)
                    row = []
                    cell = ""
                } else {
                    cell.append(c)
                }
            }
            if !cell.isEmpty || !row.isEmpty {
                row.append(cell)
                rows.append(row)
            }
            return rows
        }

        static func csv(_ text: String) throws -> [String: [String: Lens]] {
            let rows = csvRows(text)
            guard let header = rows.first else { throw Unreadable(description: "empty CSV") }
            var result: [String: [String: Lens]] = [:]
            for row in rows.dropFirst() {
                guard row.count == header.count else {
                    throw Unreadable(description: "CSV row of \(row.count) cells: \(row)")
                }
                func cell(_ name: String) throws -> String {
                    guard let i = header.firstIndex(of: name) else {
                        throw Unreadable(description: "no CSV column \(name)")
                    }
                    return row[i]
                }
                let eye = try cell("eye")
                let prism = try cell("prism")
                var lens = try notation(prism.isEmpty ? "plano" : "plano prism " + prism, eye: eye)
                lens.sphere = try hundredths(try cell("sphere"))
                lens.cylinder = try optional(try cell("cylinder")) ?? 0
                lens.axis = Int(try cell("axis")) ?? 0
                lens.add = try optional(try cell("add"))
                lens.vertex = try optional(try cell("vertex_mm"))
                lens.farPD = try optional(try cell("pd_mm"))
                lens.nearPD = try optional(try cell("near_pd_mm"))
                lens.baseCurve = try optional(try cell("base_curve_mm"))
                lens.diameter = try optional(try cell("diameter_mm"))
                result[try cell("id"), default: [:]][eye] = lens
            }
            return result
        }

        /// A FHIR Bundle's VisionPrescriptions, by their rxvault identifier.
        static func fhir(_ bundle: [String: Any]) throws -> [String: [String: Lens]] {
            var result: [String: [String: Lens]] = [:]
            for entry in bundle["entry"] as? [[String: Any]] ?? [] {
                guard let resource = entry["resource"] as? [String: Any],
                    resource["resourceType"] as? String == "VisionPrescription"
                else { continue }
                guard let id = (resource["identifier"] as? [[String: Any]])?.first?["value"] as? String else {
                    throw Unreadable(description: "a VisionPrescription without identifier")
                }
                var eyes: [String: Lens] = [:]
                for spec in resource["lensSpecification"] as? [[String: Any]] ?? [] {
                    let eye = spec["eye"] as? String ?? "?"
                    var lens = Lens(
                        sphere: try hundredths(spec["sphere"]) ?? 0, cylinder: try hundredths(spec["cylinder"]) ?? 0,
                        axis: spec["axis"] as? Int ?? 0, add: try hundredths(spec["add"]))
                    for part in spec["prism"] as? [[String: Any]] ?? [] {
                        let amount = try hundredths(part["amount"]) ?? 0
                        switch part["base"] as? String {
                        case "up": lens.prismUp = amount
                        case "down": lens.prismUp = -amount
                        case "in": lens.prismIn = amount
                        case "out": lens.prismIn = -amount
                        default: throw Unreadable(description: "prism base \(part["base"] ?? "none")")
                        }
                    }
                    for ext in spec["extension"] as? [[String: Any]] ?? [] {
                        let value = try hundredths((ext["valueQuantity"] as? [String: Any])?["value"])
                        switch (ext["url"] as? String)?.split(separator: "/").last {
                        case "vertex-distance": lens.vertex = value
                        case "far-pupillary-distance": lens.farPD = value
                        case "near-pupillary-distance": lens.nearPD = value
                        default: break
                        }
                    }
                    lens.baseCurve = try hundredths(spec["backCurve"])
                    lens.diameter = try hundredths(spec["diameter"])
                    eyes[eye] = lens
                }
                result[id] = eyes
            }
            return result
        }
    }
}
