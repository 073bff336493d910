import Foundation
import RxCrypto
import RxVault

/// Challenge ids and bearer tokens that every server of one vault can open, so that instances
/// behind one balancer (docs/deploy.md) accept what any of them issued: a client may ask one for
/// a challenge, answer it at another and read through a third. Each is sealed with
/// XChaCha20-Poly1305 under the vault's API-session key (`Vault.apiSessionKey`, from the root
/// key, never stored), with associated data that says which of the two it is, so neither can be
/// forged, altered or passed off as the other, and neither tells anyone but a server what is in
/// it. A challenge id holds the recipient it was sent to, never a client: whether that
/// recipient is a client is asked only when the challenge is answered.
struct SealedSessions: Sendable {
    let key: SecretBytes

    /// What a challenge id holds: the recipient's X25519 public key (32 bytes), when the
    /// challenge expires, and the SHA-256 of the secret sent to the recipient.
    struct Challenge {
        let recipient: [UInt8]
        let expires: Date
        let secretHash: [UInt8]
    }

    /// What a bearer token holds.
    struct Token {
        let clientID: ClientID
        let expires: Date
    }

    private static let challengeData = Array("rxvault/v1 api-challenge-2".utf8)
    private static let tokenData = Array("rxvault/v1 api-token".utf8)
    static let tokenPrefix = "rxv_"

    /// id = base64url(seal(recipient public key ‖ u64be expiry (Unix seconds) ‖ SHA-256(secret))),
    /// under associated data of its own ("api-challenge-2"): an id sealed by a server from
    /// before issue 50 (a client id where the key is now) opens as no challenge.
    func challengeID(recipient: [UInt8], expires: Date, secret: String) throws -> String {
        precondition(recipient.count == 32, "an X25519 public key")
        let plain = recipient + Self.seconds(expires) + SHA256.hash(Array(secret.utf8))
        return Self.base64URL(try AEAD.seal(plain, key: key, associatedData: Self.challengeData))
    }

    /// The challenge `id` names, or nil when it is not one this vault's servers sealed.
    func challenge(_ id: String) -> Challenge? {
        guard let box = Self.unbase64URL(id),
            let plain = try? AEAD.open(box, key: key, associatedData: Self.challengeData), plain.count == 72
        else { return nil }
        let bytes = plain.withUnsafeBytes { Array($0) }
        return Challenge(
            recipient: Array(bytes[0..<32]), expires: Self.date(bytes[32..<40]), secretHash: Array(bytes[40..<72]))
    }

    /// "rxv_" + base64url(seal(client id ‖ u64be expiry (Unix seconds))).
    func token(clientID: ClientID, expires: Date) throws -> String {
        Self.tokenPrefix
            + Self.base64URL(
                try AEAD.seal(clientID.bytes + Self.seconds(expires), key: key, associatedData: Self.tokenData))
    }

    /// The client and expiry `token` holds, or nil when it is not one this vault's servers sealed.
    func token(_ token: String) -> Token? {
        guard token.hasPrefix(Self.tokenPrefix), let box = Self.unbase64URL(token.dropFirst(4)),
            let plain = try? AEAD.open(box, key: key, associatedData: Self.tokenData), plain.count == 24
        else { return nil }
        let bytes = plain.withUnsafeBytes { Array($0) }
        guard let client = ClientID(bytes: bytes[0..<16]) else { return nil }
        return Token(clientID: client, expires: Self.date(bytes[16..<24]))
    }

    private static func seconds(_ date: Date) -> [UInt8] {
        let value = UInt64(max(0, date.timeIntervalSince1970.rounded(.up)))
        return (0..<8).reversed().map { UInt8(truncatingIfNeeded: value >> (8 * $0)) }
    }

    private static func date(_ bytes: ArraySlice<UInt8>) -> Date {
        Date(timeIntervalSince1970: TimeInterval(bytes.reduce(UInt64(0)) { $0 << 8 | UInt64($1) }))
    }

    static func base64URL(_ bytes: [UInt8]) -> String { Base64.url.encode(bytes) }

    /// Only the one spelling `base64URL` gives (`Base64.url` decodes strictly): a challenge is
    /// used up by its id as sent, so no other spelling of the same bytes (`+` for `-`, padding,
    /// stray bits) may redeem it again. Bounded: nothing a server sealed is longer, and a
    /// request's header may be 16 KiB.
    static func unbase64URL(_ text: some StringProtocol) -> [UInt8]? {
        guard text.utf8.count <= 256 else { return nil }
        return Base64.url.decode(Array(text.utf8))
    }
}
