import Foundation
import Hummingbird
import Logging
import NIOCore
import RxModel
import RxVault

/// The API of `rxvault serve` (docs/api.md): one route collection per resource, behind one
/// gateway to the vault. Authorization is the owner's grants as they are at each request:
/// `ClientAuthentication` puts the client's view in the request's context, `ClientRequestContext`
/// is the only context the client routes run in, and every read the gateway offers takes the view
/// and answers only what it grants; anything not granted is answered exactly like something that
/// does not exist.
///
/// Built by `RxServer.run` for the process, and by RxServeTests in-process (HummingbirdTesting).
struct ServeAPI: Sendable {
    let gateway: VaultGateway
    let writer: AuditWriter
    let authenticator: ClientAuthenticator
    let settings: ServeSettings

    /// Serves `vault` (the owner's open vault); its served reads are written on a connection
    /// of their own (`AuditWriter`).
    init(vault: sending Vault, settings: ServeSettings, logger: Logger) throws(VaultError) {
        writer = AuditWriter(
            vault: try vault.anotherConnection(busyTimeoutMilliseconds: settings.busyTimeoutMilliseconds),
            ownerWrites: settings.ownerWrites)
        authenticator = ClientAuthenticator(settings: settings, sessionKey: try vault.apiSessionKey())
        let stampReader = try vault.stateStampReader(busyTimeoutMilliseconds: settings.busyTimeoutMilliseconds)
        gateway = VaultGateway(
            vault: vault, writer: writer, stampReader: stampReader,
            busyTimeoutMilliseconds: settings.busyTimeoutMilliseconds, logger: logger)
        self.settings = settings
    }

    func router() -> Router<ServeRequestContext> {
        let router = Router(context: ServeRequestContext.self)
        let routes = RouteTable()
        router.add(middleware: RequestLogging())
        router.add(middleware: ProtectiveHeaders())
        router.add(middleware: OperationOutcomes(routes: routes))
        let support = RouteSupport(gateway: gateway, settings: settings)
        router.addRoutes(MetadataRoutes().collection, atPath: "metadata")
        router.get("openapi.json") { _, _ in
            Response(
                status: .ok, headers: [.contentType: "application/json"],
                body: .init(byteBuffer: ByteBuffer(string: OpenAPIDocument.text)))
        }
        router.addRoutes(AuthRoutes(support: support, authenticator: authenticator).collection, atPath: "auth")

        let clients = router.group()
            .add(middleware: ClientAuthentication(authenticator: authenticator, gateway: gateway))
            .group(context: ClientRequestContext.self)
        clients.addRoutes(VisionPrescriptionRoutes(support: support).collection, atPath: "VisionPrescription")
        clients.addRoutes(PatientRoutes(support: support).collection, atPath: "Patient")
        clients.addRoutes(ObservationRoutes(support: support).collection, atPath: "Observation")
        clients.addRoutes(DocumentReferenceRoutes(support: support).collection, atPath: "DocumentReference")
        clients.addRoutes(BinaryRoutes(support: support).collection, atPath: "Binary")
        clients.addRoutes(AccessRequestRoutes(support: support).collection, atPath: "access-requests")
        routes.set(router.routes)
        return router
    }

    /// Writes the reads served so far (one entry per distinct read); on failure they wait for
    /// the next write. First a look at the file, so one replaced while no request came is let go
    /// of and the reads go to the new one; while none can be served, they wait.
    func flush() async throws {
        await gateway.followFile()
        let batch = await gateway.takeReads()
        guard !batch.events.isEmpty else { return }
        do {
            switch try await writer.write(batch) {
            case .written(let write): await gateway.carry(write)
            case .fileReplaced: await gateway.requeue(batch)
            }
        } catch {
            await gateway.requeue(batch)
            throw error
        }
    }
}

/// What the route collections share: the gateway (their one way to the vault), the settings,
/// and reading requests and logging reads the same way.
struct RouteSupport: Sendable {
    let gateway: VaultGateway
    let settings: ServeSettings
    let links: LinkBase

    init(gateway: VaultGateway, settings: ServeSettings) {
        self.gateway = gateway
        self.settings = settings
        links = LinkBase(settings: settings)
    }

    /// The request's body as a JSON object (at most `maxBodyBytes`, else 413), read with
    /// rxvault's strict reader.
    func jsonBody(_ request: Request) async throws -> JSONBody {
        var request = request
        let buffer = try await request.collectBody(upTo: settings.maxBodyBytes)
        guard case .object(let members)? = try? JSONTree(parsing: buffer.readableBytesView) else {
            throw APIError.invalid("the body must be a JSON object")
        }
        return JSONBody(members: members)
    }

    /// Where the answer's absolute links point (`LinkBase`): `--public-url`, a trusted proxy's
    /// forwarded scheme and host, or the server's own address; never the request's `Host` alone.
    func baseURL(_ request: Request, _ context: some ConnectionEnds) -> String {
        links.base(request, local: context.localAddress, remote: context.remoteAddress)
    }

    /// Queues the read for the owner's audit log (nothing when nothing was read).
    func logRead(
        _ client: ClientView, prescriptions: [PrescriptionID], attachments: [AttachmentID] = [], detail: String
    ) async {
        await gateway.logRead(client, prescriptions: prescriptions, attachments: attachments, detail: detail)
    }

    /// A searchset or history Bundle.
    static func bundle(_ type: String, total: Int, links: [JSONValue]? = nil, entries: [JSONValue]) -> JSONValue {
        .fields([
            "entry": .array(entries), "link": links.map { .array($0) }, "resourceType": .string("Bundle"),
            "total": .int(total), "type": .string(type)
        ])
    }
}

/// A JSON object a client sent; a member that is missing or of another type reads as nil.
struct JSONBody {
    let members: [JSONMember]

    /// The first member of that name (as rxvault's reader and JSONDecoder read repeated keys).
    subscript(key: String) -> JSONTree? { members.first { $0.key == key }?.value }

    func string(_ key: String) -> String? {
        if case .string(let text)? = self[key] { return text }
        return nil
    }
}

enum Timestamp {
    /// ISO 8601 in UTC to the second, e.g. 2026-11-23T08:06:18Z (a format style, not a new
    /// ISO8601DateFormatter per call: this runs for every read served).
    static func iso(_ date: Date) -> String { date.formatted(.iso8601) }
}
