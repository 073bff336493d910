import Foundation
import HTTPTypes
import Hummingbird
import RxVault

/// An error as a FHIR OperationOutcome with the matching HTTP status (docs/api.md, "Errors").
/// Messages never name a prescription the client was not granted, nor any patient data.
struct APIError: HTTPResponseError {
    let status: HTTPResponse.Status
    /// FHIR issue type: not-found, security, login, invalid, too-costly, throttled, exception...
    let code: String
    let message: String
    var headers: HTTPFields = [:]

    static func notFound(_ what: String = "no such resource") -> APIError { APIError(status: .notFound, code: "not-found", message: what) }
    static func invalid(_ why: String) -> APIError { APIError(status: .badRequest, code: "invalid", message: why) }
    static func unauthorized(_ why: String) -> APIError {
        APIError(status: .unauthorized, code: "login", message: why, headers: [.wwwAuthenticate: "Bearer realm=\"rxvault\""])
    }
    static func forbidden(_ why: String) -> APIError { APIError(status: .forbidden, code: "forbidden", message: why) }
    static func throttled(_ why: String, retryAfter: Int) -> APIError {
        APIError(status: .tooManyRequests, code: "throttled", message: why, headers: [.retryAfter: String(retryAfter)])
    }
    static func internalError(_ why: String) -> APIError { APIError(status: .internalServerError, code: "exception", message: why) }
    /// The vault's file was replaced by one the server cannot accept (another vault, one its key
    /// does not open, an older copy) or removed: the server's log says which, the client only
    /// that it may try again (the server looks again at each request).
    static let fileReplaced = APIError(status: .serviceUnavailable, code: "transient",
                                       message: "the vault's file was replaced and the file now in its place cannot be served; the owner has been told",
                                       headers: [.retryAfter: "5"])

    /// What a vault error looks like to a client: an integrity problem is the server's, not the
    /// client's, and is said without detail (the owner sees it with `rxvault check`).
    static func from(_ error: VaultError) -> APIError {
        switch error {
        case .notFound, .attachmentNotFound, .requestNotFound: return .notFound()
        case .invalidInput(let why): return .invalid(why)
        case .busy: return APIError(status: .serviceUnavailable, code: "transient", message: "the vault is busy; try again",
                                    headers: [.retryAfter: "1"])
        case .integrity: return .internalError("the vault failed an integrity check; the owner has been told")
        default: return .internalError("the request could not be served")
        }
    }

    static func outcome(code: String, message: String, severity: String = "error") -> [String: Any] {
        ["resourceType": "OperationOutcome", "issue": [["severity": severity, "code": code, "diagnostics": message]]]
    }

    func response(from request: Request, context: some RequestContext) throws -> Response {
        var fields = headers
        fields[.contentType] = FHIRResponse.contentType
        let body = (try? FHIRResponse.encode(Self.outcome(code: code, message: message))) ?? ByteBuffer()
        return Response(status: status, headers: fields, body: .init(byteBuffer: body))
    }
}

/// FHIR JSON responses.
enum FHIRResponse {
    static let contentType = "application/fhir+json; charset=utf-8"

    static func encode(_ resource: [String: Any]) throws -> ByteBuffer {
        ByteBuffer(bytes: try JSONSerialization.data(withJSONObject: resource, options: [.sortedKeys, .withoutEscapingSlashes]))
    }

    static func ok(_ resource: [String: Any], status: HTTPResponse.Status = .ok) throws -> Response {
        Response(status: status, headers: [.contentType: contentType], body: .init(byteBuffer: try encode(resource)))
    }
}
