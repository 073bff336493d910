import RxModel

/// The lens details FHIR R4's VisionPrescription has no element for (docs/format.md, "FHIR R4
/// export"), as extensions that import reads back, so a round trip loses nothing:
///
/// - on VisionPrescription, `contact-lens-type` (valueCode soft, rgp, scleral, hybrid, ortho-k);
/// - on a lensSpecification, `add-designation` (valueCode LOW, MED, HIGH), `lens-dominance`
///   (valueCode dominant, non-dominant) and `balance-lens` (valueBoolean true; such a
///   lensSpecification has no sphere or power: a balance lens has no prescribed power).
///
/// One mapping for exports and the API (`rxvault serve` builds its resources with `FHIR`).
extension FHIR {
    static func prescriptionDetailExtensions(_ rx: Prescription) -> [JSONValue] {
        guard let type = rx.contactLensType else { return [] }
        return [.fields(["url": .string(ext("contact-lens-type")), "valueCode": .string(type.rawValue)])]
    }

    static func lensDetailExtensions(_ lens: LensSpecification) -> [JSONValue] {
        var extensions: [JSONValue] = []
        if let designation = lens.addDesignation {
            extensions.append(
                .fields(["url": .string(ext("add-designation")), "valueCode": .string(designation.rawValue)]))
        }
        if let dominance = lens.dominance {
            extensions.append(.fields(["url": .string(ext("lens-dominance")), "valueCode": .string(dominance.word)]))
        }
        if lens.balance {
            extensions.append(.fields(["url": .string(ext("balance-lens")), "valueBoolean": .bool(true)]))
        }
        return extensions
    }

    /// Whether a lensSpecification is marked as a balance lens (and so needs no sphere).
    static func isBalanceLens(_ spec: [String: Any]) -> Bool {
        (extensionValue(spec, "balance-lens") as? [String: Any])?["valueBoolean"] as? Bool == true
    }

    /// Reads the lens-detail extensions of `spec` into `lens`; an unknown code is a problem.
    static func readLensDetails(
        _ spec: [String: Any], index: Int, into lens: inout LensSpecification, problems: inout [String]
    ) {
        if let code = code(spec, "add-designation") {
            if let designation = AddDesignation(text: code) {
                lens.addDesignation = designation
            } else {
                problems.append(
                    "lensSpecification[\(index)] add-designation '\(code)': expected \(AddDesignation.acceptedText)")
            }
        }
        if let code = code(spec, "lens-dominance") {
            if let dominance = LensDominance(word: code) {
                lens.dominance = dominance
            } else {
                problems.append(
                    "lensSpecification[\(index)] lens-dominance '\(code)': expected dominant or non-dominant")
            }
        }
        lens.balance = isBalanceLens(spec)
    }

    static func readPrescriptionDetails(
        _ resource: [String: Any], into rx: inout Prescription, problems: inout [String]
    ) {
        guard let code = code(resource, "contact-lens-type") else { return }
        if let type = ContactLensType(rawValue: code) {
            rx.contactLensType = type
        } else {
            problems.append("contact-lens-type '\(code)': expected \(ContactLensType.acceptedText)")
        }
    }

    private static func code(_ resource: [String: Any], _ name: String) -> String? {
        (extensionValue(resource, name) as? [String: Any])?["valueCode"] as? String
    }
}
