import RxVault

/// `GET /metadata`: what this server supports, as FHIR asks servers to say.
enum CapabilityStatement {
    static func resource() -> [String: Any] {
        func parameter(_ name: String, _ type: String, _ documentation: String) -> [String: Any] {
            ["name": name, "type": type, "documentation": documentation]
        }
        return [
            "resourceType": "CapabilityStatement", "status": "active", "date": "2026-11-23", "kind": "instance",
            "software": ["name": "rxvault"], "implementation": ["description": "rxvault serve: vision prescriptions a client was granted"],
            "fhirVersion": "4.0.1", "format": ["json"],
            "rest": [[
                "mode": "server",
                "security": ["description": "Bearer tokens from POST /auth/challenge and /auth/token, proving possession of the client's age X25519 identity (docs/api.md). A client sees only what the owner granted it."],
                "resource": [
                    ["type": "VisionPrescription", "interaction": [["code": "read"], ["code": "vread"], ["code": "history-instance"], ["code": "search-type"]],
                     "searchParam": [
                        parameter("patient", "reference", "Patient/<id>"),
                        parameter("datewritten", "date", "YYYY-MM-DD with ge, le, gt, lt or eq"),
                        parameter("status", "token", "active, cancelled, draft or entered-in-error (comma-separated: any of them); a withdrawn prescription is never valid"),
                        parameter("identifier", "token", "\(FHIR.identifierSystem)|<rxvault id>"),
                        parameter("_count", "number", "page size, 1 to \(ServeSettings.maxPageSize)"),
                     ]],
                    ["type": "Patient", "interaction": [["code": "read"]]],
                    ["type": "DocumentReference", "interaction": [["code": "search-type"]],
                     "searchParam": [parameter("related", "reference", "VisionPrescription/<id>")]],
                    ["type": "Binary", "interaction": [["code": "read"]]],
                ] as [[String: Any]],
            ] as [String: Any]],
        ]
    }
}
