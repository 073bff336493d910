import Hummingbird
import RxModel
import RxVault

/// `GET /Patient/{id}`: the patient of a granted prescription. It says nothing of the patient's
/// other prescriptions; a Patient of no grant of the client's is answered like one that does not exist.
struct PatientRoutes {
    let support: RouteSupport

    var collection: RouteCollection<ClientRequestContext> {
        let routes = RouteCollection(context: ClientRequestContext.self)
        routes.get(":id") { _, context in try await read(context) }
        return routes
    }

    func read(_ context: ClientRequestContext) async throws -> Response {
        guard let id = context.parameters.get("id") else { throw APIError.notFound() }
        guard let (patient, via) = try await support.gateway.patient(id, for: context.view) else {
            throw APIError.notFound()
        }
        await support.logRead(context.view, prescriptions: [via], detail: "api read Patient")
        return FHIRResponse.ok(FHIR.patientResource(patient))
    }
}
