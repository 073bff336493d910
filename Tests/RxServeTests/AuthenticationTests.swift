import Foundation
import HTTPTypes
import NIOCore
import RxCrypto
import RxVault
import Testing

@testable import RxServe

/// Proof of possession of the client's age identity, then bearer tokens (docs/api.md,
/// "Authentication"); failures are limited.
@Suite struct AuthenticationTests {
    @Test func aTokenNeedsTheIdentity() async throws {
        let vault = try ServedVault()
        let shop = try vault.addClient("shop")
        try await vault.serve { api in
            let (id, secret) = try await api.challenge("shop")
            let answer = try await api.post("/auth/token", body: #"{"challenge": "\#(id)", "response": "\#(secret)"}"#)
            #expect(answer.status == .ok && answer.headers[.cacheControl] == "no-store")
            #expect(answer.json["token_type"] as? String == "Bearer" && answer.json["client"] as? String == shop.id.hex)
            #expect((answer.json["expires_in"] as? Int).map { (890...900).contains($0) } == true, "15 minutes")
            let token = try #require(answer.json["access_token"] as? String)
            #expect(token.hasPrefix("rxv_"))
            #expect(try await api.get("/VisionPrescription", token: token).status == .ok)
            // The scheme in any case, blanks around the token.
            let spaced = try await api.request(
                .get, "/VisionPrescription", headers: [.authorization: "bEaReR \t\(token) "])
            #expect(spaced.status == .ok)

            // Once only: the same answer again is refused.
            #expect(
                try await api.post("/auth/token", body: #"{"challenge": "\#(id)", "response": "\#(secret)"}"#).status
                    == .unauthorized)
            // A wrong answer uses the challenge up: the right answer afterwards is refused too.
            let (second, secondSecret) = try await api.challenge("shop")
            #expect(
                try await api.post("/auth/token", body: #"{"challenge": "\#(second)", "response": "guess"}"#).status
                    == .unauthorized)
            let late = try await api.post(
                "/auth/token", body: #"{"challenge": "\#(second)", "response": "\#(secondSecret)"}"#)
            #expect(late.status == .unauthorized && late.outcome == "login")
            #expect(try await api.post("/auth/token", body: #"{"challenge": "\#(second)"}"#).status == .badRequest)
        }
    }

    @Test func aStrangerGetsAChallengeThatNothingRedeems() async throws {
        let vault = try ServedVault()
        try await vault.serve { api in
            let stranger = try AgeIdentity.generate()
            let answer = try await api.post("/auth/challenge", body: #"{"recipient": "\#(stranger.recipient)"}"#)
            #expect(answer.status == .ok, "the endpoint does not tell who is registered")
            let id = try #require(answer.json["challenge"] as? String)
            let secret = try AgeFile.decrypt(
                Array(try #require(answer.json["age"] as? String).utf8), with: .identities([stranger]))
            let token = try await api.post(
                "/auth/token",
                body:
                    #"{"challenge": "\#(id)", "response": "\#(String(decoding: secret, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))"}"#
            )
            #expect(token.status == .unauthorized && token.outcome == "login")
        }
    }

    @Test func failuresAreThrottled() async throws {
        let vault = try ServedVault()
        try vault.addClient("shop")
        try await vault.serve { api in
            // Ten failures from one source in a minute: that source gets 429 with Retry-After on
            // both endpoints, even with the right answer to a challenge it already holds.
            let (held, secret) = try await api.challenge("shop")
            for _ in 0..<10 {
                let (id, _) = try await api.challenge("shop")
                #expect(
                    try await api.post("/auth/token", body: #"{"challenge": "\#(id)", "response": "wrong"}"#).status
                        == .unauthorized)
            }
            let recipient = try vault.identity("shop").recipient
            let throttled = try await api.post("/auth/challenge", body: #"{"recipient": "\#(recipient)"}"#)
            #expect(
                throttled.status == .tooManyRequests && throttled.outcome == "throttled"
                    && throttled.headers[.retryAfter] == "60")
            let late = try await api.post("/auth/token", body: #"{"challenge": "\#(held)", "response": "\#(secret)"}"#)
            #expect(late.status == .tooManyRequests && late.outcome == "throttled")
        }
    }

    /// A stranger who knows a client's recipient cannot lock it out, nor everyone: wrong answers
    /// and challenges count against the stranger's own source, and the client, from another,
    /// logs in while the stranger is refused.
    @Test func aStrangerHammeringBothEndpointsLocksOutOnlyItself() async throws {
        let vault = try ServedVault()
        try vault.addClient("shop")
        let identity = try vault.identity("shop")
        let shop = try vault.client("shop").id
        let authenticator = ClientAuthenticator(
            settings: ServeSettings(address: .unixSocket(path: "/unused")), sessionKey: SecretBytes(randomCount: 32))
        let lookup: @Sendable ([UInt8]) async throws -> ClientID? = { key in
            key == identity.recipient.publicKey ? shop : nil
        }
        // The stranger moves between addresses of one IPv6 /64: one source.
        let stranger = [
            try SocketAddress(ipAddress: "2001:db8:5:6::1", port: 4000),
            try SocketAddress(ipAddress: "2001:db8:5:6:ffff::9", port: 4001)
        ].map(RequestSource.init)
        var answered = 0
        var refused = false
        hammering: for attempt in 0..<200 {
            let source = stranger[attempt % 2]
            do {
                let (id, _, _) = try await authenticator.challenge(recipient: "\(identity.recipient)", from: source)
                _ = try await authenticator.token(challenge: id, response: "wrong", from: source, lookup: lookup)
            } catch ClientAuthenticator.Refusal.throttled {
                refused = true
                break hammering
            } catch ClientAuthenticator.Refusal.invalid {
                answered += 1
            }
        }
        #expect(refused && answered == 10, "refused after \(answered) wrong answers")
        // Challenges for random recipients, to use up a budget: the stranger's own only.
        let random = try SocketAddress(ipAddress: "203.0.113.9", port: 4002)
        var challenges = 0
        for _ in 0..<100 {
            guard
                (try? await authenticator.challenge(
                    recipient: "\(AgeIdentity.generate().recipient)", from: RequestSource(random)))
                    != nil
            else { break }
            challenges += 1
        }
        #expect(challenges == 30)
        // The client, from its own address, logs in.
        let client = RequestSource(try SocketAddress(ipAddress: "198.51.100.7", port: 5000))
        let (id, armored, _) = try await authenticator.challenge(recipient: "\(identity.recipient)", from: client)
        let secret = String(
            decoding: try AgeFile.decrypt(Array(armored.utf8), with: .identities([identity])), as: UTF8.self)
        let (token, who, _) = try await authenticator.token(
            challenge: id, response: secret, from: client, lookup: lookup)
        #expect(who == shop && authenticator.client(bearer: token) == shop)
        await #expect(throws: ClientAuthenticator.Refusal.self) {
            try await authenticator.challenge(recipient: "\(identity.recipient)", from: stranger[0])
        }
    }

    /// What counts as one source: an IPv4 address, an IPv6 /64 (an IPv4 client of a dual-stack
    /// listener is its IPv4 address), and the Unix socket (only the owner's processes reach it).
    @Test func sourcesAreAddressesSlash64sOrTheSocket() throws {
        func source(_ ip: String, _ port: Int = 80) throws -> RequestSource {
            RequestSource(try SocketAddress(ipAddress: ip, port: port))
        }
        #expect(try source("203.0.113.9").description == "203.0.113.9")
        #expect(try source("203.0.113.9", 1) == source("203.0.113.9", 2))
        #expect(try source("203.0.113.9") != source("203.0.113.10"))
        #expect(try source("::ffff:203.0.113.9") == source("203.0.113.9"))
        #expect(try source("2001:db8:5:6::1").description == "2001:db8:5:6::/64")
        #expect(try source("2001:db8:5:6::1") == source("2001:db8:5:6:abcd::2"))
        #expect(try source("2001:db8:5:6::1") != source("2001:db8:5:7::1"))
        #expect(RequestSource(try SocketAddress(unixDomainSocketPath: "/tmp/x")).description == "local")
        #expect(RequestSource(nil).description == "local")
    }

    /// Several servers of one vault (behind one balancer: docs/deploy.md) accept what any of them
    /// issued: a challenge asked of one is answered at another, and its token read with at a
    /// third. A server of another vault refuses both, and every server refuses a token altered by
    /// one character, one past its expiry, and a challenge answered twice at the same server.
    @Test func everyServerOfTheVaultAcceptsWhatAnyOfThemIssued() async throws {
        let vault = try ServedVault()
        try vault.addClient("shop")
        let identity = try vault.identity("shop")
        let shop = try vault.client("shop").id
        let key = SecretBytes(randomCount: 32)
        let clock = MovableClock()
        var settings = ServeSettings(address: .unixSocket(path: "/unused"))
        settings.now = { clock.now }
        let (a, b, c) = (
            ClientAuthenticator(settings: settings, sessionKey: key),
            ClientAuthenticator(settings: settings, sessionKey: key),
            ClientAuthenticator(settings: settings, sessionKey: key)
        )
        let other = ClientAuthenticator(settings: settings, sessionKey: SecretBytes(randomCount: 32))
        let lookup: @Sendable ([UInt8]) async throws -> ClientID? = { key in
            key == identity.recipient.publicKey ? shop : nil
        }
        let source = RequestSource(try SocketAddress(ipAddress: "198.51.100.8", port: 5000))
        func challenge(_ server: ClientAuthenticator) async throws -> (String, String) {
            let (id, armored, _) = try await server.challenge(recipient: "\(identity.recipient)", from: source)
            let secret = try AgeFile.decrypt(Array(armored.utf8), with: .identities([identity]))
            return (id, String(decoding: secret, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
        }
        let (id, secret) = try await challenge(a)
        await #expect(throws: ClientAuthenticator.Refusal.self) {
            _ = try await other.token(challenge: id, response: secret, from: source, lookup: lookup)
        }
        let (token, client, _) = try await b.token(challenge: id, response: secret, from: source, lookup: lookup)
        #expect(client == shop && c.client(bearer: token) == shop && a.client(bearer: token) == shop)
        #expect(other.client(bearer: token) == nil)
        // Answered once at b: not again there, in any other spelling of the same bytes either.
        await #expect(throws: ClientAuthenticator.Refusal.self) {
            _ = try await b.token(challenge: id, response: secret, from: source, lookup: lookup)
        }
        for respelled in [id + "=", id.replacingOccurrences(of: "-", with: "+"), id + "\n"] where respelled != id {
            await #expect(throws: ClientAuthenticator.Refusal.self) {
                _ = try await b.token(challenge: respelled, response: secret, from: source, lookup: lookup)
            }
        }
        var altered = Array(token)
        altered[10] = altered[10] == "A" ? "B" : "A"
        #expect(a.client(bearer: String(altered)) == nil)
        #expect(a.client(bearer: "rxv_") == nil && a.client(bearer: String(repeating: "A", count: 5000)) == nil)
        // A challenge id is not a token, nor a token a challenge id.
        #expect(a.client(bearer: "rxv_" + id) == nil)
        await #expect(throws: ClientAuthenticator.Refusal.self) {
            _ = try await c.token(challenge: String(token.dropFirst(4)), response: secret, from: source, lookup: lookup)
        }
        clock.advance(by: 15 * 60 + 1)
        #expect(c.client(bearer: token) == nil, "expired")
    }
}

/// A clock a test moves on.
final class MovableClock: @unchecked Sendable {
    private let lock = NSLock()
    private var time = Date()
    var now: Date { lock.withLock { time } }
    func advance(by seconds: TimeInterval) { lock.withLock { time.addTimeInterval(seconds) } }
}
