import Foundation
import HTTPTypes
import RxCrypto
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
            // Five failures for one key in a minute: 429 with Retry-After, even with the right answer.
            for _ in 0..<5 {
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
        }
    }
}
