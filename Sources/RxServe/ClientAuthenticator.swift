import Foundation
import RxCrypto
import RxVault

/// Proof of possession of a client's age X25519 identity, then short-lived bearer tokens
/// (docs/api.md, "Authentication").
///
/// A client names its recipient (`age1...`); the server answers with a challenge: a random
/// secret encrypted to that recipient as an age file, which only the identity's holder can
/// open (with rxvault, `age -d`, or any age library). Sending the secret back within a minute
/// earns a token bound to that client for at most 15 minutes. The challenge id and the token
/// are sealed with the vault's API-session key (`SealedSessions`), so any server of the vault
/// accepts them (several instances behind a balancer), and nothing is stored but the ids of
/// challenges this server has seen answered (until they expire), so that each is answered here
/// once; nothing on disk.
///
/// The challenge does not say, by its answer or by its timing, whether the recipient is a
/// client: every recipient gets the same work (a random secret, a sealed id, an age file), and
/// the vault's clients are looked up only at `token`, after the answer checks, which only the
/// identity's holder can give. (Looking the client up first made registered recipients about
/// 80 us slower at /auth/challenge: a stranger could tell who is registered. Issue 50.)
actor ClientAuthenticator {
    private let settings: ServeSettings
    private nonisolated let sessions: SealedSessions
    /// Challenges answered here (any attempt uses one up), by id, until they expire.
    private var answered: [String: Date] = [:]
    /// Recent failed token requests and recent challenges, by source (`RequestSource`): what a
    /// source costs counts against that source alone, never against the client it names, since
    /// a wrong answer only burns its own challenge (a 256-bit secret is not guessed).
    private var failures: [RequestSource: [Date]] = [:]
    private var issued: [RequestSource: [Date]] = [:]
    /// Challenges answered and not yet expired, in all: a bound on memory, reached only by
    /// hundreds of sources at once (each may ask `maxChallengesPerMinute`).
    private let maxAnswered = 4096

    init(settings: ServeSettings, sessionKey: SecretBytes) {
        self.settings = settings
        sessions = SealedSessions(key: sessionKey)
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
    /// expires. The same work whoever the recipient is: nothing here reads the vault.
    func challenge(recipient text: String, from source: RequestSource) throws -> (String, String, Date) {
        guard let recipient = AgeRecipient(text.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw Refusal.malformedRecipient
        }
        let now = settings.now()
        prune(now)
        if failures[source, default: []].count >= settings.maxFailuresPerMinute
            || issued[source, default: []].count >= settings.maxChallengesPerMinute
            || answered.count >= maxAnswered
        {
            throw Refusal.throttled(retryAfter: 60)
        }
        issued[source, default: []].append(now)
        let secret = SealedSessions.base64URL(randomBytes(32))
        let expires = now.addingTimeInterval(settings.challengeLifetimeSeconds)
        let id = try sessions.challengeID(recipient: recipient.publicKey, expires: expires, secret: secret)
        let file = try AgeFile.encrypt(Array((secret + "\n").utf8), to: [.x25519(recipient)])
        return (id, AgeFile.armor(file), expires)
    }

    /// Redeems a challenge, for `source`: the token, and when it expires. Any attempt uses the
    /// challenge up at this server; a failed one counts against `source`. (Another server of the
    /// vault could still take one answer to it within its minute: only the holder of the client's
    /// identity, or of the answer it sent over TLS, has one.) `lookup` finds the client whose
    /// recipient the challenge was sent to; it runs only once the answer checks, and a recipient
    /// that is no client is refused as a wrong answer is.
    func token(
        challenge id: String, response: String, from source: RequestSource,
        lookup: (_ publicKey: [UInt8]) async throws -> ClientID?
    ) async throws -> (String, ClientID, Date) {
        let now = settings.now()
        prune(now)
        if failures[source, default: []].count >= settings.maxFailuresPerMinute {
            throw Refusal.throttled(retryAfter: 60)
        }
        guard answered[id] == nil, let challenge = sessions.challenge(id), challenge.expires > now else {
            failures[source, default: []].append(now)
            throw Refusal.invalid("unknown or expired challenge; ask for a new one")
        }
        answered[id] = challenge.expires
        let answer = response.trimmingCharacters(in: .whitespacesAndNewlines)
        let answered = constantTimeEqual(SHA256.hash(Array(answer.utf8)), challenge.secretHash)
        guard answered, let clientID = try await lookup(challenge.recipient) else {
            failures[source, default: []].append(now)
            throw Refusal.invalid(
                "the response does not answer the challenge, or this key is not a client of the vault")
        }
        let expires = now.addingTimeInterval(min(settings.tokenLifetimeSeconds, 15 * 60))
        return (try sessions.token(clientID: clientID, expires: expires), clientID, expires)
    }

    /// The client a bearer token stands for; nil when no server of this vault sealed it, or it
    /// expired. Off the actor: every request checks its token.
    nonisolated func client(bearer token: String) -> ClientID? {
        guard let opened = sessions.token(token), opened.expires > settings.now() else { return nil }
        return opened.clientID
    }

    /// The client a bearer token stands for, as the one value `VaultGateway.view(for:)` takes:
    /// a client's view is made only from a token a server of this vault sealed.
    nonisolated func authenticated(bearer token: String) -> AuthenticatedClient? {
        client(bearer: token).map(AuthenticatedClient.init)
    }

    private func prune(_ now: Date) {
        let minuteAgo = now.addingTimeInterval(-60)
        issued = Self.since(minuteAgo, issued)
        failures = Self.since(minuteAgo, failures)
        answered = answered.filter { $0.value > now }
    }

    /// The times at or after `start`, without the sources left with none.
    private static func since(_ start: Date, _ table: [RequestSource: [Date]]) -> [RequestSource: [Date]] {
        table.compactMapValues { times in
            let recent = times.filter { $0 >= start }
            return recent.isEmpty ? nil : recent
        }
    }
}

/// A client that presented a valid bearer token in this request. Made only here (its
/// initializer is private to this file), from a token `SealedSessions` opened: the gateway
/// resolves a `ClientView` from nothing else, so no route can ask for another client's.
struct AuthenticatedClient: Sendable {
    let id: ClientID

    fileprivate init(_ id: ClientID) { self.id = id }
}
