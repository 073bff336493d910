import Hummingbird
import NIOCore
import RxModel
import RxVault

/// `GET /DocumentReference?related=...`: the attachments of the client's granted prescriptions
/// whose grants include attachments, each pointing to its Binary.
struct DocumentReferenceRoutes {
    let support: RouteSupport

    var collection: RouteCollection<ClientRequestContext> {
        let routes = RouteCollection(context: ClientRequestContext.self)
        routes.get { request, context in try await search(request, context) }
        return routes
    }

    func search(_ request: Request, _ context: ClientRequestContext) async throws -> Response {
        let client = context.view
        var related: String?
        for (name, value) in request.uri.queryParameters {
            guard name == "related" else {
                throw APIError.invalid("unsupported search parameter '\(name)' (supported: related)")
            }
            related =
                value.hasPrefix("VisionPrescription/")
                ? String(value.dropFirst("VisionPrescription/".count)) : String(value)
        }
        let base = support.baseURL(request, context)
        var entries: [JSONValue] = []
        var read: [PrescriptionID] = []
        var attachments: [AttachmentID] = []
        for (record, infos) in try await support.gateway.attachments(related: related, for: client) {
            for info in infos {
                let resourceID = FHIR.attachmentResourceID(info.id)
                let document = FHIR.documentReferenceResource(
                    info, of: record, for: .api, content: .url("\(base)/Binary/\(resourceID)"))
                entries.append(
                    .fields([
                        "fullUrl": .string("\(base)/DocumentReference/\(resourceID)"), "resource": document,
                        "search": .fields(["mode": .string("match")])
                    ]))
                attachments.append(info.id)
            }
            read.append(record.id)
        }
        await support.logRead(
            client, prescriptions: read, attachments: attachments, detail: "api search DocumentReference")
        return FHIRResponse.ok(RouteSupport.bundle("searchset", total: entries.count, entries: entries))
    }
}

/// `GET /Binary/{id}`: an attachment's bytes, streamed chunk by chunk with its own content
/// type; memory stays at a chunk whatever the size and however slowly the client reads.
struct BinaryRoutes {
    let support: RouteSupport

    var collection: RouteCollection<ClientRequestContext> {
        let routes = RouteCollection(context: ClientRequestContext.self)
        routes.get(":id") { _, context in try await read(context) }
        return routes
    }

    func read(_ context: ClientRequestContext) async throws -> Response {
        let gateway = support.gateway
        guard let wanted = context.parameters.get("id"),
            let (handle, opened) = try await gateway.openAttachment(wanted, for: context.view)
        else { throw APIError.notFound() }
        let logger = context.logger
        let body = ResponseBody(contentLength: opened.metadata.size) { writer in
            do {
                while let chunk = try await gateway.nextChunk(handle) {
                    try await writer.write(ByteBuffer(bytes: chunk))
                }
                try await writer.finish(nil)
            } catch {
                await gateway.closeStream(handle)
                logger.error("attachment stream stopped", metadata: ["reason": .string("\(error)")])
                throw error
            }
        }
        return Response(
            status: .ok, headers: [.contentType: opened.metadata.type.mimeType, .contentDisposition: "attachment"],
            body: body)
    }
}
