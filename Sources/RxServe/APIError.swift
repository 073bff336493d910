import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import RxModel
import RxVault

/// An error as a FHIR OperationOutcome with the matching HTTP status (docs/api.md, "Errors").
/// Messages never name a prescription the client was not granted, nor any patient data.
struct APIError: HTTPResponseError {
    let status: HTTPResponse.Status
    /// FHIR issue type: not-found, security, login, invalid, too-costly, throttled, exception...
    let code: String
    let message: String
    var headers: HTTPFields = [:]

    static func notFound(_ what: String = "no such resource") -> APIError {
        APIError(status: .notFound, code: "not-found", message: what)
    }
    static func invalid(_ why: String) -> APIError { APIError(status: .badRequest, code: "invalid", message: why) }
    static func unauthorized(_ why: String) -> APIError {
        APIError(
            status: .unauthorized, code: "login", message: why, headers: [.wwwAuthenticate: "Bearer realm=\"rxvault\""])
    }
    /// A path the API has, asked with a method it does not take there (RFC 9110: with `Allow`).
    static func methodNotAllowed(_ method: HTTPRequest.Method, allowed: [HTTPRequest.Method]) -> APIError {
        let list = allowed.map(\.rawValue).joined(separator: ", ")
        return APIError(
            status: .methodNotAllowed, code: "not-supported",
            message: "\(method.rawValue) is not supported here; use \(list)",
            headers: [.allow: list])
    }
    static func forbidden(_ why: String) -> APIError { APIError(status: .forbidden, code: "forbidden", message: why) }
    static func throttled(_ why: String, retryAfter: Int) -> APIError {
        APIError(status: .tooManyRequests, code: "throttled", message: why, headers: [.retryAfter: String(retryAfter)])
    }
    static func internalError(_ why: String) -> APIError {
        APIError(status: .internalServerError, code: "exception", message: why)
    }
    /// The vault's file was replaced by one the server cannot accept (another vault, one its key
    /// does not open, an older copy) or removed: the server's log says which, the client only
    /// that it may try again (the server looks again at each request).
    static let fileReplaced = APIError(
        status: .serviceUnavailable, code: "transient",
        message:
            "the vault's file was replaced and the file now in its place cannot be served; the owner has been told",
        headers: [.retryAfter: "5"])

    /// No token, or one that is unknown or expired.
    static let tokenNeeded = APIError.unauthorized(
        "a valid bearer token is needed (POST /auth/challenge, then /auth/token)")
    /// A token of a client the owner removed since.
    static let unregistered = APIError.unauthorized("this client is no longer registered")

    /// What a vault error looks like to a client: an integrity problem is the server's, not the
    /// client's, and is said without detail (the owner sees it with `rxvault check`).
    static func from(_ error: VaultError) -> APIError {
        switch error {
        case .notFound, .attachmentNotFound, .requestNotFound: return .notFound()
        case .invalidInput(let why): return .invalid(why)
        case .busy:
            return APIError(
                status: .serviceUnavailable, code: "transient", message: "the vault is busy; try again",
                headers: [.retryAfter: "1"])
        case .unavailable:
            return APIError(
                status: .serviceUnavailable, code: "transient",
                message: "the vault's database cannot be reached; try again",
                headers: [.retryAfter: "5"])
        case .integrity: return .internalError("the vault failed an integrity check; the owner has been told")
        default: return .internalError("the request could not be served")
        }
    }

    /// Hummingbird's own errors (a path no route has, a body over the limit) as what a client
    /// is told of them: an OperationOutcome too. Errors that are
    /// not HTTP answers at all (the parser refusing a request mid-body) are not mapped: the
    /// connection closes, as a client's malformed request deserves (`OperationOutcomes`).
    static func from(_ error: any HTTPResponseError) -> APIError {
        if let error = error as? APIError { return error }
        let status = error.status
        let code =
            switch status.code {
            case 400: "invalid"
            case 401: "login"
            case 404: "not-found"
            case 413: "too-costly"
            case 429: "throttled"
            case 500...: "exception"
            default: "processing"
            }
        return APIError(status: status, code: code, message: status.reasonPhrase.lowercased())
    }

    static func outcome(code: String, message: String, severity: String = "error") -> JSONValue {
        .fields([
            "issue": .array([
                .fields(["code": .string(code), "diagnostics": .string(message), "severity": .string(severity)])
            ]),
            "resourceType": .string("OperationOutcome")
        ])
    }

    func response(from request: Request, context: some RequestContext) throws -> Response {
        var fields = headers
        fields[.contentType] = FHIRResponse.contentType
        return Response(
            status: status, headers: fields,
            body: .init(byteBuffer: FHIRResponse.encode(Self.outcome(code: code, message: message))))
    }
}

/// Responses: FHIR resources and Bundles in the API's rendering (`FHIR.Rendering.api`: the
/// export's writer, compact), and the plain JSON of the endpoints that are not FHIR.
enum FHIRResponse {
    static let contentType = "application/fhir+json; charset=utf-8"

    static func encode(_ value: JSONValue) -> ByteBuffer {
        ByteBuffer(bytes: FHIR.Rendering.api.bytes(value))
    }

    static func ok(_ resource: JSONValue, status: HTTPResponse.Status = .ok) -> Response {
        Response(status: status, headers: [.contentType: contentType], body: .init(byteBuffer: encode(resource)))
    }

    /// Plain JSON (the non-FHIR endpoints: authentication, access requests), never cached.
    static func json(_ object: JSONValue, status: HTTPResponse.Status = .ok, headers: HTTPFields = [:]) -> Response {
        var fields = headers
        fields[.contentType] = "application/json"
        fields[.cacheControl] = "no-store"
        return Response(status: status, headers: fields, body: .init(byteBuffer: encode(object)))
    }
}
