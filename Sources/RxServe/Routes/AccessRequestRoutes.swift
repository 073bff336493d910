import Hummingbird
import RxModel
import RxVault

/// `POST /access-requests` and `GET /access-requests/{id}` (docs/api.md, "Asking for access"):
/// a client asks the owner for prescriptions, and later learns whether the request was answered.
struct AccessRequestRoutes {
    let support: RouteSupport

    var collection: RouteCollection<ClientRequestContext> {
        let routes = RouteCollection(context: ClientRequestContext.self)
        routes.post { request, context in try await create(request, context) }
        routes.get(":id") { _, context in try await read(context) }
        return routes
    }

    func create(_ request: Request, _ context: ClientRequestContext) async throws -> Response {
        let body = try await support.jsonBody(request)
        guard let reason = body.string("reason") else {
            throw APIError.invalid(
                "send {\"reason\": \"why\", \"patient\": \"name\" (optional), \"kinds\": [\"glasses\", \"contacts\"] (optional)}"
            )
        }
        // A member of the wrong type is refused, not read as absent ("any patient", "any kind").
        if body["patient"] != nil && body.string("patient") == nil {
            throw APIError.invalid("patient: a name, as a string")
        }
        let patient = body.string("patient")
        var kinds: [PrescriptionKind] = []
        if let given = body["kinds"] {
            guard case .array(let items) = given else { throw APIError.invalid("kinds: a list of glasses or contacts") }
            for item in items {
                guard case .string(let text) = item, let kind = PrescriptionKind(rawValue: text) else {
                    throw APIError.invalid("kinds: glasses or contacts")
                }
                kinds.append(kind)
            }
        }
        let view = context.view
        let clientID = view.clientID
        do {
            let made = try await support.gateway.requestAccess(
                for: view, reason: reason, patient: patient, kinds: kinds,
                ownerWrite: support.settings.ownerWrites)
            context.logger.info(
                "access requested", metadata: ["client": .string(clientID.short), "request": .string(made.id)])
            support.settings.onAccessRequest?(made.id, view.access.client.name)
            return FHIRResponse.json(
                Self.resource(made), status: .accepted,
                headers: [.location: "\(support.baseURL(request, context))/access-requests/\(made.id)"])
        } catch let error as VaultError {
            if case .invalidInput(let why) = error, why.hasPrefix("too many requests") {
                throw APIError.throttled(why, retryAfter: 3600)
            }
            throw APIError.from(error)
        }
    }

    func read(_ context: ClientRequestContext) async throws -> Response {
        guard let id = context.parameters.get("id"),
            let found = try await support.gateway.accessRequest(id, for: context.view)
        else { throw APIError.notFound() }
        return FHIRResponse.json(Self.resource(found))
    }

    /// What a client is told of its request: pending or answered, and what the answer granted
    /// (a later revoke shows in the resources, not here) - never whether it was denied, nor
    /// anything else the vault holds.
    static func resource(_ request: AccessRequest) -> JSONValue {
        .fields([
            "expires": .string(request.expires),
            "granted": .array(request.granted.map { .string("VisionPrescription/\(FHIR.prescriptionResourceID($0))") }),
            "id": .string(request.id), "requested": .string(request.requested),
            "status": .string(request.status == .pending ? "pending" : "answered")
        ])
    }
}
