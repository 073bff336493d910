import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOConcurrencyHelpers
import NIOCore
import RxVault

/// The context of every request: Hummingbird's, and what the client its bearer token stands for
/// may read, once `ClientAuthentication` has looked (nil: no token, or not a valid one).
struct ServeRequestContext: RequestContext {
    var coreContext: CoreRequestContextStorage
    var view: ClientView?
    /// The peer's address, kept as it is: only the login routes turn it into a `source`, so
    /// the reads that make most requests do not pay for it.
    let remoteAddress: SocketAddress?
    /// The server's own address the connection arrived at (`LinkBase`).
    let localAddress: SocketAddress?
    /// Who is asking, for the limits on what a stranger can cost others.
    var source: RequestSource { RequestSource(remoteAddress) }

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        view = nil
        remoteAddress = source.channel.remoteAddress
        localAddress = source.channel.localAddress
    }
}

/// The two ends of a request's connection, which decide where its answer's links point
/// (`LinkBase`): never a header alone.
protocol ConnectionEnds {
    var remoteAddress: SocketAddress? { get }
    var localAddress: SocketAddress? { get }
}

extension ServeRequestContext: ConnectionEnds {}
extension ClientRequestContext: ConnectionEnds {}

/// The context of the routes that need a client (everything but `/metadata` and `/auth`):
/// made from `ServeRequestContext` only when a client was authenticated, so a handler cannot
/// run without one. It carries the client's view, resolved once for the request by
/// `ClientAuthentication`: the one thing the gateway's reads take (`VaultGateway`).
struct ClientRequestContext: ChildRequestContext {
    var coreContext: CoreRequestContextStorage
    let view: ClientView
    let remoteAddress: SocketAddress?
    let localAddress: SocketAddress?

    var clientID: ClientID { view.clientID }

    init(context: ServeRequestContext) throws {
        guard let view = context.view else { throw APIError.tokenNeeded }
        coreContext = context.coreContext
        self.view = view
        remoteAddress = context.remoteAddress
        localAddress = context.localAddress
    }
}

/// Resolves what the client of the request's bearer token may read now (`VaultGateway.view`, one
/// turn of the gateway) and puts it into the context, once per request. A request without a
/// valid token goes on without one (the client routes' context refuses it with 401); a token of
/// a client removed since is refused here with 401 (a revoke, a removal or an expiry counts at
/// the next request). Only on the client routes: `/metadata` and `/auth` never touch the vault.
struct ClientAuthentication: RouterMiddleware {
    typealias Context = ServeRequestContext
    let authenticator: ClientAuthenticator
    let gateway: VaultGateway

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        guard let header = request.headers[.authorization], let token = Self.bearerToken(header),
            let client = authenticator.authenticated(bearer: token)
        else { return try await next(request, context) }
        var context = context
        context.view = try await gateway.view(for: client)
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
/// that reached this far, and Hummingbird's (a path no route has, a method a path does not take,
/// a body over the limit).
struct OperationOutcomes: RouterMiddleware {
    typealias Context = ServeRequestContext
    /// The router's routes, to tell a path no route has (404) from a method this path does not
    /// take (405, with `Allow`).
    let routes: RouteTable

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        do {
            return try await next(request, context)
        } catch let error as VaultError {
            throw APIError.from(error)
        } catch let error as any HTTPResponseError {
            // Hummingbird's own 404 (no route matched), not a route's "no such resource".
            if error.status == .notFound, !(error is APIError) {
                let allowed = routes.methods(at: request.uri.path)
                if !allowed.isEmpty { throw APIError.methodNotAllowed(request.method, allowed: allowed) }
            }
            throw APIError.from(error)
        }
        // Anything else (a request the HTTP parser refused mid-body, a connection gone) goes on
        // as it is: the server closes the connection rather than answer 500 for a client's mistake.
    }
}

/// The paths and methods the router has, set once when the routes are added.
final class RouteTable: Sendable {
    private struct Route: Sendable {
        let components: [RouterPath.Element]
        let method: HTTPRequest.Method
    }
    private let routes = NIOLockedValueBox<[Route]>([])

    func set(_ routes: [Router<ServeRequestContext>.RouteDescription]) {
        let table = routes.map { Route(components: $0.path.components, method: $0.method) }
        self.routes.withLockedValue { $0 = table }
    }

    /// The methods the routes whose path matches `path` take, in a stable order.
    func methods(at path: String) -> [HTTPRequest.Method] {
        let parts = path.split(separator: "/")
        let matching = routes.withLockedValue { routes in
            routes.filter { route in
                route.components.count == parts.count
                    && zip(route.components, parts).allSatisfy { element, part in element ~= part }
            }
        }
        return Array(Set(matching.map(\.method.rawValue))).sorted().compactMap { HTTPRequest.Method($0) }
    }
}

/// Headers every answer carries, errors included: `X-Content-Type-Options: nosniff`, so a
/// browser takes a response for the type it declares (an attachment is never sniffed into
/// HTML), a Content-Security-Policy that sandboxes whatever a browser makes of a response and
/// lets it load nothing, and `Cache-Control: no-store`: resources, Bundles and attachments are
/// patient data, tokens are credentials, and an error may name an id the client asked about, so
/// no browser, proxy or CDN between the server and a client may keep a copy (one rule for every
/// answer, so no route can forget it). Outermost but for the log line, so errors are answered here.
struct ProtectiveHeaders: RouterMiddleware {
    typealias Context = ServeRequestContext
    static let noSniff = HTTPField.Name("X-Content-Type-Options")!
    static let policy = "default-src 'none'; frame-ancestors 'none'; sandbox"

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        var response: Response
        do {
            response = try await next(request, context)
        } catch let error as any HTTPResponseError {
            response = try error.response(from: request, context: context)
        }
        response.headers[Self.noSniff] = "nosniff"
        response.headers[.contentSecurityPolicy] = Self.policy
        response.headers[.cacheControl] = "no-store"
        return response
    }
}

/// One line per request on stderr: method, path (without the query: it may carry a patient
/// reference), status and time in milliseconds (`GET /metadata 200 0.065 ms`). Never a header
/// (tokens) or a body.
struct RequestLogging: RouterMiddleware {
    typealias Context = ServeRequestContext

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        let start = ContinuousClock.now
        do {
            let response = try await next(request, context)
            context.logger.info(
                "\(request.method) \(request.uri.path) \(response.status.code) \(Self.milliseconds(ContinuousClock.now - start))"
            )
            return response
        } catch let error as HTTPResponseError {
            context.logger.info(
                "\(request.method) \(request.uri.path) \(error.status.code) \(Self.milliseconds(ContinuousClock.now - start))"
            )
            throw error
        }
    }

    /// "0.065 ms", "1250.000 ms": milliseconds to three decimals, in integers (a Duration prints
    /// itself as "6.5286e-05 seconds", which no one reads at a glance or sorts).
    static func milliseconds(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        let micro = max(0, seconds) * 1_000_000 + max(0, attoseconds) / 1_000_000_000_000
        let fraction = String(micro % 1000)
        return "\(micro / 1000).\(String(repeating: "0", count: 3 - fraction.count))\(fraction) ms"
    }
}
