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
        let recipient: [UInt8]
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
    /// Recent failures by recipient key (and all together, under an empty key), and recent challenges.
    private var failures: [[UInt8]: [Date]] = [:]
    private var issued: [Date] = []
    private let maxOutstanding = 1024

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

    /// A challenge for `recipient`: its id, the armored age file, and when it expires.
    func challenge(recipient text: String, lookup: (AgeRecipient) async throws -> ClientID?) async throws -> (
        String, String, Date
    ) {
        guard let recipient = AgeRecipient(text.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw Refusal.malformedRecipient
        }
        let now = settings.now()
        prune(now)
        if issued.count >= settings.maxChallengesPerMinute || challenges.count >= maxOutstanding {
            throw Refusal.throttled(retryAfter: 60)
        }
        if recentFailures(recipient.publicKey, now) >= settings.maxFailuresPerMinute {
            throw Refusal.throttled(retryAfter: 60)
        }
        issued.append(now)
        let clientID = try await lookup(recipient)
        let secret = Self.base64URL(randomBytes(32))
        let id = Self.base64URL(randomBytes(16))
        let expires = now.addingTimeInterval(settings.challengeLifetimeSeconds)
        challenges[id] = Challenge(
            clientID: clientID, recipient: recipient.publicKey, secretHash: SHA256.hash(Array(secret.utf8)),
            expires: expires)
        let file = try AgeFile.encrypt(Array((secret + "\n").utf8), to: [.x25519(recipient)])
        return (id, AgeFile.armor(file), expires)
    }

    /// Redeems a challenge: the token, and when it expires. Any attempt uses the challenge up.
    func token(challenge id: String, response: String) throws -> (String, ClientID, Date) {
        let now = settings.now()
        prune(now)
        guard let challenge = challenges.removeValue(forKey: id) else {
            recordFailure([], now)
            throw Refusal.invalid("unknown or expired challenge; ask for a new one")
        }
        if recentFailures(challenge.recipient, now) >= settings.maxFailuresPerMinute {
            throw Refusal.throttled(retryAfter: 60)
        }
        let answer = response.trimmingCharacters(in: .whitespacesAndNewlines)
        guard challenge.expires > now, constantTimeEqual(SHA256.hash(Array(answer.utf8)), challenge.secretHash),
            let clientID = challenge.clientID
        else {
            recordFailure(challenge.recipient, now)
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

    private func recentFailures(_ recipient: [UInt8], _ now: Date) -> Int {
        max(failures[recipient]?.count ?? 0, (failures[[]]?.count ?? 0) / 10)
    }

    private func recordFailure(_ recipient: [UInt8], _ now: Date) {
        failures[recipient, default: []].append(now)
        if !recipient.isEmpty { failures[[], default: []].append(now) }
    }

    private func prune(_ now: Date) {
        let minuteAgo = now.addingTimeInterval(-60)
        issued.removeAll { $0 < minuteAgo }
        for (key, times) in failures {
            let recent = times.filter { $0 >= minuteAgo }
            failures[key] = recent.isEmpty ? nil : recent
        }
        challenges = challenges.filter { $0.value.expires > now }
        tokens.withLockedValue { table in table = table.filter { $0.value.expires > now } }
    }

    static func base64URL(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(
            of: "/", with: "_"
        )
        .replacingOccurrences(of: "=", with: "")
    }
}
