import CSodium

/// An SSH Ed25519 public key used as an age recipient (age's `ssh-ed25519` stanza), so a backup
/// or export can be made to the key someone already has in `~/.ssh/id_ed25519.pub` and opened
/// with `age -d -i ~/.ssh/id_ed25519`.
///
/// The stanza (age-encryption.org/v1, as the reference implementation's agessh writes it):
/// the Ed25519 key is mapped to its X25519 form (libsodium's
/// `crypto_sign_ed25519_pk_to_curve25519`); the X25519 shared secret with a fresh ephemeral key
/// is multiplied once more by a tweak, HKDF-SHA-256(ikm: empty, salt: the SSH wire key, info:
/// the label), so the key is bound to its SSH encoding; the wrap key is HKDF-SHA-256(the tweaked
/// secret, salt: ephemeral share || recipient X25519 key, info: the label).
/// `-> ssh-ed25519 <tag> <share>`: the tag is the first 4 bytes of SHA-256 of the wire key.
public struct AgeSSHRecipient: Hashable, Sendable, CustomStringConvertible {
    static let label = "age-encryption.org/v1/ssh-ed25519"
    public static let keyType = "ssh-ed25519"

    /// The SSH wire encoding: string "ssh-ed25519", string key (32 bytes).
    public let wireKey: [UInt8]
    /// The Ed25519 public key.
    public let ed25519Key: [UInt8]
    /// The X25519 form of the key (what the shared secret is computed with).
    let x25519Key: [UInt8]

    /// Parses an authorized_keys-style line: `ssh-ed25519 AAAAC3Nza... [comment]`. Nil when the
    /// line is not an ssh-ed25519 key or the key is not a valid curve point.
    public init?(_ line: String) {
        let fields = line.trimmingSpaces().split(whereSeparator: { $0 == " " || $0 == "\t" })
        guard fields.count >= 2, fields[0] == Self.keyType,
            let blob = Base64.standard.decodePadded(Array(fields[1].utf8))
        else { return nil }
        // string "ssh-ed25519" (4 + 11 bytes), string key (4 + 32 bytes), nothing more.
        let prefix: [UInt8] = [0, 0, 0, 11] + Array(Self.keyType.utf8) + [0, 0, 0, 32]
        guard blob.count == prefix.count + 32, Array(blob[0..<prefix.count]) == prefix else { return nil }
        let key = Array(blob[prefix.count...])
        guard (try? Sodium.ready()) != nil else { return nil }
        var montgomery = [UInt8](repeating: 0, count: 32)
        guard crypto_sign_ed25519_pk_to_curve25519(&montgomery, key) == 0 else { return nil }
        wireKey = blob
        ed25519Key = key
        x25519Key = montgomery
    }

    /// The key as it appears in authorized_keys (without a comment).
    public var description: String { "\(Self.keyType) \(Base64.standard.encodePadded(wireKey))" }

    /// The stanza's first argument: unpadded base64 of SHA-256(wire key)[0..<4].
    var tag: String { Base64.standard.encode(Array(SHA256.hash(wireKey)[0..<4])) }

    /// The tweak scalar: HKDF-SHA-256 with an empty secret, salted with the wire key.
    var tweak: SecretBytes { AgePrimitives.hkdf(secret: SecretBytes(zeroedCount: 0), salt: wireKey, info: Self.label) }

    /// The stanza wrapping `fileKey` to this key.
    func stanza(fileKey: SecretBytes) throws(CryptoError) -> String {
        let ephemeral = SecretBytes(randomCount: 32)
        let share = try X25519.publicKey(of: ephemeral)
        guard let shared = AgePrimitives.x25519(ephemeral, x25519Key),
            let tweaked = shared.withUnsafeBytes({ AgePrimitives.x25519(tweak, Array($0)) })
        else {
            throw .malformed("ssh-ed25519 recipient is a low-order point")
        }
        let wrapKey = AgePrimitives.hkdf(secret: tweaked, salt: share + x25519Key, info: Self.label)
        let body = fileKey.withUnsafeBytes {
            AgePrimitives.seal($0, key: wrapKey, nonce: [UInt8](repeating: 0, count: 12))
        }
        return "-> \(Self.keyType) \(tag) \(Base64.standard.encode(share))\n" + AgeFile.wrapBody(body)
    }
}
