/// One field that differs between two versions of a prescription, for `history`.
///
/// Values are written as everywhere else (`-1.25`, `1.5 BI`, `2028-03-01`); absent is nil.
/// Free text (names, licence, contact, note) is named but not quoted in the description: a
/// history line should say that the note changed, not reprint it.
public struct FieldChange: Hashable, Sendable, CustomStringConvertible {
    /// `OD sphere`, `expiry date`, `note`, `OS` (a whole eye added or removed).
    public let field: String
    public let before: String?
    public let after: String?
    /// Free text: the description gives the field's name only.
    public let isText: Bool

    public init(field: String, before: String?, after: String?, isText: Bool = false) {
        self.field = field
        self.before = before
        self.after = after
        self.isText = isText
    }

    /// `OD sphere -1.00 → -1.25`, `OS prism 1.5 BI → none`, `note`.
    public var description: String {
        isText ? field : "\(field) \(before ?? "none") → \(after ?? "none")"
    }
}

extension Prescription {
    /// What differs from `previous`, field by field: the prescription's own fields first (in
    /// the order `show` prints them), then each eye's. An eye added or removed is one change
    /// carrying its notation. Empty when nothing differs (a version made by re-keying).
    public func changes(since previous: Prescription) -> [FieldChange] {
        var changes: [FieldChange] = []
        func compare(_ field: String, _ before: String?, _ after: String?, text: Bool = false) {
            if before != after { changes.append(FieldChange(field: field, before: before, after: after, isText: text)) }
        }
        compare("kind", previous.kind.rawValue, kind.rawValue)
        compare("patient name", previous.patient.name, patient.name, text: true)
        compare("date of birth", previous.patient.birthDate?.description, patient.birthDate?.description)
        compare("prescriber name", previous.prescriber.name, prescriber.name, text: true)
        compare("prescriber licence", previous.prescriber.licence, prescriber.licence, text: true)
        compare("prescriber contact", previous.prescriber.contact, prescriber.contact, text: true)
        compare("prescriber address", previous.prescriber.address, prescriber.address, text: true)
        compare("prescriber phone", previous.prescriber.phone, prescriber.phone, text: true)
        compare("prescriber fax", previous.prescriber.fax, prescriber.fax, text: true)
        compare("exam date", previous.examDate?.description, examDate?.description)
        compare("issue date", previous.issued.description, issued.description)
        compare("expiry date", previous.expires?.description, expires?.description)
        compare("short-expiry reason", previous.shortExpiryReason, shortExpiryReason, text: true)
        compare("assumed expiry date", previous.assumedExpiry?.description, assumedExpiry?.description)
        compare("PD", previous.pupillaryDistance?.far.plain, pupillaryDistance?.far.plain)
        compare("near PD", previous.pupillaryDistance?.near?.plain, pupillaryDistance?.near?.plain)
        compare("contact-lens type", previous.contactLensType?.rawValue, contactLensType?.rawValue)
        for eye in Eye.allCases {
            switch (previous[eye], self[eye]) {
            case (nil, nil):
                break
            case (let before?, let after?):
                for field in LensField.allCases {
                    compare(
                        "\(eye.label) \(field.label)", field.text(in: before), field.text(in: after),
                        text: field.isText)
                }
            case (let before, let after):
                compare(eye.label, before.map(LensNotation.format), after.map(LensNotation.format))
            }
        }
        compare("note", previous.note, note, text: true)
        changes += KeptFHIR.changes(from: previous.fhir, to: fhir)
        return changes
    }
}
