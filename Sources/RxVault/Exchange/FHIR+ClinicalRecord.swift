import RxModel

/// The Contact Lens Rule's fields (16 CFR 315.2) that FHIR R4's VisionPrescription has no
/// element for, as rxvault extensions that import reads back (docs/format.md, "FHIR R4 export";
/// their StructureDefinitions are in docs/fhir/):
///
/// - on VisionPrescription, `exam-date` (valueDate), `short-expiry-reason` (valueString: the
///   medical reason for a contacts expiry under a year, 315.6(b)), `prescriber-address`,
///   `prescriber-phone` and `prescriber-fax` (valueString; beside `prescriber-contact`, the
///   free text);
/// - on a lensSpecification, `lens-manufacturer`, `lens-material` and `equivalent-brand`
///   (valueString; the last for a private-label lens, the brand it is the same lens as).
extension FHIR {
    static func clinicalRecordExtensions(_ rx: Prescription) -> [JSONValue] {
        var extensions: [JSONValue] = []
        if let exam = rx.examDate {
            extensions.append(.fields(["url": .string(ext("exam-date")), "valueDate": .string(exam.description)]))
        }
        let texts: [(String, String?)] = [
            ("short-expiry-reason", rx.shortExpiryReason), ("prescriber-address", rx.prescriber.address),
            ("prescriber-phone", rx.prescriber.phone), ("prescriber-fax", rx.prescriber.fax)
        ]
        for (name, value) in texts {
            if let value { extensions.append(.fields(["url": .string(ext(name)), "valueString": .string(value)])) }
        }
        return extensions
    }

    static func lensMakerExtensions(_ lens: LensSpecification) -> [JSONValue] {
        let texts: [(String, String?)] = [
            ("lens-manufacturer", lens.manufacturer), ("lens-material", lens.material),
            ("equivalent-brand", lens.equivalentBrand)
        ]
        return texts.compactMap { name, value in
            value.map { .fields(["url": .string(ext(name)), "valueString": .string($0)]) }
        }
    }

    static func readClinicalRecord(_ resource: [String: Any], into rx: inout Prescription, problems: inout [String]) {
        if let exam = (extensionValue(resource, "exam-date") as? [String: Any])?["valueDate"] as? String {
            rx.examDate = CalendarDate(iso: exam)
            if let problem = CalendarDate.problem(iso: exam) { problems.append("exam-date '\(exam)': \(problem)") }
        }
        rx.shortExpiryReason = string(resource, "short-expiry-reason")
        rx.prescriber.address = string(resource, "prescriber-address")
        rx.prescriber.phone = string(resource, "prescriber-phone")
        rx.prescriber.fax = string(resource, "prescriber-fax")
    }

    static func readLensMakers(_ spec: [String: Any], into lens: inout LensSpecification) {
        lens.manufacturer = string(spec, "lens-manufacturer")
        lens.material = string(spec, "lens-material")
        lens.equivalentBrand = string(spec, "equivalent-brand")
    }

    private static func string(_ resource: [String: Any], _ name: String) -> String? {
        (extensionValue(resource, name) as? [String: Any])?["valueString"] as? String
    }
}
