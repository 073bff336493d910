import Foundation
import RxModel

/// Writing kept FHIR elements back (docs/format.md, "Kept FHIR elements"): what an imported
/// VisionPrescription carried beyond rxvault's fields goes back where it was, so an import then
/// an export gives back every element.
extension FHIR {
    /// Puts `kept` into the resource rxvault made from `rx`. rxvault's own fields win where
    /// they are modelled (the numbers, dates, patient, prescriber name); identifiers and
    /// extensions are appended to rxvault's; the rest is written as it came.
    static func restore(_ kept: KeptFHIR, into resource: inout [String: Any], rx: Prescription,
                        practitionerReference: String?, sourceID: Bool) {
        for (key, value) in kept.resource {
            switch key {
            case "identifier", "extension":
                resource[key] = (resource[key] as? [Any] ?? []) + (value.foundation as? [Any] ?? [])
            case "patient":
                var patient = resource[key] as? [String: Any] ?? [:]
                for (member, kept) in value.objectMembers where patient[member] == nil { patient[member] = kept.foundation }
                resource[key] = patient
            case "id":
                if sourceID { resource[key] = value.foundation }
            case "dateWritten":
                // The kept dateTime only while it still says the issue date.
                if case .string(let text) = value, text.hasPrefix(rx.issued.description) { resource[key] = text }
            default:
                resource[key] = value.foundation
            }
        }
        var prescriber = resource["prescriber"] as? [String: Any] ?? [:]
        for (key, value) in kept.prescriber ?? [:] where prescriber[key] == nil { prescriber[key] = value.foundation }
        if let practitionerReference { prescriber["reference"] = practitionerReference }
        resource["prescriber"] = prescriber
        guard var specs = resource["lensSpecification"] as? [[String: Any]] else { return }
        for index in specs.indices {
            guard let eye = (specs[index]["eye"] as? String).flatMap(Eye.init(rawValue:)), let members = kept[eye] else { continue }
            for (key, value) in members {
                switch key {
                case "extension":
                    specs[index][key] = (specs[index][key] as? [Any] ?? []) + (value.foundation as? [Any] ?? [])
                default:
                    specs[index][key] = value.foundation
                }
            }
        }
        resource["lensSpecification"] = specs
    }

    /// The Practitioner entry of an imported prescriber: an id named by its content (the same
    /// Practitioner once per Bundle, in every export) and the resource as it came.
    static func practitionerEntry(_ kept: KeptFHIR?) -> (id: String, resource: [String: Any])? {
        guard let practitioner = kept?.practitioner else { return nil }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let canonical = (try? encoder.encode(FHIRValue.object(practitioner))).map { String(decoding: $0, as: UTF8.self) } ?? ""
        return (uuid("practitioner|" + canonical), FHIRValue.object(practitioner).foundation as? [String: Any] ?? [:])
    }
}

extension FHIRValue {
    var objectMembers: [String: FHIRValue] {
        if case .object(let o) = self { return o }
        return [:]
    }

    /// The value as Foundation objects, for JSONSerialization (the export's writer).
    var foundation: Any {
        switch self {
        case .null: return NSNull()
        case .bool(let b): return b
        case .integer(let i): return i
        case .number(let d): return d
        case .string(let s): return s
        case .array(let a): return a.map(\.foundation)
        case .object(let o): return o.mapValues(\.foundation)
        }
    }
}
