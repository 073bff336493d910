import CSodium

/// The primitives age v1 needs beyond what rxvault's own format uses, all from libsodium 1.0.18:
/// HMAC-SHA-256 (multi-part, any key length) to build HKDF-SHA-256 (RFC 5869), ChaCha20-Poly1305
/// IETF, X25519 and scrypt.
enum AgePrimitives {
    static func hmacSHA256(key: [UInt8], _ parts: [[UInt8]]) -> [UInt8] {
        var state = crypto_auth_hmacsha256_state()
        crypto_auth_hmacsha256_init(&state, key, key.count)
        for part in parts { crypto_auth_hmacsha256_update(&state, part, UInt64(part.count)) }
        var out = [UInt8](repeating: 0, count: Int(crypto_auth_hmacsha256_BYTES))
        crypto_auth_hmacsha256_final(&state, &out)
        withUnsafeMutableBytes(of: &state) { sodium_memzero($0.baseAddress!, $0.count) }
        return out
    }

    /// HKDF-SHA-256 with a 32-byte output (one expand block).
    static func hkdf(secret: SecretBytes, salt: [UInt8], info: String) -> SecretBytes {
        let ikm = secret.withUnsafeBytes { Array($0) }
        var prk = hmacSHA256(key: salt, [ikm])
        var okm = hmacSHA256(key: prk, [Array(info.utf8), [1]])
        prk.withUnsafeMutableBytes { sodium_memzero($0.baseAddress!, $0.count) }
        var ikmCopy = ikm
        ikmCopy.withUnsafeMutableBytes { if $0.count > 0 { sodium_memzero($0.baseAddress!, $0.count) } }
        return SecretBytes(consuming: &okm)
    }

    static func seal(_ plaintext: UnsafeRawBufferPointer, key: SecretBytes, nonce: [UInt8]) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: plaintext.count + Int(crypto_aead_chacha20poly1305_ietf_ABYTES))
        var written: UInt64 = 0
        key.withUnsafeBytes { k in
            _ = crypto_aead_chacha20poly1305_ietf_encrypt(
                &out, &written, plaintext.baseAddress?.assumingMemoryBound(to: UInt8.self),
                UInt64(plaintext.count), nil, 0, nil, nonce,
                k.baseAddress!.assumingMemoryBound(to: UInt8.self))
        }
        return out
    }

    static func open(_ ciphertext: [UInt8], key: SecretBytes, nonce: [UInt8]) -> SecretBytes? {
        let tag = Int(crypto_aead_chacha20poly1305_ietf_ABYTES)
        guard ciphertext.count >= tag else { return nil }
        let out = SecretBytes(zeroedCount: ciphertext.count - tag)
        let status = out.withUnsafeMutableBytes { o in
            key.withUnsafeBytes { k in
                var written: UInt64 = 0
                return crypto_aead_chacha20poly1305_ietf_decrypt(
                    o.baseAddress?.assumingMemoryBound(to: UInt8.self), &written, nil,
                    ciphertext, UInt64(ciphertext.count), nil, 0, nonce,
                    k.baseAddress!.assumingMemoryBound(to: UInt8.self))
            }
        }
        return status == 0 ? out : nil
    }

    /// X25519(scalar, point); nil when the result is all zeros (a low-order point).
    static func x25519(_ scalar: SecretBytes, _ point: [UInt8]) -> SecretBytes? {
        let out = SecretBytes(zeroedCount: 32)
        let status = out.withUnsafeMutableBytes { o in
            scalar.withUnsafeBytes { s in
                crypto_scalarmult(
                    o.baseAddress!.assumingMemoryBound(to: UInt8.self),
                    s.baseAddress!.assumingMemoryBound(to: UInt8.self), point)
            }
        }
        return status == 0 ? out : nil
    }

    static func scrypt(passphrase: SecretBytes, salt: [UInt8], logN: Int) throws(CryptoError) -> SecretBytes {
        let key = SecretBytes(zeroedCount: 32)
        let status = key.withUnsafeMutableBytes { k in
            passphrase.withUnsafeBytes { p in
                crypto_pwhash_scryptsalsa208sha256_ll(
                    (p.baseAddress ?? UnsafeRawPointer(k.baseAddress!)).assumingMemoryBound(to: UInt8.self), p.count,
                    salt, salt.count,
                    UInt64(1) << UInt64(logN), 8, 1, k.baseAddress!.assumingMemoryBound(to: UInt8.self), 32)
            }
        }
        guard status == 0 else { throw .keyDerivationFailed }
        return key
    }
}
