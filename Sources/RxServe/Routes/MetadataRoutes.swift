import Hummingbird
import RxModel
import RxVault

/// `GET /metadata`: what this server supports, as FHIR asks servers to say (no token needed).
struct MetadataRoutes {
    var collection: RouteCollection<ServeRequestContext> {
        let routes = RouteCollection(context: ServeRequestContext.self)
        routes.get { _, _ in FHIRResponse.ok(Self.capabilityStatement) }
        return routes
    }

    static let capabilityStatement: JSONValue = {
        func parameter(_ name: String, _ type: String, _ documentation: String) -> JSONValue {
            .fields(["documentation": .string(documentation), "name": .string(name), "type": .string(type)])
        }
        func interactions(_ codes: String...) -> JSONValue { .array(codes.map { .fields(["code": .string($0)]) }) }
        return .fields([
            "resourceType": .string("CapabilityStatement"), "status": .string("active"), "date": .string("2026-11-23"),
            "kind": .string("instance"),
            "software": .fields(["name": .string("rxvault")]),
            "implementation": .fields([
                "description": .string("rxvault serve: vision prescriptions a client was granted")
            ]),
            "fhirVersion": .string("4.0.1"), "format": .array([.string("json")]),
            "rest": .array([
                .fields([
                    "mode": .string("server"),
                    "security": .fields([
                        "description": .string(
                            "Bearer tokens from POST /auth/challenge and /auth/token, proving possession of the client's age X25519 identity (docs/api.md). A client sees only what the owner granted it."
                        )
                    ]),
                    "resource": .array([
                        .fields([
                            "type": .string("VisionPrescription"),
                            "interaction": interactions("read", "vread", "history-instance", "search-type"),
                            "searchParam": .array([
                                parameter("patient", "reference", "Patient/<id>"),
                                parameter("datewritten", "date", "YYYY-MM-DD with ge, le, gt, lt or eq"),
                                parameter(
                                    "status", "token",
                                    "active, cancelled, draft or entered-in-error (comma-separated: any of them); a withdrawn prescription is never valid"
                                ),
                                parameter(
                                    "identifier", "token",
                                    "\(FHIR.identifierSystem)|<rxvault id>, or the owner's id (8 or more hex digits)"),
                                parameter(
                                    "_lastUpdated", "date",
                                    "YYYY-MM-DD or YYYY-MM-DDTHH:MM:SSZ with ge, le, gt, lt or eq: what changed since. For a client, a prescription's last update (its meta.lastUpdated) is the latest of its newest version (an edit, or a re-key after a revoke or a client's removal), its grant to this client, and the attachments that grant includes; times are whole seconds. A revoked prescription is absent: list the ids to learn of removals"
                                ),
                                parameter(
                                    "_count", "number",
                                    "page size, 0 (the total alone, no next link) to \(ServeSettings.maxPageSize); more is \(ServeSettings.maxPageSize)"
                                )
                            ]),
                            "searchInclude": .array([.string("VisionPrescription:patient")])
                        ]),
                        .fields(["type": .string("Patient"), "interaction": interactions("read")]),
                        .fields([
                            "type": .string("Observation"), "interaction": interactions("read", "search-type"),
                            "searchParam": .array([
                                parameter(
                                    "patient", "reference",
                                    "Patient/<id>: the axial lengths and acuities of a grant made with --measurements")
                            ])
                        ]),
                        .fields([
                            "type": .string("DocumentReference"), "interaction": interactions("search-type"),
                            "searchParam": .array([parameter("related", "reference", "VisionPrescription/<id>")])
                        ]),
                        .fields(["type": .string("Binary"), "interaction": interactions("read")])
                    ])
                ])
            ])
        ])
    }()
}
