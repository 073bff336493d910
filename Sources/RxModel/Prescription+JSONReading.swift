/// "Prescription JSON v1" read from a `JSONTree` by hand: the fast twin of the `Codable`
/// decoding in Prescription+JSON.swift (see `JSONTree` for why). It accepts what that accepts,
/// refuses what it refuses, and throws the same `DecodingError` (kind and coding path), so a
/// message built from one reads the same from the other. Keep the two in step: the differential
/// tests (RxModelTests `JSONReadingTests`) decode every case both ways.

extension Prescription {
    /// Reads a prescription object at `value` (its path names errors: `prescription.right.sphere`).
    public init(json value: JSONValueReader) throws(DecodingError) {
        let c = try value.object()
        self.init(
            kind: try c.required("kind").raw(PrescriptionKind.self),
            patient: try Patient(json: try c.required("patient")),
            prescriber: try Prescriber(json: try c.required("prescriber")),
            issued: try c.required("issued").date(),
            expires: try c.optional("expires")?.date(),
            note: try c.optional("note")?.string(),
            right: try c.optional("right").map { v throws(DecodingError) in try LensSpecification(json: v) },
            left: try c.optional("left").map { v throws(DecodingError) in try LensSpecification(json: v) },
            pupillaryDistance: try c.optional("pupillaryDistance").map { v throws(DecodingError) in
                try PupillaryDistance(json: v)
            })
        fhir = try c.optional("fhir").map { v throws(DecodingError) in try KeptFHIR(json: v) }
        contactLensType = try c.optional("contactLensType")?.raw(ContactLensType.self)
        examDate = try c.optional("examDate")?.date()
        shortExpiryReason = try c.optional("shortExpiryReason")?.string()
        assumedExpiry = try c.optional("assumedExpiry")?.date()
    }
}

extension Patient {
    /// As `init(from:)`: a reference alone (`{"id": ...}`) reads with an empty name.
    public init(json value: JSONValueReader) throws(DecodingError) {
        let c = try value.object()
        let id = try c.optional("id")?.string()
        let name = id == nil ? try c.required("name").string() : try c.optional("name")?.string() ?? ""
        self.init(
            name: name, birthDate: try c.optional("birthDate")?.date(), id: id,
            family: try c.optional("family")?.string(),
            given: try c.optional("given")?.array().map { v throws(DecodingError) in try v.string() })
    }
}

extension Prescriber {
    public init(json value: JSONValueReader) throws(DecodingError) {
        let c = try value.object()
        self.init(
            name: try c.required("name").string(), licence: try c.optional("licence")?.string(),
            contact: try c.optional("contact")?.string(), address: try c.optional("address")?.string(),
            phone: try c.optional("phone")?.string(), fax: try c.optional("fax")?.string(),
            licenceSystem: try c.optional("licenceSystem")?.string())
    }
}

extension PupillaryDistance {
    public init(json value: JSONValueReader) throws(DecodingError) {
        let c = try value.object()
        self.init(far: try c.required("far").hundredths(), near: try c.optional("near")?.hundredths())
    }
}

extension LensSpecification {
    public init(json value: JSONValueReader) throws(DecodingError) {
        let c = try value.object()
        var farPD: Hundredths?
        var nearPD: Hundredths?
        if let pd = c.optional("pupillaryDistance") {
            let p = try pd.object()
            farPD = try p.optional("far")?.hundredths()
            nearPD = try p.optional("near")?.hundredths()
        }
        self.init(
            sphere: try c.required("sphere").hundredths(),
            cylinder: try c.optional("cylinder")?.hundredths(),
            axis: try c.optional("axis")?.int(),
            add: try c.optional("add")?.hundredths(),
            prism: try c.optional("prism").map { v throws(DecodingError) in try Prism(json: v) },
            vertexDistance: try c.optional("vertexDistance")?.hundredths(),
            farPD: farPD, nearPD: nearPD,
            baseCurve: try c.optional("baseCurve")?.hundredths(),
            diameter: try c.optional("diameter")?.hundredths(),
            brand: try c.optional("brand")?.string())
        addDesignation = try c.optional("addDesignation")?.raw(AddDesignation.self)
        if let word = try c.optional("dominance")?.string() {
            guard let dominance = LensDominance(word: word) else {
                throw c.corrupted("dominance", "'\(word)': expected dominant or non-dominant")
            }
            self.dominance = dominance
        }
        balance = try c.optional("balance")?.bool() ?? false
        manufacturer = try c.optional("manufacturer")?.string()
        material = try c.optional("material")?.string()
        equivalentBrand = try c.optional("equivalentBrand")?.string()
    }
}

extension Prism {
    public init(json value: JSONValueReader) throws(DecodingError) {
        let c = try value.object()
        if let angle = try c.optional("angle")?.int() {
            self = .polar(amount: try c.required("amount").hundredths(), angle: angle)
            return
        }
        func part<Base: RawRepresentable>(_ key: String, _ base: Base.Type) throws(DecodingError) -> Part<Base>?
        where Base.RawValue == String {
            guard let v = c.optional(key) else { return nil }
            let p = try v.object()
            return Part(amount: try p.required("amount").hundredths(), base: try p.required("base").raw(Base.self))
        }
        let vertical = try part("vertical", VerticalBase.self)
        let horizontal = try part("horizontal", HorizontalBase.self)
        guard vertical != nil || horizontal != nil else {
            throw c.corrupted("vertical", "a prism needs a vertical and/or horizontal part, or an amount and angle")
        }
        self = .rectangular(vertical: vertical, horizontal: horizontal)
    }
}

extension KeptFHIR {
    public init(json value: JSONValueReader) throws(DecodingError) {
        let c = try value.object()
        func members(_ key: String) throws(DecodingError) -> [String: FHIRValue]? { try c.optional(key)?.fhirObject() }
        self.init(
            resource: try c.required("resource").fhirObject(), right: try members("right"), left: try members("left"),
            prescriber: try members("prescriber"), practitioner: try members("practitioner"))
    }
}
