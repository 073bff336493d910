import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import RxCrypto
import RxModel
import RxVault

/// The routes of `rxvault serve` (docs/api.md): authentication, the read-only FHIR R4 resources
/// a client was granted, and access requests. Authorization is the owner's grants as they are
/// at each request; anything not granted is answered exactly like something that does not exist.
struct FHIRAPI: Sendable {
    let gateway: VaultGateway
    let authenticator: ClientAuthenticator
    let settings: ServeSettings

    func register(on router: Router<BasicRequestContext>) {
        router.get("metadata") { _, _ in try FHIRResponse.ok(CapabilityStatement.resource()) }
        router.post("auth/challenge") { request, context in try await challenge(request, context) }
        router.post("auth/token") { request, context in try await token(request, context) }
        router.get("VisionPrescription") { request, context in try await searchPrescriptions(request, context) }
        router.get("VisionPrescription/:id") { request, context in try await readPrescription(request, context, version: nil) }
        router.get("VisionPrescription/:id/_history") { request, context in try await prescriptionHistory(request, context) }
        router.get("VisionPrescription/:id/_history/:version") { request, context in
            guard let version = context.parameters.get("version").flatMap(Int.init) else { throw APIError.notFound() }
            return try await readPrescription(request, context, version: version)
        }
        router.get("Patient/:id") { request, context in try await readPatient(request, context) }
        router.get("DocumentReference") { request, context in try await searchDocuments(request, context) }
        router.get("Binary/:id") { request, context in try await readBinary(request, context) }
        router.post("access-requests") { request, context in try await requestAccess(request, context) }
        router.get("access-requests/:id") { request, context in try await readAccessRequest(request, context) }
    }

    // MARK: - Authentication

    func challenge(_ request: Request, _ context: BasicRequestContext) async throws -> Response {
        let body = try await jsonBody(request)
        guard let recipient = body["recipient"] as? String else { throw APIError.invalid("send {\"recipient\": \"age1...\"}") }
        do {
            let gateway = self.gateway
            let (id, age, expires) = try await authenticator.challenge(recipient: recipient) { recipient in
                try await gateway.client(publicKey: recipient.publicKey)?.id
            }
            return try FHIRResponse.json(["challenge": id, "age": age, "expires": Timestamp.iso(expires)])
        } catch let refusal as ClientAuthenticator.Refusal {
            throw APIError.from(refusal)
        }
    }

    func token(_ request: Request, _ context: BasicRequestContext) async throws -> Response {
        let body = try await jsonBody(request)
        guard let id = body["challenge"] as? String, let response = body["response"] as? String, response.utf8.count <= 256 else {
            throw APIError.invalid("send {\"challenge\": \"...\", \"response\": \"<the decrypted secret>\"}")
        }
        do {
            let (token, clientID, expires) = try await authenticator.token(challenge: id, response: response)
            context.logger.info("client authenticated", metadata: ["client": .string(clientID.short)])
            return try FHIRResponse.json(["access_token": token, "token_type": "Bearer",
                                          "expires_in": Int(expires.timeIntervalSinceNow.rounded()), "client": clientID.hex])
        } catch let refusal as ClientAuthenticator.Refusal {
            context.logger.notice("authentication failed")
            throw APIError.from(refusal)
        }
    }

    /// The client the request's bearer token stands for.
    func bearer(_ request: Request) throws -> ClientID {
        guard let header = request.headers[.authorization], let token = Self.bearerToken(header),
              let clientID = authenticator.client(bearer: token) else {
            throw APIError.unauthorized("a valid bearer token is needed (POST /auth/challenge, then /auth/token)")
        }
        return clientID
    }

    /// The token of an `Authorization: Bearer <token>` value (the scheme in any case, spaces and
    /// tabs around the token ignored); nil for any other scheme. Byte by byte: every request.
    static func bearerToken(_ header: String) -> String? {
        let bytes = Array(header.utf8)
        let scheme = Array("bearer".utf8)
        guard bytes.count > scheme.count + 1, zip(bytes, scheme).allSatisfy({ $0 | 0x20 == $1 }), bytes[scheme.count] == 0x20 else { return nil }
        var start = scheme.count + 1, end = bytes.count
        while start < end, bytes[start] == 0x20 || bytes[start] == 0x09 { start += 1 }
        while end > start, bytes[end - 1] == 0x20 || bytes[end - 1] == 0x09 { end -= 1 }
        return String(decoding: bytes[start..<end], as: UTF8.self)
    }

    static let unregistered = APIError.unauthorized("this client is no longer registered")

    /// The client behind the request's bearer token, with its grants as they are now.
    func authorize(_ request: Request) async throws -> ServedCache.ClientView {
        let clientID = try bearer(request)
        guard let access = try await vault({ try await gateway.access(clientID: clientID) }) else { throw Self.unregistered }
        return access
    }

    // MARK: - VisionPrescription

    func searchPrescriptions(_ request: Request, _ context: BasicRequestContext) async throws -> Response {
        let access = try await authorize(request)
        let search = try VisionPrescriptionSearch(request.uri.queryParameters.map { (String($0.key), String($0.value)) })
        var matches: [PrescriptionRecord] = []
        for id in access.access.grants.keys.sorted(by: { $0.hex < $1.hex }) {
            let record = try await vault { try await gateway.prescription(id) }
            if search.matches(record) { matches.append(record) }
        }
        matches.sort { ($0.prescription.issued, $0.id.hex) > ($1.prescription.issued, $1.id.hex) }
        let page = Array(matches.dropFirst(search.offset).prefix(search.count))
        let base = baseURL(request)
        var links: [[String: Any]] = [["relation": "self", "url": "\(base)/VisionPrescription?\(search.query(offset: search.offset))"]]
        if search.offset + search.count < matches.count {
            links.append(["relation": "next", "url": "\(base)/VisionPrescription?\(search.query(offset: search.offset + search.count))"])
        }
        if search.offset > 0 {
            links.append(["relation": "previous", "url": "\(base)/VisionPrescription?\(search.query(offset: max(0, search.offset - search.count)))"])
        }
        let entries: [[String: Any]] = page.map { record in
            ["fullUrl": "\(base)/VisionPrescription/\(FHIR.prescriptionResourceID(record.id))", "resource": Self.prescriptionResource(record),
             "search": ["mode": "match"]]
        }
        await logRead(access, prescriptions: page.map(\.id), detail: "api search VisionPrescription")
        return try FHIRResponse.ok(["resourceType": "Bundle", "type": "searchset", "total": matches.count, "link": links, "entry": entries])
    }

    func readPrescription(_ request: Request, _ context: BasicRequestContext, version: Int?) async throws -> Response {
        guard let version else {
            // The newest version, the most frequent request: one turn of the gateway, the
            // rendering kept per vault state (ServedCache) and sent as it is.
            let clientID = try bearer(request)
            guard let id = context.parameters.get("id") else { throw APIError.notFound() }
            switch try await vault({ try await gateway.readNewest(clientID: clientID, resourceID: id) }) {
            case .unregistered: throw Self.unregistered
            case .notGranted: throw APIError.notFound()
            case .found(let rendered):
                return Response(status: .ok, headers: [.contentType: FHIRResponse.contentType], body: .init(byteBuffer: rendered))
            }
        }
        let access = try await authorize(request)
        let id = try granted(context, access)
        guard let record = try await coveredHistory(id, access).first(where: { $0.version == version }) else { throw APIError.notFound() }
        await logRead(access, prescriptions: [id], detail: "api read VisionPrescription version \(version)")
        return try FHIRResponse.ok(Self.prescriptionResource(record))
    }

    func prescriptionHistory(_ request: Request, _ context: BasicRequestContext) async throws -> Response {
        let access = try await authorize(request)
        let id = try granted(context, access)
        let versions = try await coveredHistory(id, access).reversed()
        let base = baseURL(request)
        let entries: [[String: Any]] = versions.map { record in
            ["fullUrl": "\(base)/VisionPrescription/\(FHIR.prescriptionResourceID(record.id))", "resource": Self.prescriptionResource(record),
             "request": ["method": record.version == 1 ? "POST" : "PUT", "url": "VisionPrescription/\(FHIR.prescriptionResourceID(record.id))"],
             "response": ["status": record.version == 1 ? "201" : "200"]]
        }
        await logRead(access, prescriptions: [id], detail: "api history VisionPrescription")
        return try FHIRResponse.ok(["resourceType": "Bundle", "type": "history", "total": entries.count, "entry": entries])
    }

    /// The versions a grant covers: the one that was current when it was granted, and every later one.
    func coveredHistory(_ id: PrescriptionID, _ access: ServedCache.ClientView) async throws -> [PrescriptionRecord] {
        guard let grant = access.access.grants[id] else { throw APIError.notFound() }
        let all = try await vault { try await gateway.history(id) }
        let first = all.lastIndex { $0.recorded <= grant.granted } ?? 0
        return Array(all[first...])
    }

    static func prescriptionResource(_ record: PrescriptionRecord) -> [String: Any] {
        var resource = FHIR.visionPrescription(record, patientReference: "Patient/\(FHIR.patientResourceID(record.prescription.patient))")
        resource["meta"] = ["versionId": String(record.version), "lastUpdated": record.recorded]
        return resource
    }

    /// The granted prescription the path's `id` names; "not found" for anything else.
    func granted(_ context: BasicRequestContext, _ access: ServedCache.ClientView) throws -> PrescriptionID {
        guard let id = context.parameters.get("id"), let match = access.prescriptions[id] else { throw APIError.notFound() }
        return match
    }

    // MARK: - Patient

    func readPatient(_ request: Request, _ context: BasicRequestContext) async throws -> Response {
        let access = try await authorize(request)
        guard let id = context.parameters.get("id") else { throw APIError.notFound() }
        for prescription in access.access.grants.keys.sorted(by: { $0.hex < $1.hex }) {
            let record = try await vault { try await gateway.prescription(prescription) }
            if FHIR.patientResourceID(record.prescription.patient) == id {
                await logRead(access, prescriptions: [prescription], detail: "api read Patient")
                return try FHIRResponse.ok(FHIR.patient(record.prescription.patient))
            }
        }
        throw APIError.notFound()
    }

    // MARK: - Attachments

    func searchDocuments(_ request: Request, _ context: BasicRequestContext) async throws -> Response {
        let access = try await authorize(request)
        var related: String?
        for (name, value) in request.uri.queryParameters {
            guard name == "related" else { throw APIError.invalid("unsupported search parameter '\(name)' (supported: related)") }
            related = value.hasPrefix("VisionPrescription/") ? String(value.dropFirst("VisionPrescription/".count)) : String(value)
        }
        let base = baseURL(request)
        var entries: [[String: Any]] = []
        var read: [PrescriptionID] = [], attachments: [AttachmentID] = []
        for id in access.access.grants.keys.sorted(by: { $0.hex < $1.hex }) where access.access.allowsAttachments(of: id) {
            let resourceID = FHIR.prescriptionResourceID(id)
            if let related, related != resourceID { continue }
            let record = try await vault { try await gateway.prescription(id) }
            for info in try await vault({ try await gateway.attachments(of: id) }) {
                let document = FHIR.documentReference(info, patientReference: "Patient/\(FHIR.patientResourceID(record.prescription.patient))",
                                                      prescriptionReference: "VisionPrescription/\(resourceID)",
                                                      content: .url("\(base)/Binary/\(FHIR.attachmentResourceID(info.id))"))
                entries.append(["fullUrl": "\(base)/DocumentReference/\(FHIR.attachmentResourceID(info.id))", "resource": document,
                                "search": ["mode": "match"]])
                attachments.append(info.id)
            }
            read.append(id)
        }
        await logRead(access, prescriptions: read, attachments: attachments, detail: "api search DocumentReference")
        return try FHIRResponse.ok(["resourceType": "Bundle", "type": "searchset", "total": entries.count, "entry": entries])
    }

    /// Streams an attachment chunk by chunk with its own content type; memory stays at a chunk
    /// whatever the size and however slowly the client reads.
    func readBinary(_ request: Request, _ context: BasicRequestContext) async throws -> Response {
        let access = try await authorize(request)
        guard let wanted = context.parameters.get("id") else { throw APIError.notFound() }
        for id in access.access.grants.keys.sorted(by: { $0.hex < $1.hex }) where access.access.allowsAttachments(of: id) {
            for info in try await vault({ try await gateway.attachments(of: id) }) where FHIR.attachmentResourceID(info.id) == wanted {
                let (handle, opened) = try await vault { try await gateway.openStream(info.id, of: id) }
                await logRead(access, prescriptions: [id], attachments: [info.id], detail: "api read Binary \(opened.metadata.name)")
                let source = self.gateway
                let logger = context.logger
                let body = ResponseBody(contentLength: opened.metadata.size) { writer in
                    do {
                        while let chunk = try await source.nextChunk(handle) {
                            try await writer.write(ByteBuffer(bytes: chunk))
                        }
                        try await writer.finish(nil)
                    } catch {
                        await source.closeStream(handle)
                        logger.error("attachment stream stopped", metadata: ["reason": .string("\(error)")])
                        throw error
                    }
                }
                return Response(status: .ok, headers: [.contentType: opened.metadata.type.mimeType,
                                                       .contentDisposition: "attachment"], body: body)
            }
        }
        throw APIError.notFound()
    }

    // MARK: - Access requests

    func requestAccess(_ request: Request, _ context: BasicRequestContext) async throws -> Response {
        let access = try await authorize(request)
        let body = try await jsonBody(request)
        guard let reason = body["reason"] as? String else {
            throw APIError.invalid("send {\"reason\": \"why\", \"patient\": \"name\" (optional), \"kinds\": [\"glasses\", \"contacts\"] (optional)}")
        }
        let patient = body["patient"] as? String
        var kinds: [PrescriptionKind] = []
        for kind in body["kinds"] as? [Any] ?? [] {
            guard let text = kind as? String, let parsed = PrescriptionKind(rawValue: text) else { throw APIError.invalid("kinds: glasses or contacts") }
            kinds.append(parsed)
        }
        let clientID = access.access.client.id
        do {
            let made = try await gateway.requestAccess(clientID: clientID, reason: reason, patient: patient, kinds: kinds)
            context.logger.info("access requested", metadata: ["client": .string(clientID.short), "request": .string(made.id)])
            return try FHIRResponse.json(requestResource(made), status: .accepted,
                                         headers: [.location: "\(baseURL(request))/access-requests/\(made.id)"])
        } catch let error as VaultError {
            if case .invalidInput(let why) = error, why.hasPrefix("too many requests") { throw APIError.throttled(why, retryAfter: 3600) }
            throw APIError.from(error)
        }
    }

    func readAccessRequest(_ request: Request, _ context: BasicRequestContext) async throws -> Response {
        let access = try await authorize(request)
        guard let id = context.parameters.get("id"),
              let found = try await vault({ try await gateway.accessRequest(id, clientID: access.access.client.id) }) else { throw APIError.notFound() }
        return try FHIRResponse.json(requestResource(found))
    }

    /// What a client is told of its request: pending or answered, and what the answer granted
    /// (a later revoke shows in the resources, not here) - never whether it was denied, nor
    /// anything else the vault holds.
    func requestResource(_ request: AccessRequest) -> [String: Any] {
        let status = request.status == .pending ? "pending" : "answered"
        return ["id": request.id, "status": status, "requested": request.requested, "expires": request.expires,
                "granted": request.granted.map { "VisionPrescription/\(FHIR.prescriptionResourceID($0))" }]
    }

    // MARK: - Helpers

    func jsonBody(_ request: Request) async throws -> [String: Any] {
        var request = request
        let buffer = try await request.collectBody(upTo: settings.maxBodyBytes)
        guard let object = try? JSONSerialization.jsonObject(with: Data(buffer.readableBytesView)) as? [String: Any] else {
            throw APIError.invalid("the body must be a JSON object")
        }
        return object
    }

    func baseURL(_ request: Request) -> String {
        let scheme = settings.tlsCertificate == nil ? "http" : "https"
        let host = request.head.authority ?? "localhost"
        let safe = host.unicodeScalars.allSatisfy { $0.isASCII && !$0.properties.isWhitespace && !"/?#@\"<>\\".unicodeScalars.contains($0) }
        return "\(scheme)://\(safe && !host.isEmpty ? host : "localhost")"
    }

    /// Runs a vault call, turning its errors into OperationOutcomes.
    func vault<T: Sendable>(_ body: () async throws -> T) async throws -> T {
        do { return try await body() } catch let error as VaultError { throw APIError.from(error) }
    }

    func logRead(_ access: ServedCache.ClientView, prescriptions: [PrescriptionID], attachments: [AttachmentID] = [], detail: String) async {
        guard !prescriptions.isEmpty else { return }
        await gateway.logRead(client: access.access.client.id, prescriptions: prescriptions, attachments: attachments, detail: detail)
    }
}

extension APIError {
    static func from(_ refusal: ClientAuthenticator.Refusal) -> APIError {
        switch refusal {
        case .malformedRecipient: return .invalid("recipient: an age X25519 recipient (age1...)")
        case .throttled(let after): return .throttled("too many attempts; wait a minute", retryAfter: after)
        case .invalid(let why): return .unauthorized(why)
        }
    }
}

extension FHIRResponse {
    /// Plain JSON (the non-FHIR endpoints: authentication, access requests).
    static func json(_ object: [String: Any], status: HTTPResponse.Status = .ok, headers: HTTPFields = [:]) throws -> Response {
        var fields = headers
        fields[.contentType] = "application/json"
        fields[.cacheControl] = "no-store"
        return Response(status: status, headers: fields, body: .init(byteBuffer: try encode(object)))
    }
}

enum Timestamp {
    /// ISO 8601 in UTC to the second, e.g. 2026-11-23T08:06:18Z (a format style, not a new
    /// ISO8601DateFormatter per call: this runs for every read served).
    static func iso(_ date: Date) -> String { date.formatted(.iso8601) }
}
