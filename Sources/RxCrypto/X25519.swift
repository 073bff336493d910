import CSodium

/// X25519 keys and libsodium sealed boxes (`crypto_box_seal`): anonymous encryption to a public
/// key. age's X25519 recipients are exactly these keys, so an identity made by `age-keygen`
/// opens what rxvault seals to its recipient.
public enum X25519 {
    public static let keyLength = 32
    public static var sealOverhead: Int { Int(crypto_box_sealbytes()) }

    /// A new key pair: (public key, secret key).
    public static func generate() throws(CryptoError) -> ([UInt8], SecretBytes) {
        try Sodium.ready()
        let secret = SecretBytes(randomCount: keyLength)
        return (try publicKey(of: secret), secret)
    }

    /// The public key of `secret` (X25519 base-point multiplication, clamping as age does).
    public static func publicKey(of secret: SecretBytes) throws(CryptoError) -> [UInt8] {
        try Sodium.ready()
        guard secret.count == keyLength else { throw .malformed("X25519 secret key length") }
        var out = [UInt8](repeating: 0, count: keyLength)
        let status = secret.withUnsafeBytes {
            crypto_scalarmult_base(&out, $0.baseAddress!.assumingMemoryBound(to: UInt8.self))
        }
        guard status == 0 else { throw .malformed("X25519 secret key") }
        return out
    }

    /// Seals `plaintext` so that only the holder of `publicKey`'s secret can open it.
    public static func seal(_ plaintext: SecretBytes, to publicKey: [UInt8]) throws(CryptoError) -> [UInt8] {
        try Sodium.ready()
        guard publicKey.count == keyLength else { throw .malformed("X25519 public key length") }
        var out = [UInt8](repeating: 0, count: plaintext.count + sealOverhead)
        let status = plaintext.withUnsafeBytes { p in
            crypto_box_seal(&out, p.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(p.count), publicKey)
        }
        guard status == 0 else { throw .malformed("X25519 public key") }
        return out
    }

    public static func seal(_ plaintext: [UInt8], to publicKey: [UInt8]) throws(CryptoError) -> [UInt8] {
        var copy = plaintext
        return try seal(SecretBytes(consuming: &copy), to: publicKey)
    }

    /// A 32-byte key that `secretKey`'s holder and `publicKey`'s holder both compute, and nobody
    /// else: BLAKE2b-256 (`crypto_generichash`) of the X25519 shared point followed by `context`,
    /// which should name the purpose and both public keys (as `crypto_kx` hashes them in). Fails
    /// on a low-order public key, whose shared point is all zeros and would be known to anyone.
    public static func sharedKey(secretKey: SecretBytes, publicKey: [UInt8], context: [UInt8]) throws(CryptoError)
        -> SecretBytes
    {
        try Sodium.ready()
        guard secretKey.count == keyLength else { throw .malformed("X25519 secret key length") }
        guard publicKey.count == keyLength else { throw .malformed("X25519 public key length") }
        // The shared point and the context, side by side in zeroed-on-release memory, hashed at once.
        let input = SecretBytes(zeroedCount: keyLength + context.count)
        let status = input.withUnsafeMutableBytes { q in
            for (i, byte) in context.enumerated() { q[keyLength + i] = byte }
            return secretKey.withUnsafeBytes { s in
                crypto_scalarmult(
                    q.baseAddress!.assumingMemoryBound(to: UInt8.self),
                    s.baseAddress!.assumingMemoryBound(to: UInt8.self), publicKey)
            }
        }
        guard status == 0 else { throw .malformed("X25519 public key") }
        let key = SecretBytes(zeroedCount: 32)
        key.withUnsafeMutableBytes { k in
            input.withUnsafeBytes { q in
                _ = crypto_generichash(
                    k.baseAddress!.assumingMemoryBound(to: UInt8.self), 32,
                    q.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt64(q.count), nil, 0)
            }
        }
        return key
    }

    /// Opens a sealed box with the key pair; fails unless it was sealed to this public key, unaltered.
    public static func open(_ box: [UInt8], publicKey: [UInt8], secretKey: SecretBytes) throws(CryptoError)
        -> SecretBytes
    {
        try Sodium.ready()
        guard box.count >= sealOverhead, publicKey.count == keyLength, secretKey.count == keyLength else {
            throw .authenticationFailed
        }
        let plain = SecretBytes(zeroedCount: box.count - sealOverhead)
        let status = plain.withUnsafeMutableBytes { p in
            secretKey.withUnsafeBytes { s in
                crypto_box_seal_open(
                    p.baseAddress!.assumingMemoryBound(to: UInt8.self), box, UInt64(box.count), publicKey,
                    s.baseAddress!.assumingMemoryBound(to: UInt8.self))
            }
        }
        guard status == 0 else { throw .authenticationFailed }
        return plain
    }
}

/// HMAC-SHA-512-256 (`crypto_auth`) under a 32-byte key: authenticates rows (grants, audit
/// entries) that the owner writes, so a forged or altered row is detected.
public enum MAC {
    public static let length = Int(crypto_auth_BYTES)

    public static func authenticate(_ message: [UInt8], key: SecretBytes) throws(CryptoError) -> [UInt8] {
        try Sodium.ready()
        guard key.count == Int(crypto_auth_KEYBYTES) else { throw .malformed("MAC key length") }
        var out = [UInt8](repeating: 0, count: length)
        key.withUnsafeBytes { k in
            _ = crypto_auth(&out, message, UInt64(message.count), k.baseAddress!.assumingMemoryBound(to: UInt8.self))
        }
        return out
    }

    public static func verify(_ tag: [UInt8], _ message: [UInt8], key: SecretBytes) -> Bool {
        guard tag.count == length, key.count == Int(crypto_auth_KEYBYTES) else { return false }
        return key.withUnsafeBytes { k in
            crypto_auth_verify(tag, message, UInt64(message.count), k.baseAddress!.assumingMemoryBound(to: UInt8.self))
                == 0
        }
    }
}
