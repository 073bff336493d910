import Foundation
import NIOConcurrencyHelpers
import RxCrypto
import RxVault

/// Proof of possession of a client's age X25519 identity, then short-lived bearer tokens
/// (docs/api.md, "Authentication").
///
/// A client names its recipient (`age1...`); the server answers with a challenge: a random
/// secret encrypted to that recipient as an age file, which only the identity's holder can
/// open (with rxvault, `age -d`, or any age library). Sending the secret back within a minute,
/// once, earns a token bound to that client for at most 15 minutes. The server stores only
/// hashes of secrets and tokens, nothing long-lived, and nothing on disk. An unregistered
/// recipient gets a challenge too (that nothing can redeem), so the endpoint does not tell
/// who is registered.
actor ClientAuthenticator {
    struct Challenge {
        let clientID: ClientID?
        let secretHash: [UInt8]
        let expires: Date
    }

    struct Token {
        let clientID: ClientID
        let expires: Date
    }

    private let settings: ServeSettings
    private var challenges: [String: Challenge] = [:]
    /// Token hashes -> tokens, behind a lock rather than the actor: every request checks its
    /// token, and a hop onto this actor each time would cost more than the check.
    private nonisolated let tokens = NIOLockedValueBox<[[UInt8]: Token]>([:])
    /// Recent failed token requests and recent challenges, by source (`RequestSource`): what a
    /// source costs counts against that source alone, never against the client it names, since
    /// a wrong answer only burns its own challenge (a 256-bit secret is not guessed).
    private var failures: [RequestSource: [Date]] = [:]
    private var issued: [RequestSource: [Date]] = [:]
    /// Challenges waiting for an answer, in all: a bound on memory, reached only by hundreds
    /// of sources at once (each may hold `maxChallengesPerMinute`).
    private let maxOutstanding = 4096

    init(settings: ServeSettings) {
        self.settings = settings
        now = settings.now
    }

    /// The clock challenges, tokens and failures are judged by (`ServeSettings.now`).
    nonisolated let now: @Sendable () -> Date

    enum Refusal: Error {
        case malformedRecipient
        case throttled(retryAfter: Int)
        case invalid(String)
    }

    /// A challenge for `recipient`, asked by `source`: its id, the armored age file, and when it
    /// expires.
    func challenge(
        recipient text: String, from source: RequestSource, lookup: (AgeRecipient) async throws -> ClientID?
    ) async throws -> (String, String, Date) {
        guard let recipient = AgeRecipient(text.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw Refusal.malformedRecipient
        }
        let now = settings.now()
        prune(now)
        if failures[source, default: []].count >= settings.maxFailuresPerMinute
            || issued[source, default: []].count >= settings.maxChallengesPerMinute
            || challenges.count >= maxOutstanding
        {
            throw Refusal.throttled(retryAfter: 60)
        }
        issued[source, default: []].append(now)
        let clientID = try await lookup(recipient)
        let secret = Self.base64URL(randomBytes(32))
        let id = Self.base64URL(randomBytes(16))
        let expires = now.addingTimeInterval(settings.challengeLifetimeSeconds)
        challenges[id] = Challenge(
            clientID: clientID, secretHash: SHA256.hash(Array(secret.utf8)),
            expires: expires)
        let file = try AgeFile.encrypt(Array((secret + "\n").utf8), to: [.x25519(recipient)])
        return (id, AgeFile.armor(file), expires)
    }

    /// Redeems a challenge, for `source`: the token, and when it expires. Any attempt uses the
    /// challenge up; a failed one counts against `source`.
    func token(challenge id: String, response: String, from source: RequestSource) throws -> (String, ClientID, Date) {
        let now = settings.now()
        prune(now)
        if failures[source, default: []].count >= settings.maxFailuresPerMinute {
            throw Refusal.throttled(retryAfter: 60)
        }
        guard let challenge = challenges.removeValue(forKey: id) else {
            failures[source, default: []].append(now)
            throw Refusal.invalid("unknown or expired challenge; ask for a new one")
        }
        let answer = response.trimmingCharacters(in: .whitespacesAndNewlines)
        guard challenge.expires > now, constantTimeEqual(SHA256.hash(Array(answer.utf8)), challenge.secretHash),
            let clientID = challenge.clientID
        else {
            failures[source, default: []].append(now)
            throw Refusal.invalid(
                "the response does not answer the challenge, or this key is not a client of the vault")
        }
        let token = "rxv_" + Self.base64URL(randomBytes(32))
        let expires = now.addingTimeInterval(min(settings.tokenLifetimeSeconds, 15 * 60))
        let entry = Token(clientID: clientID, expires: expires)
        tokens.withLockedValue { $0[SHA256.hash(Array(token.utf8))] = entry }
        return (token, clientID, expires)
    }

    /// The client a bearer token stands for; nil when unknown or expired.
    nonisolated func client(bearer token: String) -> ClientID? {
        let now = settings.now()
        let key = SHA256.hash(Array(token.utf8))
        return tokens.withLockedValue { table -> ClientID? in
            guard let entry = table[key] else { return nil }
            guard entry.expires > now else {
                table[key] = nil
                return nil
            }
            return entry.clientID
        }
    }

    private func prune(_ now: Date) {
        let minuteAgo = now.addingTimeInterval(-60)
        issued = Self.since(minuteAgo, issued)
        failures = Self.since(minuteAgo, failures)
        challenges = challenges.filter { $0.value.expires > now }
        tokens.withLockedValue { table in table = table.filter { $0.value.expires > now } }
    }

    /// The times at or after `start`, without the sources left with none.
    private static func since(_ start: Date, _ table: [RequestSource: [Date]]) -> [RequestSource: [Date]] {
        table.compactMapValues { times in
            let recent = times.filter { $0 >= start }
            return recent.isEmpty ? nil : recent
        }
    }

    static func base64URL(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(
            of: "/", with: "_"
        )
        .replacingOccurrences(of: "=", with: "")
    }
}
