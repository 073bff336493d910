import Hummingbird
import RxModel
import RxVault

/// `/Observation`: the myopia-management measurements (axial length, visual acuity) the client's
/// grants carry (format 6: a grant made with `--measurements` carries its prescription's
/// patient's). Each measurement is one Observation per value, with the ids and LOINC codes of
/// the owner's FHIR export (`FHIR.observations`), naming the Patient the client's
/// VisionPrescriptions name. An Observation of no such grant is answered like one that does not
/// exist; a search is logged as a read of the prescriptions whose grants carried what it returned.
struct ObservationRoutes {
    let support: RouteSupport

    var collection: RouteCollection<ClientRequestContext> {
        let routes = RouteCollection(context: ClientRequestContext.self)
        routes.get { request, context in try await search(request, context) }
        routes.get(":id") { _, context in try await read(context) }
        return routes
    }

    /// Every granted Observation, or those of one Patient (`patient=Patient/<id>` or `<id>`), by
    /// patient, then date: a child's record is tens of visits, not pages of them.
    func search(_ request: Request, _ context: ClientRequestContext) async throws -> Response {
        var patient: String?
        for (key, value) in request.uri.queryParameters.map({ (String($0.key), String($0.value)) }) {
            switch key {
            case "patient":
                guard patient == nil else { throw APIError.invalid("give \(key) once") }
                patient = value.hasPrefix("Patient/") ? String(value.dropFirst("Patient/".count)) : value
            case "_format" where value == "json" || value == "application/fhir+json":
                continue
            default:
                throw APIError.invalid(
                    "unknown search parameter '\(key)' (Observation takes patient, as GET /metadata says)")
            }
        }
        let client = context.view
        let measured = try await support.gateway.measurements(for: client)
        var entries: [JSONValue] = []
        var read: [PrescriptionID] = []
        let base = support.baseURL(request, context)
        for granted in measured {
            let patientID = FHIR.patientResourceID(granted.patient.patient)
            if let patient, patient != patientID { continue }
            // Only what was returned counts as read (a patient with none returns nothing).
            if !granted.records.isEmpty { read += granted.via }
            for record in granted.records {
                for (id, resource) in FHIR.observations(record.measurement, patientReference: "Patient/" + patientID) {
                    entries.append(
                        .fields([
                            "fullUrl": .string("\(base)/Observation/\(id)"), "resource": resource,
                            "search": .fields(["mode": .string("match")])
                        ]))
                }
            }
        }
        await support.logRead(client, prescriptions: read, detail: "api search Observation")
        return FHIRResponse.ok(RouteSupport.bundle("searchset", total: entries.count, entries: entries))
    }

    func read(_ context: ClientRequestContext) async throws -> Response {
        guard let id = context.parameters.get("id") else { throw APIError.notFound() }
        let client = context.view
        let measured = try await support.gateway.measurements(for: client)
        for granted in measured {
            let patientID = FHIR.patientResourceID(granted.patient.patient)
            for record in granted.records {
                for (observationID, resource) in FHIR.observations(
                    record.measurement, patientReference: "Patient/" + patientID)
                where observationID == id {
                    await support.logRead(client, prescriptions: granted.via, detail: "api read Observation")
                    return FHIRResponse.ok(resource)
                }
            }
        }
        throw APIError.notFound()
    }
}
