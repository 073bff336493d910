import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import RxCrypto
import Testing

@testable import RxServe

/// Requests to the in-process API as a client app makes them.
struct APIClient: Sendable {
    let client: any TestClientProtocol
    let api: ServeAPI
    let vault: ServedVault

    struct Answer: Sendable {
        let status: HTTPResponse.Status
        let headers: HTTPFields
        let body: [UInt8]

        var code: Int { status.code }
        var text: String { String(decoding: body, as: UTF8.self) }
        var json: [String: Any] { (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any] ?? [:] }
        var contentType: String? { headers[.contentType] }

        /// The resources of a Bundle's entries.
        var resources: [[String: Any]] {
            (json["entry"] as? [[String: Any]] ?? []).compactMap { $0["resource"] as? [String: Any] }
        }
        var total: Int? { json["total"] as? Int }

        /// An OperationOutcome's issue code (nil when the body is not one).
        var outcome: String? {
            guard json["resourceType"] as? String == "OperationOutcome" else { return nil }
            return (json["issue"] as? [[String: Any]])?.first?["code"] as? String
        }
    }

    func request(
        _ method: HTTPRequest.Method, _ uri: String, token: String? = nil, body: String? = nil,
        headers extra: HTTPFields = [:]
    ) async throws -> Answer {
        var headers = extra
        if let token { headers[.authorization] = "Bearer \(token)" }
        if body != nil { headers[.contentType] = "application/json" }
        let response = try await client.execute(
            uri: uri, method: method, headers: headers, body: body.map { ByteBuffer(string: $0) })
        return Answer(status: response.status, headers: response.headers, body: Array(response.body.readableBytesView))
    }

    func get(_ uri: String, token: String? = nil) async throws -> Answer {
        try await request(.get, uri, token: token)
    }

    func post(_ uri: String, token: String? = nil, body: String) async throws -> Answer {
        try await request(.post, uri, token: token, body: body)
    }

    /// A challenge for the client's recipient, opened with its identity: (challenge id, secret).
    func challenge(_ name: String) async throws -> (String, String) {
        let identity = try vault.identity(name)
        let answer = try await post("/auth/challenge", body: #"{"recipient": "\#(identity.recipient)"}"#)
        #expect(answer.status == .ok, "\(answer.text)")
        let id = try #require(answer.json["challenge"] as? String)
        let armored = try #require(answer.json["age"] as? String)
        let secret = try AgeFile.decrypt(Array(armored.utf8), with: .identities([identity]))
        return (id, String(decoding: secret, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
    }

    /// A bearer token for the client, as docs/api.md has a client get one.
    func token(_ name: String) async throws -> String {
        let (id, secret) = try await challenge(name)
        let answer = try await post("/auth/token", body: #"{"challenge": "\#(id)", "response": "\#(secret)"}"#)
        #expect(answer.status == .ok, "\(answer.text)")
        return try #require(answer.json["access_token"] as? String)
    }

    /// The server's audit write (each second in `rxvault serve`), now.
    func flush() async throws { try await api.flush() }
}
