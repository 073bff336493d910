import Foundation
import RxModel

/// Writing kept FHIR elements back (docs/format.md, "Kept FHIR elements"): what an imported
/// VisionPrescription carried beyond rxvault's fields goes back where it was, so an import then
/// an export gives back every element.
extension FHIR {
    /// Puts `kept` into the resource rxvault made from `rx`. rxvault's own fields win where
    /// they are modelled (the numbers, dates, patient, prescriber name); identifiers and
    /// extensions are appended to rxvault's; the rest is written as it came.
    static func restore(
        _ kept: KeptFHIR, into resource: inout JSONValue, rx: Prescription,
        practitionerReference: String?, sourceID: Bool
    ) {
        for (key, value) in kept.resource {
            switch key {
            case "identifier", "extension":
                resource[key] = .array((resource[key]?.arrayItems ?? []) + (value.jsonValue.arrayItems ?? []))
            case "patient":
                var patient = resource[key]?.objectOrNil ?? .object([])
                for (member, kept) in value.objectMembers where patient[member] == nil {
                    patient[member] = kept.jsonValue
                }
                resource[key] = patient
            case "id":
                if sourceID { resource[key] = value.jsonValue }
            case "dateWritten":
                // The kept dateTime only while it still says the issue date.
                if case .string(let text) = value, text.hasPrefix(rx.issued.description) {
                    resource[key] = .string(text)
                }
            default:
                resource[key] = value.jsonValue
            }
        }
        var prescriber = resource["prescriber"]?.objectOrNil ?? .object([])
        for (key, value) in kept.prescriber ?? [:] {
            if prescriber[key] == nil {
                prescriber[key] = value.jsonValue
            } else if key == "identifier", prescriber[key]?["system"] == nil,
                case .string(let number)? = value.objectMembers["value"],
                prescriber[key]?["value"]?.stringValue == number
            {
                // Kept whole by releases before the licence's system was modelled: the same licence, with its system.
                prescriber[key] = value.jsonValue
            }
        }
        if let practitionerReference { prescriber["reference"] = .string(practitionerReference) }
        resource["prescriber"] = prescriber
        guard var specs = resource["lensSpecification"]?.arrayItems, specs.allSatisfy({ $0.objectOrNil != nil }) else {
            return
        }
        for index in specs.indices {
            guard let eye = specs[index]["eye"]?.stringValue.flatMap(Eye.init(rawValue:)), let members = kept[eye]
            else { continue }
            for (key, value) in members {
                switch key {
                case "extension":
                    specs[index][key] = .array(
                        (specs[index][key]?.arrayItems ?? []) + (value.jsonValue.arrayItems ?? []))
                default:
                    specs[index][key] = value.jsonValue
                }
            }
        }
        resource["lensSpecification"] = .array(specs)
    }

    /// The Practitioner entry of an imported prescriber: an id named by its content (the same
    /// Practitioner once per Bundle, in every export) and the resource as it came. The name is
    /// the compact JSON with sorted keys and escaped slashes (how JSONEncoder wrote it when the
    /// ids were first made), so the ids stay what they were.
    static func practitionerEntry(_ kept: KeptFHIR?) -> (id: String, resource: JSONValue)? {
        guard let practitioner = kept?.practitioner else { return nil }
        var writer = JSONWriter(style: .compact, escapeSlashes: true)
        FHIRValue.object(practitioner).writeJSON(to: &writer)
        return (
            uuid("practitioner|" + String(decoding: writer.bytes, as: UTF8.self)),
            FHIRValue.object(practitioner).jsonValue
        )
    }
}

extension FHIRValue {
    var objectMembers: [String: FHIRValue] {
        if case .object(let o) = self { return o }
        return [:]
    }
}

extension JSONValue {
    /// The value itself when it is an object.
    var objectOrNil: JSONValue? {
        if case .object = self { return self }
        return nil
    }

    /// The value as Foundation objects, for JSONSerialization (JSONWriterDifferentialTests
    /// compares the writer with it).
    var foundation: Any {
        switch self {
        case .null: return NSNull()
        case .bool(let b): return b
        // Whole numbers as Int and the rest as Double: JSONSerialization writes them back as they are.
        case .number(let text):
            if let whole = Int(text) { return whole }
            return Double(text) ?? 0
        case .string(let s): return s
        case .array(let items): return items.map(\.foundation)
        case .object(let members):
            return Dictionary(members.map { ($0.0, $0.1.foundation) }, uniquingKeysWith: { _, last in last })
        }
    }
}
