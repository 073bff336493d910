import Foundation
import Hummingbird
import RxCrypto
import RxModel
import RxVault

/// `POST /auth/challenge` and `POST /auth/token` (docs/api.md, "Authentication"): proof of
/// possession of a client's age identity, then a bearer token. No token needed, of course.
struct AuthRoutes {
    let support: RouteSupport
    let authenticator: ClientAuthenticator

    var collection: RouteCollection<ServeRequestContext> {
        let routes = RouteCollection(context: ServeRequestContext.self)
        routes.post("challenge") { request, context in try await challenge(request, context) }
        routes.post("token") { request, context in try await token(request, context) }
        return routes
    }

    func challenge(_ request: Request, _ context: ServeRequestContext) async throws -> Response {
        let body = try await support.jsonBody(request)
        guard let recipient = body.string("recipient") else {
            throw APIError.invalid("send {\"recipient\": \"age1...\"}")
        }
        do {
            let (id, age, expires) = try await authenticator.challenge(recipient: recipient, from: context.source)
            return FHIRResponse.json(
                .fields(["age": .string(age), "challenge": .string(id), "expires": .string(Timestamp.iso(expires))]))
        } catch let refusal as ClientAuthenticator.Refusal {
            throw APIError.from(refusal)
        }
    }

    func token(_ request: Request, _ context: ServeRequestContext) async throws -> Response {
        let body = try await support.jsonBody(request)
        guard let id = body.string("challenge"), let response = body.string("response"), response.utf8.count <= 256
        else {
            throw APIError.invalid("send {\"challenge\": \"...\", \"response\": \"<the decrypted secret>\"}")
        }
        do {
            let gateway = support.gateway
            let (token, clientID, expires) = try await authenticator.token(
                challenge: id, response: response, from: context.source
            ) { publicKey in
                try await gateway.clientID(publicKey: publicKey)
            }
            context.logger.info("client authenticated", metadata: ["client": .string(clientID.short)])
            return FHIRResponse.json(
                .fields([
                    "access_token": .string(token), "client": .string(clientID.hex),
                    "expires_in": .int(Int(expires.timeIntervalSince(authenticator.now()).rounded())),
                    "token_type": .string("Bearer")
                ]))
        } catch let refusal as ClientAuthenticator.Refusal {
            context.logger.notice("authentication failed")
            throw APIError.from(refusal)
        }
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
