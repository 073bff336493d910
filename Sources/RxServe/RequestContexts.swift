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
    let granted: [PrescriptionID]

    init(access: ClientAccess, prescriptions: [String: PrescriptionID]) {
        self.access = access
        self.prescriptions = prescriptions
        granted = access.grants.keys.sorted { $0.hex < $1.hex }
    }
}

/// The context of every request: Hummingbird's, and the client its bearer token stands for
/// once `ClientAuthentication` has looked (nil: no token, or not a valid one).
struct ServeRequestContext: RequestContext {
    var coreContext: CoreRequestContextStorage
    var clientID: ClientID?

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        clientID = nil
    }
}

/// The context of the routes that need a client (everything but `/metadata` and `/auth`):
/// made from `ServeRequestContext` only when a client was authenticated, so a handler cannot
/// run without one. Its grants are read by the route in its own turn of the gateway
/// (`RouteSupport.view`), or checked inside the read itself (`readNewest`), so the most frequent
/// request takes one turn, not two.
struct ClientRequestContext: ChildRequestContext {
    var coreContext: CoreRequestContextStorage
    let clientID: ClientID

    init(context: ServeRequestContext) throws {
        guard let clientID = context.clientID else { throw APIError.tokenNeeded }
        coreContext = context.coreContext
        self.clientID = clientID
    }
}

/// Puts the client of the request's bearer token into the context (a check of the token in
/// memory; the vault is not touched). A request without a valid token goes on without one (the
/// client routes' context refuses it with 401); a token of a client removed since is refused
/// where its grants are read (a revoke, a removal or an expiry counts at the next request).
struct ClientAuthentication: RouterMiddleware {
    typealias Context = ServeRequestContext
    let authenticator: ClientAuthenticator

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        guard let header = request.headers[.authorization], let token = Self.bearerToken(header),
            let clientID = authenticator.client(bearer: token)
        else { return try await next(request, context) }
        var context = context
        context.clientID = clientID
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
