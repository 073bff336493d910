/// The clinical elements among those kept from FHIR (`KeptFHIR`): what a lensSpecification says
/// about the lens itself that rxvault has no field for, so every output meant for dispensing (the
/// printed page, CSV) carries them beside rxvault's own values (docs/format.md, "Kept FHIR
/// elements"). R4's VisionPrescription has three: `color` (a tint), `duration` (the longest a
/// lens is worn, e.g. 1 month) and `note` (Annotations, e.g. "Shade treatment for extreme light
/// sensitivity"). The rest kept (ids, meta, narrative, identifiers, encounter, unknown
/// extensions) is bookkeeping, shown by `show` and written back by export.
extension KeptFHIR {
    /// The clinical lensSpecification elements, in the order outputs show them, with their labels.
    public static let clinicalLensElements: [(member: String, label: String)] = [
        ("color", "tint"), ("duration", "wear duration"), ("note", "note")
    ]

    /// Only the lenses' clinical elements (tint, wear duration, notes), nil when there are none:
    /// what a renewal (`add --from`) keeps, since they describe the lens, not the old record.
    public var clinicalOnly: KeptFHIR? {
        var kept = KeptFHIR()
        for eye in Eye.allCases {
            guard let members = self[eye] else { continue }
            let clinical = members.filter { member in Self.clinicalLensElements.contains { $0.member == member.key } }
            if !clinical.isEmpty { kept[eye] = clinical }
        }
        return kept.isEmpty ? nil : kept
    }

    /// One eye's clinical elements as one-line text (`green`, `1 month`), by member name; only
    /// those present.
    public func clinical(_ eye: Eye) -> [(member: String, label: String, text: String)] {
        guard let members = self[eye] else { return [] }
        return Self.clinicalLensElements.compactMap { element in
            members[element.member].map { (element.member, element.label, $0.summary) }
        }
    }
}
