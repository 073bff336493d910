/// A JSON value exactly as a FHIR file carried it: what rxvault keeps of elements it does not
/// model, so they can be written back unchanged (docs/format.md, "Kept FHIR elements").
///
/// Numbers keep their kind: a whole number is read as an integer (`"axis": 160`, `"value": 1`)
/// and anything else as a double, so writing the value back gives the same JSON number.
public indirect enum FHIRValue: Hashable, Sendable, Codable {
    case null
    case bool(Bool)
    case integer(Int)
    case number(Double)
    case string(String)
    case array([FHIRValue])
    case object([String: FHIRValue])

    public init(from decoder: Decoder) throws {
        let c = try decoder.singleValueContainer()
        if c.decodeNil() {
            self = .null
        } else if let b = try? c.decode(Bool.self) {
            self = .bool(b)
        } else if let i = try? c.decode(Int.self) {
            self = .integer(i)
        } else if let d = try? c.decode(Double.self) {
            self = .number(d)
        } else if let s = try? c.decode(String.self) {
            self = .string(s)
        } else if let a = try? c.decode([FHIRValue].self) {
            self = .array(a)
        } else {
            self = .object(try c.decode([String: FHIRValue].self))
        }
    }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.singleValueContainer()
        switch self {
        case .null: try c.encodeNil()
        case .bool(let b): try c.encode(b)
        case .integer(let i): try c.encode(i)
        case .number(let d): try c.encode(d)
        case .string(let s): try c.encode(s)
        case .array(let a): try c.encode(a)
        case .object(let o): try c.encode(o)
        }
    }

    /// `"green"`, `1 month`, `{"text": "Shade treatment"}`: one line for `show`.
    public var summary: String {
        switch self {
        case .null: return "null"
        case .bool(let b): return String(b)
        case .integer(let i): return String(i)
        case .number(let d): return String(d)
        case .string(let s): return s
        case .array(let a): return a.map(\.summary).joined(separator: "; ")
        case .object(let o):
            // The usual readable parts of FHIR datatypes first (Quantity, Reference, Annotation,
            // Identifier, Narrative), then everything as key: value.
            if case .number(let v)? = o["value"] ?? nil, let unit = o["unit"]?.summary { return "\(v) \(unit)" }
            if case .integer(let v)? = o["value"] ?? nil, let unit = o["unit"]?.summary { return "\(v) \(unit)" }
            if let text = o["text"], o.count == 1 || o["author"] == nil && o["time"] == nil && o["status"] == nil {
                return text.summary
            }
            if let reference = o["reference"]?.summary {
                return reference + (o["display"].map { " (\($0.summary))" } ?? "")
            }
            if let value = o["value"]?.summary { return (o["system"].map { "\($0.summary) " } ?? "") + value }
            return o.keys.sorted().map { "\($0): \(o[$0]!.summary)" }.joined(separator: ", ")
        }
    }
}

/// What an imported FHIR VisionPrescription carried that rxvault does not model, kept with the
/// prescription (inside its sealed content) and written back on FHIR export, so an import then
/// an export loses nothing. Records written before this existed simply have none.
///
/// - `resource`: the VisionPrescription's own members rxvault has no field for (`id`, `meta`,
///   `text`, `identifier`s other than rxvault's, `status` other than active, `created`,
///   `encounter`, extensions rxvault does not define, and anything else).
/// - `right` / `left`: the same for each eye's `lensSpecification` (`color`, `duration`, `note`,
///   unknown extensions, ...; `product` when it says more than rxvault writes).
/// - `prescriber`: the prescriber Reference's members beyond its display and licence identifier
///   (its `reference`, `type`, ...); `practitioner`: the Practitioner it pointed to, as it was.
///
/// When the owner edits the prescription (docs/format.md): everything stays, except the
/// narrative (`text`, a rendering of the old values) once anything changes, the prescriber's
/// reference and Practitioner once the prescriber changes, and an eye's elements once that eye
/// is removed.
public struct KeptFHIR: Hashable, Sendable, Codable {
    public var resource: [String: FHIRValue]
    public var right: [String: FHIRValue]?
    public var left: [String: FHIRValue]?
    public var prescriber: [String: FHIRValue]?
    public var practitioner: [String: FHIRValue]?

    public init(
        resource: [String: FHIRValue] = [:], right: [String: FHIRValue]? = nil, left: [String: FHIRValue]? = nil,
        prescriber: [String: FHIRValue]? = nil, practitioner: [String: FHIRValue]? = nil
    ) {
        self.resource = resource
        self.right = right
        self.left = left
        self.prescriber = prescriber
        self.practitioner = practitioner
    }

    public subscript(eye: Eye) -> [String: FHIRValue]? {
        get { eye == .right ? right : left }
        set { if eye == .right { right = newValue } else { left = newValue } }
    }

    public var isEmpty: Bool {
        resource.isEmpty && (right ?? [:]).isEmpty && (left ?? [:]).isEmpty && (prescriber ?? [:]).isEmpty
            && practitioner == nil
    }

    /// The status the source gave (kept only when it was not `active`).
    public var status: String? {
        if case .string(let s)? = resource["status"] { return s }
        return nil
    }

    /// `show`'s lines: `FHIR id`, `FHIR identifier`, `FHIR OD color`, ... with one-line values.
    public var lines: [(String, String)] {
        // The status is shown as the prescription's own (`show`'s expires line), not as a kept element.
        var lines: [(String, String)] = resource.keys.sorted().filter { $0 != "status" }.map {
            ("FHIR \($0)", resource[$0]!.summary)
        }
        for eye in Eye.allCases {
            guard let members = self[eye] else { continue }
            lines += members.keys.sorted().map { ("FHIR \(eye.label) \($0)", members[$0]!.summary) }
        }
        if let prescriber {
            lines += prescriber.keys.sorted().map { ("FHIR prescriber \($0)", prescriber[$0]!.summary) }
        }
        if let practitioner {
            let shown = practitioner.keys.sorted().filter { $0 != "resourceType" }
            lines += shown.map { ("FHIR practitioner \($0)", practitioner[$0]!.summary) }
        }
        return lines
    }
}

extension Prescription {
    /// The kept elements `edited` should carry, made from this (the version before the edit):
    /// see `KeptFHIR` for the rule.
    /// The status is the edit's own (`edit --status`), not carried over from this version.
    public func keptFHIR(after edited: Prescription) -> KeptFHIR? {
        var result = edited
        if var kept = fhir {
            let changed =
                {
                    var e = edited
                    e.fhir = kept
                    return e != self
                }() || edited.recordStatus != recordStatus
            if changed { kept.resource["text"] = nil }
            if edited.prescriber != prescriber {
                kept.prescriber = nil
                kept.practitioner = nil
            }
            for eye in Eye.allCases where edited[eye] == nil { kept[eye] = nil }
            result.fhir = kept.isEmpty ? nil : kept
        } else {
            result.fhir = nil
        }
        result.recordStatus = edited.recordStatus
        return result.fhir
    }
}

extension KeptFHIR {
    /// `FHIR status`, `FHIR OD color`: the kept elements that differ, named, never quoted.
    static func changes(from before: KeptFHIR?, to after: KeptFHIR?) -> [FieldChange] {
        guard before != after else { return [] }
        func named(_ prefix: String, _ a: [String: FHIRValue]?, _ b: [String: FHIRValue]?) -> [FieldChange] {
            let keys = Set((a ?? [:]).keys).union((b ?? [:]).keys).sorted()
            return keys.filter { a?[$0] != b?[$0] }.map {
                FieldChange(field: "\(prefix)\($0)", before: nil, after: nil, isText: true)
            }
        }
        var changes = named("FHIR ", before?.resource, after?.resource)
        for eye in Eye.allCases { changes += named("FHIR \(eye.label) ", before?[eye], after?[eye]) }
        changes += named("FHIR prescriber ", before?.prescriber, after?.prescriber)
        if before?.practitioner != after?.practitioner {
            changes.append(FieldChange(field: "FHIR practitioner", before: nil, after: nil, isText: true))
        }
        return changes
    }
}
