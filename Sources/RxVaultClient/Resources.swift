/// The search's filters (docs/api.md, "Resources"); every one given counts (they are ANDed).
public struct PrescriptionQuery: Sendable {
    /// `Patient/<id>` or `<id>`.
    public var patient: String?
    /// Bounds such as "ge2026-01-01", "lt2027-01-01".
    public var dateWritten: [String]
    /// Only what changed since: a day or a time ("2026-11-01", "2026-11-27T04:18:54Z").
    public var lastUpdatedSince: String?
    /// FHIR statuses: active, cancelled, draft, entered-in-error.
    public var statuses: [String]
    /// Prescriptions per page (`_count`; the server's default is 50, its largest page 200);
    /// `search` follows every page whatever its size.
    public var pageSize: Int?

    public init(
        patient: String? = nil, dateWritten: [String] = [], lastUpdatedSince: String? = nil, statuses: [String] = [],
        pageSize: Int? = nil
    ) {
        self.patient = patient
        self.dateWritten = dateWritten
        self.lastUpdatedSince = lastUpdatedSince
        self.statuses = statuses
        self.pageSize = pageSize
    }

    var queryString: String {
        var parts: [String] = []
        func add(_ name: String, _ value: String) { parts.append(name + "=" + RxVaultClient.escaped(value)) }
        if let patient { add("patient", patient) }
        for bound in dateWritten { add("datewritten", bound) }
        if let lastUpdatedSince { add("_lastUpdated", "ge" + lastUpdatedSince) }
        if !statuses.isEmpty { add("status", statuses.joined(separator: ",")) }
        if let pageSize { add("_count", String(pageSize)) }
        return parts.isEmpty ? "" : "?" + parts.joined(separator: "&")
    }
}

/// A VisionPrescription as the API sends it: the elements an app reads; the JSON has more.
public struct VisionPrescription: Decodable, Sendable, Equatable {
    public struct Meta: Decodable, Sendable, Equatable {
        public let versionId: String?
        public let lastUpdated: String?
    }
    public struct Reference: Decodable, Sendable, Equatable {
        public let reference: String?
        public let display: String?
    }
    public struct Prism: Decodable, Sendable, Equatable {
        public let amount: Double
        public let base: String
    }
    /// FHIR's CodeableConcept: codes and a text.
    public struct CodeableConcept: Decodable, Sendable, Equatable {
        public struct Coding: Decodable, Sendable, Equatable {
            public let system: String?
            public let code: String?
        }
        public let coding: [Coding]?
        public let text: String?
    }
    /// One eye's lens (FHIR `lensSpecification`).
    public struct LensSpecification: Decodable, Sendable, Equatable {
        /// `lens` (glasses) or `contact` (contact lenses), with the system's code.
        public let product: CodeableConcept
        public let eye: String
        public let sphere: Double?
        public let cylinder: Double?
        public let axis: Int?
        public let add: Double?
        public let prism: [Prism]?
        public let power: Double?
        public let backCurve: Double?
        public let diameter: Double?
        public let brand: String?
    }

    public let id: String
    public let status: String
    public let meta: Meta?
    public let dateWritten: String?
    public let patient: Reference?
    public let prescriber: Reference?
    public let lensSpecification: [LensSpecification]
}

/// An attachment's description; `content[0].attachment.url` is its Binary.
public struct DocumentReference: Decodable, Sendable, Equatable {
    public struct Content: Decodable, Sendable, Equatable {
        public struct Attachment: Decodable, Sendable, Equatable {
            public let contentType: String?
            public let url: String?
            public let title: String?
            public let size: Int?
        }
        public let attachment: Attachment
    }
    public let id: String
    public let content: [Content]

    /// The Binary's id, for `download`.
    public var binaryID: String? { content.first?.attachment.url?.split(separator: "/").last.map(String.init) }
}

/// An access request as its client sees it.
public struct AccessRequest: Decodable, Sendable, Equatable {
    public let id: String
    public let status: String
    /// `VisionPrescription/<id>` of what the answer granted.
    public let granted: [String]?
}

/// A searchset or history Bundle (named apart from Foundation's Bundle).
struct FHIRBundle<Resource: Decodable>: Decodable {
    struct Link: Decodable {
        let relation: String
        let url: String
    }
    struct Entry: Decodable {
        struct Search: Decodable { let mode: String? }
        let resource: Resource?
        let search: Search?
    }
    let link: [Link]?
    let entry: [Entry]?
}

struct Challenge: Decodable {
    let challenge: String
    let age: String
}

struct TokenAnswer: Decodable {
    // The API's member name (OAuth's).
    // swift-format-ignore: AlwaysUseLowerCamelCase
    let access_token: String
}
