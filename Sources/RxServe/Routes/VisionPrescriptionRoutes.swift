import Hummingbird
import NIOCore
import RxModel
import RxVault

/// `/VisionPrescription`: search, read, history and one version of the client's granted
/// prescriptions (a grant covers the version current when it was made and every later one).
struct VisionPrescriptionRoutes {
    let support: RouteSupport
    var gateway: VaultGateway { support.gateway }

    var collection: RouteCollection<ClientRequestContext> {
        let routes = RouteCollection(context: ClientRequestContext.self)
        routes.get { request, context in try await search(request, context) }
        routes.get(":id") { request, context in try await readNewest(context) }
        routes.get(":id/_history") { request, context in try await history(request, context) }
        routes.get(":id/_history/:version") { request, context in
            guard let version = context.parameters.get("version").flatMap(Int.init) else { throw APIError.notFound() }
            return try await read(version: version, context)
        }
        return routes
    }

    func search(_ request: Request, _ context: ClientRequestContext) async throws -> Response {
        let client = context.view
        let search = try VisionPrescriptionSearch(
            request.uri.queryParameters.map { (String($0.key), String($0.value)) })
        // Each with when it last changed for this client, which `_lastUpdated` compares and
        // `meta.lastUpdated` says (`ClientLastUpdated`).
        var matches = try await gateway.newestVersions(for: client).filter {
            search.matches($0.record, lastUpdated: $0.lastUpdated)
        }
        matches.sort {
            ($0.record.prescription.issued, $0.record.id.hex) > ($1.record.prescription.issued, $1.record.id.hex)
        }
        let page = Array(matches.dropFirst(search.offset).prefix(search.count))
        let base = support.baseURL(request, context)
        func link(_ relation: String, offset: Int) -> JSONValue {
            .fields([
                "relation": .string(relation),
                "url": .string("\(base)/VisionPrescription?\(search.query(offset: offset))")
            ])
        }
        // A page of 0 (the total alone) has no next or previous page: either would be this one
        // again, and a client that follows `next` until there is none would never stop.
        var links = [link("self", offset: search.offset)]
        if search.count > 0, search.offset + search.count < matches.count {
            links.append(link("next", offset: search.offset + search.count))
        }
        if search.count > 0, search.offset > 0 {
            links.append(link("previous", offset: max(0, search.offset - search.count)))
        }
        var entries: [JSONValue] = page.map { served in
            .fields([
                "fullUrl": .string("\(base)/VisionPrescription/\(FHIR.prescriptionResourceID(served.record.id))"),
                "resource": ClientLastUpdated.resource(served.record, lastUpdated: served.lastUpdated),
                "search": .fields(["mode": .string("match")])
            ])
        }
        if search.includePatients {
            // Each patient of the page once, as an "include" entry (not counted in the total).
            var seen: Set<String> = []
            for served in page {
                let patient = served.record.prescription.patient
                let id = FHIR.patientResourceID(patient)
                guard seen.insert(id).inserted else { continue }
                entries.append(
                    .fields([
                        "fullUrl": .string("\(base)/Patient/\(id)"), "resource": FHIR.patientResource(patient),
                        "search": .fields(["mode": .string("include")])
                    ]))
            }
        }
        await support.logRead(client, prescriptions: page.map(\.record.id), detail: "api search VisionPrescription")
        return FHIRResponse.ok(RouteSupport.bundle("searchset", total: matches.count, links: links, entries: entries))
    }

    /// The newest version, the most frequent request: one turn of the gateway (the grant checked
    /// again in that turn), the rendering kept per vault state (`ServedCache`) and sent as it is.
    func readNewest(_ context: ClientRequestContext) async throws -> Response {
        guard let id = context.parameters.get("id") else { throw APIError.notFound() }
        guard let rendered = try await gateway.newestRendered(id, for: context.view) else { throw APIError.notFound() }
        return Response(
            status: .ok, headers: [.contentType: FHIRResponse.contentType], body: .init(byteBuffer: rendered))
    }

    func read(version: Int, _ context: ClientRequestContext) async throws -> Response {
        let client = context.view
        let (id, covered, newest) = try await coveredHistory(context)
        guard let record = covered.first(where: { $0.version == version }) else { throw APIError.notFound() }
        await support.logRead(
            client, prescriptions: [id], detail: "api read VisionPrescription version \(version)")
        return FHIRResponse.ok(Self.resource(record, newest: newest))
    }

    func history(_ request: Request, _ context: ClientRequestContext) async throws -> Response {
        let client = context.view
        let (id, covered, newest) = try await coveredHistory(context)
        let base = support.baseURL(request, context)
        let entries: [JSONValue] = covered.reversed().map { record in
            let resourceID = FHIR.prescriptionResourceID(record.id)
            return .fields([
                "fullUrl": .string("\(base)/VisionPrescription/\(resourceID)"),
                "resource": Self.resource(record, newest: newest),
                "request": .fields([
                    "method": .string(record.version == 1 ? "POST" : "PUT"),
                    "url": .string("VisionPrescription/\(resourceID)")
                ]),
                "response": .fields(["status": .string(record.version == 1 ? "201" : "200")])
            ])
        }
        await support.logRead(client, prescriptions: [id], detail: "api history VisionPrescription")
        return FHIRResponse.ok(RouteSupport.bundle("history", total: entries.count, entries: entries))
    }

    /// The versions the client's grant of the path's prescription covers (the one current when
    /// it was granted, and every later one), and the newest as served; "not found" when not granted.
    func coveredHistory(_ context: ClientRequestContext) async throws -> (
        PrescriptionID, [PrescriptionRecord], newest: VaultGateway.Served
    ) {
        guard let id = context.parameters.get("id"),
            let covered = try await gateway.coveredVersions(id, for: context.view)
        else { throw APIError.notFound() }
        return (covered.id, covered.versions, covered.newest)
    }

    /// A version as served: the newest with the client's `meta.lastUpdated`, as a read or a search
    /// gives it; an earlier one with the time it was recorded.
    static func resource(_ record: PrescriptionRecord, newest: VaultGateway.Served) -> JSONValue {
        record.version == newest.record.version
            ? ClientLastUpdated.resource(record, lastUpdated: newest.lastUpdated)
            : FHIR.visionPrescriptionResource(record, for: .api)
    }
}
