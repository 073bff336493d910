/// The prescription's JSON (docs/format.md, "Prescription JSON v1") written by `JSONWriter`:
/// the same text JSONEncoder makes from the `Codable` conformance (Prescription+JSON.swift),
/// sorted keys included, without going through an encoder (exports write 100,000 of these).
/// Keys are written in sorted (UTF-8 byte) order by hand; tests compare with JSONEncoder.
extension Prescription {
    /// Throws `EncodingError` for a date JSON cannot carry, as the `Codable` form does.
    public func writeJSON(to w: inout JSONWriter) throws {
        w.beginObject()
        if let assumedExpiry {
            w.key("assumedExpiry")
            try assumedExpiry.writeJSON(to: &w)
        }
        if let contactLensType {
            w.key("contactLensType")
            w.string(contactLensType.rawValue)
        }
        if let examDate {
            w.key("examDate")
            try examDate.writeJSON(to: &w)
        }
        if let expires {
            w.key("expires")
            try expires.writeJSON(to: &w)
        }
        if let fhir {
            w.key("fhir")
            fhir.writeJSON(to: &w)
        }
        w.key("issued")
        try issued.writeJSON(to: &w)
        w.key("kind")
        w.string(kind.rawValue)
        if let left {
            w.key("left")
            try left.writeJSON(to: &w)
        }
        if let note {
            w.key("note")
            w.string(note)
        }
        w.key("patient")
        try patient.writeJSON(to: &w)
        w.key("prescriber")
        w.beginObject()
        if let address = prescriber.address {
            w.key("address")
            w.string(address)
        }
        if let contact = prescriber.contact {
            w.key("contact")
            w.string(contact)
        }
        if let fax = prescriber.fax {
            w.key("fax")
            w.string(fax)
        }
        if let licence = prescriber.licence {
            w.key("licence")
            w.string(licence)
        }
        if let system = prescriber.licenceSystem {
            w.key("licenceSystem")
            w.string(system)
        }
        w.key("name")
        w.string(prescriber.name)
        if let phone = prescriber.phone {
            w.key("phone")
            w.string(phone)
        }
        w.endObject()
        if let pupillaryDistance {
            w.key("pupillaryDistance")
            w.beginObject()
            w.key("far")
            w.number(pupillaryDistance.far)
            if let near = pupillaryDistance.near {
                w.key("near")
                w.number(near)
            }
            w.endObject()
        }
        if let right {
            w.key("right")
            try right.writeJSON(to: &w)
        }
        if let shortExpiryReason {
            w.key("shortExpiryReason")
            w.string(shortExpiryReason)
        }
        w.endObject()
    }
}

extension Patient {
    public func writeJSON(to w: inout JSONWriter) throws {
        w.beginObject()
        if let birthDate {
            w.key("birthDate")
            try birthDate.writeJSON(to: &w)
        }
        w.nameParts(family: family, given: given)
        if let id {
            w.key("id")
            w.string(id)
        }
        if id == nil || !name.isEmpty {
            w.key("name")
            w.string(name)
        }
        w.endObject()
    }
}

extension JSONWriter {
    /// A patient's `family` and `given` (a FHIR source's name parts), each when present, in key
    /// order after `birthDate`: one writer for the prescription JSON and the sealed patient record.
    public mutating func nameParts(family: String?, given: [String]?) {
        if let family {
            key("family")
            string(family)
        }
        if let given {
            key("given")
            beginArray()
            for part in given {
                element()
                string(part)
            }
            endArray()
        }
    }
}

extension CalendarDate {
    /// A date outside 0001-01-01 to 9999-12-31 is never written: it could not be read back.
    public func writeJSON(to w: inout JSONWriter) throws {
        guard self >= .earliest && self <= .latest else {
            throw EncodingError.invalidValue(
                self, .init(codingPath: [], debugDescription: "\(self) is outside \(CalendarDate.rangeText)"))
        }
        w.string(description)
    }
}

extension LensSpecification {
    public func writeJSON(to w: inout JSONWriter) throws {
        w.beginObject()
        if let add {
            w.key("add")
            w.number(add)
        }
        if let addDesignation {
            w.key("addDesignation")
            w.string(addDesignation.rawValue)
        }
        if let axis {
            w.key("axis")
            w.int(axis)
        }
        if balance {
            w.key("balance")
            w.bool(true)
        }
        if let baseCurve {
            w.key("baseCurve")
            w.number(baseCurve)
        }
        if let brand {
            w.key("brand")
            w.string(brand)
        }
        if let cylinder {
            w.key("cylinder")
            w.number(cylinder)
        }
        if let diameter {
            w.key("diameter")
            w.number(diameter)
        }
        if let dominance {
            w.key("dominance")
            w.string(dominance.word)
        }
        if let equivalentBrand {
            w.key("equivalentBrand")
            w.string(equivalentBrand)
        }
        if let manufacturer {
            w.key("manufacturer")
            w.string(manufacturer)
        }
        if let material {
            w.key("material")
            w.string(material)
        }
        if let prism {
            w.key("prism")
            prism.writeJSON(to: &w)
        }
        if farPD != nil || nearPD != nil {
            w.key("pupillaryDistance")
            w.beginObject()
            if let farPD {
                w.key("far")
                w.number(farPD)
            }
            if let nearPD {
                w.key("near")
                w.number(nearPD)
            }
            w.endObject()
        }
        w.key("sphere")
        w.number(sphere)
        if let vertexDistance {
            w.key("vertexDistance")
            w.number(vertexDistance)
        }
        w.endObject()
    }
}

extension Prism {
    public func writeJSON(to w: inout JSONWriter) {
        w.beginObject()
        switch self {
        case .rectangular(let vertical, let horizontal):
            if let horizontal {
                w.key("horizontal")
                Self.part(horizontal.amount, horizontal.base.rawValue, to: &w)
            }
            if let vertical {
                w.key("vertical")
                Self.part(vertical.amount, vertical.base.rawValue, to: &w)
            }
        case .polar(let amount, let angle):
            w.key("amount")
            w.number(amount)
            w.key("angle")
            w.int(angle)
        }
        w.endObject()
    }

    private static func part(_ amount: Hundredths, _ base: String, to w: inout JSONWriter) {
        w.beginObject()
        w.key("amount")
        w.number(amount)
        w.key("base")
        w.string(base)
        w.endObject()
    }
}

extension KeptFHIR {
    public func writeJSON(to w: inout JSONWriter) {
        func members(_ key: String, _ members: [String: FHIRValue]?) {
            guard let members else { return }
            w.key(key)
            FHIRValue.object(members).writeJSON(to: &w)
        }
        w.beginObject()
        members("left", left)
        members("practitioner", practitioner)
        members("prescriber", prescriber)
        members("resource", resource)
        members("right", right)
        w.endObject()
    }
}

extension FHIRValue {
    public func writeJSON(to w: inout JSONWriter) {
        switch self {
        case .null: w.null()
        case .bool(let b): w.bool(b)
        case .integer(let i): w.int(i)
        case .number(let d): w.double(d)
        case .string(let s): w.string(s)
        case .array(let items):
            w.beginArray()
            for item in items {
                w.element()
                item.writeJSON(to: &w)
            }
            w.endArray()
        case .object(let members):
            w.beginObject()
            for key in members.keys.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }) {
                w.key(key)
                members[key]!.writeJSON(to: &w)
            }
            w.endObject()
        }
    }

    /// The value as a `JSONValue`, to merge into a resource being built.
    public var jsonValue: JSONValue {
        switch self {
        case .null: return .null
        case .bool(let b): return .bool(b)
        case .integer(let i): return .int(i)
        case .number(let d): return .double(d)
        case .string(let s): return .string(s)
        case .array(let items): return .array(items.map(\.jsonValue))
        case .object(let members): return .object(members.map { ($0.key, $0.value.jsonValue) })
        }
    }
}
