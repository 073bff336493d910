import Foundation
import HTTPTypes
import Hummingbird
import Logging
import RxVault

/// What a client may read now: its live grants, and the FHIR resource id of each granted
/// prescription (a UUID named by its id). Worked out per vault state (`ServedCache`).
struct ClientView: Sendable {
    let access: ClientAccess
    let prescriptions: [String: PrescriptionID]

    var clientID: ClientID { access.client.id }

    /// The granted prescriptions, in one order (by id) for every walk over them.
    var granted: [PrescriptionID] { access.grants.keys.sorted { $0.hex < $1.hex } }
}

/// The context of every request: Hummingbird's, and the client its bearer token stands for
/// once `ClientAuthentication` has looked (nil: no token, or not a valid one).
struct ServeRequestContext: RequestContext {
    var coreContext: CoreRequestContextStorage
    var client: ClientView?

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        client = nil
    }
}

/// The context of the routes that need a client (everything but `/metadata` and `/auth`):
/// made from `ServeRequestContext` only when a client was authenticated, so a handler cannot
/// run without one, and holds the client's grants as they were at this request.
struct ClientRequestContext: ChildRequestContext {
    var coreContext: CoreRequestContextStorage
    let client: ClientView

    init(context: ServeRequestContext) throws {
        guard let client = context.client else { throw APIError.tokenNeeded }
        coreContext = context.coreContext
        self.client = client
    }
}

/// Puts the client of the request's bearer token, with its grants as they are now (a revoke, a
/// removal or an expiry counts at the next request), into the context. A request without a
/// valid token goes on without one (the client routes' context refuses it with 401); a token
/// of a client removed since is refused here.
struct ClientAuthentication: RouterMiddleware {
    typealias Context = ServeRequestContext
    let gateway: VaultGateway
    let authenticator: ClientAuthenticator

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        guard let header = request.headers[.authorization], let token = Self.bearerToken(header),
            let clientID = authenticator.client(bearer: token)
        else { return try await next(request, context) }
        guard let view = try await gateway.access(clientID: clientID) else { throw APIError.unregistered }
        var context = context
        context.client = view
        return try await next(request, context)
    }

    /// The token of an `Authorization: Bearer <token>` value (the scheme in any case, spaces and
    /// tabs around the token ignored); nil for any other scheme. Byte by byte: every request.
    static func bearerToken(_ header: String) -> String? {
        let bytes = Array(header.utf8)
        let scheme = Array("bearer".utf8)
        guard bytes.count > scheme.count + 1, zip(bytes, scheme).allSatisfy({ $0 | 0x20 == $1 }),
            bytes[scheme.count] == 0x20
        else { return nil }
        var start = scheme.count + 1
        var end = bytes.count
        while start < end, bytes[start] == 0x20 || bytes[start] == 0x09 { start += 1 }
        while end > start, bytes[end - 1] == 0x20 || bytes[end - 1] == 0x09 { end -= 1 }
        return String(decoding: bytes[start..<end], as: UTF8.self)
    }
}

/// Every error as an OperationOutcome (docs/api.md, "Errors"): the routes' own, a vault error
/// that reached this far, and Hummingbird's (a path no route has, a body over the limit).
struct OperationOutcomes: RouterMiddleware {
    typealias Context = ServeRequestContext

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        do {
            return try await next(request, context)
        } catch let error as APIError {
            throw error
        } catch let error as VaultError {
            throw APIError.from(error)
        } catch let error as any HTTPResponseError {
            throw APIError.from(error)
        }
        // Anything else (a request the HTTP parser refused mid-body, a connection gone) goes on
        // as it is: the server closes the connection rather than answer 500 for a client's mistake.
    }
}

/// One line per request on stderr: method, path (without the query: it may carry a patient
/// reference), status and time. Never a header (tokens) or a body.
struct RequestLogging: RouterMiddleware {
    typealias Context = ServeRequestContext

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        let start = ContinuousClock.now
        do {
            let response = try await next(request, context)
            context.logger.info(
                "\(request.method) \(request.uri.path) \(response.status.code) \(ContinuousClock.now - start)")
            return response
        } catch let error as HTTPResponseError {
            context.logger.info(
                "\(request.method) \(request.uri.path) \(error.status.code) \(ContinuousClock.now - start)")
            throw error
        }
    }
}
