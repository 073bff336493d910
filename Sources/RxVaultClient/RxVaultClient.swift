import Foundation
import RxCrypto

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A client app's side of `rxvault serve` (docs/api.md), in Swift, where the apps that read vision
/// prescriptions live (HealthKit's, CareKit's): it proves it holds its age identity, keeps the
/// bearer token and logs in again when it runs out, follows search pages, and reads the resources
/// the owner granted it. On URLSession: TCP (`http://127.0.0.1:8080`, or `https://` with the
/// server's certificate trusted); the Unix socket is for curl and the Python reference client.
///
///     let client = try RxVaultClient(baseURL: URL(string: "https://rx.example:8443")!, identity: keyFileText)
///     let changed = try await client.search(.init(lastUpdatedSince: "2026-11-01"))
public actor RxVaultClient {
    public let baseURL: URL
    private let identity: AgeIdentity
    private let session: URLSession
    private var token: String?

    /// `identity`: the text of an age identity file (its `AGE-SECRET-KEY-1...` line; comments
    /// are skipped).
    public init(baseURL: URL, identity: String, session: URLSession = .shared) throws(RxVaultClientError) {
        guard
            let key = identity.split(whereSeparator: \.isNewline).lazy.compactMap({ AgeIdentity(line: String($0)) })
                .first
        else { throw .identity("no AGE-SECRET-KEY-1 line in the identity") }
        self.baseURL = baseURL
        self.identity = key
        self.session = session
    }

    // MARK: - Reading

    /// `GET /VisionPrescription?...`, every page: the granted prescriptions that match. A page
    /// link already followed (or the page's own `self`) ends the walk: a server whose `next` is
    /// a page it sent before would otherwise be asked for it forever.
    public func search(_ query: PrescriptionQuery = PrescriptionQuery()) async throws -> [VisionPrescription] {
        var next: String? = "/VisionPrescription" + query.queryString
        var followed: Set<String> = []
        var found: [VisionPrescription] = []
        while let path = next, followed.insert(path).inserted {
            let bundle: FHIRBundle<VisionPrescription> = try await get(path)
            for link in bundle.link ?? [] where link.relation == "self" { followed.insert(Self.pathAndQuery(link.url)) }
            found += bundle.entry?.filter { $0.search?.mode != "include" }.compactMap(\.resource) ?? []
            next = bundle.link?.first { $0.relation == "next" }.map { Self.pathAndQuery($0.url) }
        }
        return found
    }

    /// `GET /VisionPrescription/{id}`: the prescription as it is now.
    public func prescription(_ id: String) async throws -> VisionPrescription {
        try await get("/VisionPrescription/\(Self.escaped(id))")
    }

    /// `GET /VisionPrescription/{id}/_history`: the versions the grant covers, newest first.
    public func history(_ id: String) async throws -> [VisionPrescription] {
        let bundle: FHIRBundle<VisionPrescription> = try await get("/VisionPrescription/\(Self.escaped(id))/_history")
        return bundle.entry?.compactMap(\.resource) ?? []
    }

    /// `GET /DocumentReference?related=...`: the attachments of a prescription the grant includes.
    public func attachments(of id: String) async throws -> [DocumentReference] {
        let related = Self.escaped("VisionPrescription/\(id)")
        let bundle: FHIRBundle<DocumentReference> = try await get("/DocumentReference?related=\(related)")
        return bundle.entry?.compactMap(\.resource) ?? []
    }

    /// `GET /Binary/{id}`: an attachment's bytes and content type.
    public func download(_ binaryID: String) async throws -> (data: Data, contentType: String) {
        let (data, response) = try await send("GET", "/Binary/\(Self.escaped(binaryID))", body: nil)
        return (data, response.value(forHTTPHeaderField: "Content-Type") ?? "application/octet-stream")
    }

    /// `POST /access-requests`: asks the owner for prescriptions.
    public func requestAccess(reason: String, patient: String? = nil, kinds: [String] = []) async throws
        -> AccessRequest
    {
        var body: [String: Any] = ["reason": reason]
        if let patient { body["patient"] = patient }
        if !kinds.isEmpty { body["kinds"] = kinds }
        let (data, _) = try await send(
            "POST", "/access-requests", body: try JSONSerialization.data(withJSONObject: body))
        return try Self.decode(data)
    }

    /// `GET /access-requests/{id}`: pending, or answered with what was granted.
    public func accessRequest(_ id: String) async throws -> AccessRequest {
        try await get("/access-requests/\(Self.escaped(id))")
    }

    // MARK: - Logging in and sending

    /// Proves the identity: a challenge (an age file only the identity opens), answered for a
    /// bearer token. Called by the requests as needed; call it to learn early that the key works.
    public func authenticate() async throws {
        let challengeBody = try JSONSerialization.data(withJSONObject: ["recipient": identity.recipient.description])
        let (challengeData, _) = try await send("POST", "/auth/challenge", body: challengeBody, authorized: false)
        let challenge: Challenge = try Self.decode(challengeData)
        let secret: [UInt8]
        do {
            secret = try AgeFile.decrypt(Array(challenge.age.utf8), with: .identities([identity]))
        } catch {
            throw RxVaultClientError.identity("the challenge does not open with this identity: \(error)")
        }
        let answer = String(decoding: secret, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        let tokenBody = try JSONSerialization.data(withJSONObject: [
            "challenge": challenge.challenge, "response": answer
        ])
        let (tokenData, _) = try await send("POST", "/auth/token", body: tokenBody, authorized: false)
        token = (try Self.decode(tokenData) as TokenAnswer).access_token
    }

    private func get<Value: Decodable>(_ path: String) async throws -> Value {
        try Self.decode(try await send("GET", path, body: nil).0)
    }

    /// One request; with a token (logging in first, and once more on a 401: tokens last 15 minutes).
    private func send(_ method: String, _ path: String, body: Data?, authorized: Bool = true) async throws
        -> (Data, HTTPURLResponse)
    {
        for attempt in 0..<2 {
            if authorized && token == nil { try await authenticate() }
            guard let url = URL(string: path, relativeTo: baseURL) else { throw RxVaultClientError.url(path) }
            var request = URLRequest(url: url)
            request.httpMethod = method
            request.setValue("application/fhir+json, application/json", forHTTPHeaderField: "Accept")
            if let body {
                request.httpBody = body
                request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            }
            if authorized, let token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
            let (data, response) = try await session.data(for: request)
            guard let http = response as? HTTPURLResponse else { throw RxVaultClientError.url(path) }
            if http.statusCode == 401 && authorized && attempt == 0 {
                token = nil
                continue
            }
            guard (200..<300).contains(http.statusCode) else {
                throw RxVaultClientError.http(status: http.statusCode, outcome: Self.outcome(data))
            }
            return (data, http)
        }
        throw RxVaultClientError.http(status: 401, outcome: "the server refused a fresh token")
    }

    static func decode<Value: Decodable>(_ data: Data) throws -> Value {
        do { return try JSONDecoder().decode(Value.self, from: data) } catch {
            throw RxVaultClientError.response("not the document the API sends: \(error)")
        }
    }

    /// The `diagnostics` of an OperationOutcome (what the server says went wrong).
    static func outcome(_ data: Data) -> String {
        struct Outcome: Decodable {
            struct Issue: Decodable {
                let code: String?
                let diagnostics: String?
            }
            let issue: [Issue]?
        }
        let issue = (try? JSONDecoder().decode(Outcome.self, from: data))?.issue?.first
        return [issue?.code, issue?.diagnostics].compactMap { $0 }.joined(separator: ": ")
    }

    static func escaped(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "-._~")))
            ?? text
    }

    /// "/VisionPrescription?..." from a Bundle link's absolute URL.
    static func pathAndQuery(_ url: String) -> String {
        guard let parsed = URLComponents(string: url) else { return url }
        return parsed.percentEncodedPath + (parsed.percentEncodedQuery.map { "?" + $0 } ?? "")
    }
}

/// What went wrong, in the words a developer needs.
public enum RxVaultClientError: Error, Sendable, Equatable, CustomStringConvertible {
    case identity(String)
    case url(String)
    /// The server answered with an error status; `outcome` is its OperationOutcome's code and
    /// diagnostics ("not-found: ...").
    case http(status: Int, outcome: String)
    case response(String)

    public var description: String {
        switch self {
        case .identity(let why): "identity: \(why)"
        case .url(let path): "cannot make a request for \(path)"
        case .http(let status, let outcome): "HTTP \(status)\(outcome.isEmpty ? "" : ": " + outcome)"
        case .response(let why): "response: \(why)"
        }
    }
}
