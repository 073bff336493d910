/// rxvault's JSON shape for a prescription (docs/format.md, "Prescription JSON v1").
///
/// One shape everywhere: inside the encrypted records, in `show --format json`, in `list`
/// and later in exports and imports. Numbers are JSON numbers holding exact hundredths;
/// dates are `YYYY-MM-DD` strings; absent values are left out rather than written as null.

extension Hundredths: Codable {
    public init(from decoder: Decoder) throws {
        let container = try decoder.singleValueContainer()
        let number = try container.decode(Double.self)
        guard let value = Hundredths(exactly: number) else {
            throw DecodingError.dataCorruptedError(
                in: container, debugDescription: "\(number) is not a number with at most two decimals")
        }
        self = value
    }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(doubleValue)
    }
}

extension CalendarDate: Codable {
    public init(from decoder: Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard let date = CalendarDate(iso: text) else {
            throw DecodingError.dataCorruptedError(
                in: container, debugDescription: "'\(text)': \(CalendarDate.problem(iso: text) ?? "not a date")")
        }
        self = date
    }

    /// A date outside 0001-01-01 to 9999-12-31 is never written: it could not be read back.
    public func encode(to encoder: Encoder) throws {
        guard self >= .earliest && self <= .latest else {
            throw EncodingError.invalidValue(
                self,
                .init(codingPath: encoder.codingPath, debugDescription: "\(self) is outside \(CalendarDate.rangeText)"))
        }
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}

extension Prism: Codable {
    enum CodingKeys: String, CodingKey { case vertical, horizontal, amount, angle }

    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        if let angle = try c.decodeIfPresent(Int.self, forKey: .angle) {
            self = .polar(amount: try c.decode(Hundredths.self, forKey: .amount), angle: angle)
        } else {
            let vertical = try c.decodeIfPresent(Part<VerticalBase>.self, forKey: .vertical)
            let horizontal = try c.decodeIfPresent(Part<HorizontalBase>.self, forKey: .horizontal)
            guard vertical != nil || horizontal != nil else {
                throw DecodingError.dataCorruptedError(
                    forKey: .vertical, in: c,
                    debugDescription: "a prism needs a vertical and/or horizontal part, or an amount and angle")
            }
            self = .rectangular(vertical: vertical, horizontal: horizontal)
        }
    }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        switch self {
        case .rectangular(let vertical, let horizontal):
            try c.encodeIfPresent(vertical, forKey: .vertical)
            try c.encodeIfPresent(horizontal, forKey: .horizontal)
        case .polar(let amount, let angle):
            try c.encode(amount, forKey: .amount)
            try c.encode(angle, forKey: .angle)
        }
    }
}

extension LensSpecification: Codable {
    enum CodingKeys: String, CodingKey {
        case sphere, cylinder, axis, add, prism, vertexDistance, pupillaryDistance, baseCurve, diameter, brand
        case addDesignation, dominance, balance, manufacturer, material, equivalentBrand
    }
    struct MonocularPD: Codable {
        var far: Hundredths?
        var near: Hundredths?
    }

    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let pd = try c.decodeIfPresent(MonocularPD.self, forKey: .pupillaryDistance)
        self.init(
            sphere: try c.decode(Hundredths.self, forKey: .sphere),
            cylinder: try c.decodeIfPresent(Hundredths.self, forKey: .cylinder),
            axis: try c.decodeIfPresent(Int.self, forKey: .axis),
            add: try c.decodeIfPresent(Hundredths.self, forKey: .add),
            prism: try c.decodeIfPresent(Prism.self, forKey: .prism),
            vertexDistance: try c.decodeIfPresent(Hundredths.self, forKey: .vertexDistance),
            farPD: pd?.far, nearPD: pd?.near,
            baseCurve: try c.decodeIfPresent(Hundredths.self, forKey: .baseCurve),
            diameter: try c.decodeIfPresent(Hundredths.self, forKey: .diameter),
            brand: try c.decodeIfPresent(String.self, forKey: .brand))
        // Added after v1's first release: absent in older records and files, which still read.
        addDesignation = try c.decodeIfPresent(AddDesignation.self, forKey: .addDesignation)
        if let word = try c.decodeIfPresent(String.self, forKey: .dominance) {
            guard let dominance = LensDominance(word: word) else {
                throw DecodingError.dataCorruptedError(
                    forKey: .dominance, in: c, debugDescription: "'\(word)': expected dominant or non-dominant")
            }
            self.dominance = dominance
        }
        balance = try c.decodeIfPresent(Bool.self, forKey: .balance) ?? false
        manufacturer = try c.decodeIfPresent(String.self, forKey: .manufacturer)
        material = try c.decodeIfPresent(String.self, forKey: .material)
        equivalentBrand = try c.decodeIfPresent(String.self, forKey: .equivalentBrand)
    }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(sphere, forKey: .sphere)
        try c.encodeIfPresent(cylinder, forKey: .cylinder)
        try c.encodeIfPresent(axis, forKey: .axis)
        try c.encodeIfPresent(add, forKey: .add)
        try c.encodeIfPresent(prism, forKey: .prism)
        try c.encodeIfPresent(vertexDistance, forKey: .vertexDistance)
        if farPD != nil || nearPD != nil {
            try c.encode(MonocularPD(far: farPD, near: nearPD), forKey: .pupillaryDistance)
        }
        try c.encodeIfPresent(baseCurve, forKey: .baseCurve)
        try c.encodeIfPresent(diameter, forKey: .diameter)
        try c.encodeIfPresent(brand, forKey: .brand)
        try c.encodeIfPresent(addDesignation, forKey: .addDesignation)
        try c.encodeIfPresent(dominance?.word, forKey: .dominance)
        if balance { try c.encode(true, forKey: .balance) }
        try c.encodeIfPresent(manufacturer, forKey: .manufacturer)
        try c.encodeIfPresent(material, forKey: .material)
        try c.encodeIfPresent(equivalentBrand, forKey: .equivalentBrand)
    }
}

extension Prescription: Codable {
    enum CodingKeys: String, CodingKey {
        case kind, patient, prescriber, issued, expires, note, right, left, pupillaryDistance, fhir
        case contactLensType, examDate, shortExpiryReason, assumedExpiry
    }

    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            kind: try c.decode(PrescriptionKind.self, forKey: .kind),
            patient: try c.decode(Patient.self, forKey: .patient),
            prescriber: try c.decode(Prescriber.self, forKey: .prescriber),
            issued: try c.decode(CalendarDate.self, forKey: .issued),
            expires: try c.decodeIfPresent(CalendarDate.self, forKey: .expires),
            note: try c.decodeIfPresent(String.self, forKey: .note),
            right: try c.decodeIfPresent(LensSpecification.self, forKey: .right),
            left: try c.decodeIfPresent(LensSpecification.self, forKey: .left),
            pupillaryDistance: try c.decodeIfPresent(PupillaryDistance.self, forKey: .pupillaryDistance))
        fhir = try c.decodeIfPresent(KeptFHIR.self, forKey: .fhir)
        contactLensType = try c.decodeIfPresent(ContactLensType.self, forKey: .contactLensType)
        examDate = try c.decodeIfPresent(CalendarDate.self, forKey: .examDate)
        shortExpiryReason = try c.decodeIfPresent(String.self, forKey: .shortExpiryReason)
        assumedExpiry = try c.decodeIfPresent(CalendarDate.self, forKey: .assumedExpiry)
    }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(kind, forKey: .kind)
        try c.encode(patient, forKey: .patient)
        try c.encode(prescriber, forKey: .prescriber)
        try c.encode(issued, forKey: .issued)
        try c.encodeIfPresent(expires, forKey: .expires)
        try c.encodeIfPresent(note, forKey: .note)
        try c.encodeIfPresent(right, forKey: .right)
        try c.encodeIfPresent(left, forKey: .left)
        try c.encodeIfPresent(pupillaryDistance, forKey: .pupillaryDistance)
        try c.encodeIfPresent(fhir, forKey: .fhir)
        try c.encodeIfPresent(contactLensType, forKey: .contactLensType)
        try c.encodeIfPresent(examDate, forKey: .examDate)
        try c.encodeIfPresent(shortExpiryReason, forKey: .shortExpiryReason)
        try c.encodeIfPresent(assumedExpiry, forKey: .assumedExpiry)
    }
}

extension Patient {
    enum CodingKeys: String, CodingKey { case id, name, birthDate, family, given }

    /// A patient record's reference alone (`{"id": ...}`, how format-4 record content names its
    /// patient) decodes with an empty name, for the vault to fill in from the record.
    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let id = try c.decodeIfPresent(String.self, forKey: .id)
        self.init(
            name: id == nil
                ? try c.decode(String.self, forKey: .name) : try c.decodeIfPresent(String.self, forKey: .name) ?? "",
            birthDate: try c.decodeIfPresent(CalendarDate.self, forKey: .birthDate), id: id,
            family: try c.decodeIfPresent(String.self, forKey: .family),
            given: try c.decodeIfPresent([String].self, forKey: .given))
    }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encodeIfPresent(id, forKey: .id)
        if id == nil || !name.isEmpty { try c.encode(name, forKey: .name) }
        try c.encodeIfPresent(birthDate, forKey: .birthDate)
        try c.encodeIfPresent(family, forKey: .family)
        try c.encodeIfPresent(given, forKey: .given)
    }
}
