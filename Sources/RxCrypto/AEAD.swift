import CSodium

/// XChaCha20-Poly1305 (IETF) with a random 24-byte nonce stored in front of the ciphertext.
///
/// Every ciphertext in the vault is sealed with associated data that says where it belongs
/// (vault id, object type, object id, version): the same bytes copied to another place fail to
/// open. Random 192-bit nonces make nonce reuse under one key negligible without any counter state.
public enum AEAD {
    public static let keyLength = Int(crypto_aead_xchacha20poly1305_ietf_KEYBYTES)
    public static let nonceLength = Int(crypto_aead_xchacha20poly1305_ietf_NPUBBYTES)
    public static let tagLength = Int(crypto_aead_xchacha20poly1305_ietf_ABYTES)
    /// Bytes a sealed box adds to its plaintext.
    public static let overhead = nonceLength + tagLength

    /// Returns nonce ‖ ciphertext ‖ tag.
    public static func seal(_ plaintext: UnsafeRawBufferPointer, key: SecretBytes, associatedData: [UInt8])
        throws(CryptoError) -> [UInt8]
    {
        try Sodium.ready()
        guard key.count == keyLength else { throw .malformed("key length") }
        var out = [UInt8](repeating: 0, count: nonceLength + plaintext.count + tagLength)
        out.withUnsafeMutableBytes { o in
            let nonce = o.baseAddress!
            randombytes_buf(nonce, nonceLength)
            var written: UInt64 = 0
            key.withUnsafeBytes { k in
                _ = crypto_aead_xchacha20poly1305_ietf_encrypt(
                    o.baseAddress!.advanced(by: nonceLength).assumingMemoryBound(to: UInt8.self), &written,
                    plaintext.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(plaintext.count),
                    associatedData, UInt64(associatedData.count), nil,
                    nonce.assumingMemoryBound(to: UInt8.self), k.baseAddress!.assumingMemoryBound(to: UInt8.self))
            }
        }
        return out
    }

    /// Seals with the nonce given instead of a random one: only for a nonce that is a keyed
    /// hash of the plaintext under a key of its own (as `sync` names its chunks), so two boxes
    /// share a nonce only when they share the plaintext, and are then the same bytes. Two
    /// devices that seal the same chunk write the same file, which a sync tool carrying the
    /// folder sees as one, never as a conflict.
    public static func seal(_ plaintext: [UInt8], key: SecretBytes, associatedData: [UInt8], nonce: [UInt8])
        throws(CryptoError) -> [UInt8]
    {
        try Sodium.ready()
        guard key.count == keyLength else { throw .malformed("key length") }
        guard nonce.count == nonceLength else { throw .malformed("nonce length") }
        var out = nonce + [UInt8](repeating: 0, count: plaintext.count + tagLength)
        out.withUnsafeMutableBytes { o in
            var written: UInt64 = 0
            key.withUnsafeBytes { k in
                _ = crypto_aead_xchacha20poly1305_ietf_encrypt(
                    o.baseAddress!.advanced(by: nonceLength).assumingMemoryBound(to: UInt8.self), &written,
                    plaintext, UInt64(plaintext.count), associatedData, UInt64(associatedData.count), nil,
                    nonce, k.baseAddress!.assumingMemoryBound(to: UInt8.self))
            }
        }
        return out
    }

    public static func seal(_ plaintext: [UInt8], key: SecretBytes, associatedData: [UInt8]) throws(CryptoError)
        -> [UInt8]
    {
        let result: Result<[UInt8], CryptoError> = plaintext.withUnsafeBytes { p in
            do throws(CryptoError) { return .success(try seal(p, key: key, associatedData: associatedData)) } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    public static func seal(_ secret: SecretBytes, key: SecretBytes, associatedData: [UInt8]) throws(CryptoError)
        -> [UInt8]
    {
        let result: Result<[UInt8], CryptoError> = secret.withUnsafeBytes { p in
            do throws(CryptoError) { return .success(try seal(p, key: key, associatedData: associatedData)) } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    /// Opens what `seal` produced into zeroed-on-release memory; fails if any byte of the box, the
    /// key or the associated data differs.
    public static func open(_ box: [UInt8], key: SecretBytes, associatedData: [UInt8]) throws(CryptoError)
        -> SecretBytes
    {
        try Sodium.ready()
        guard key.count == keyLength else { throw .malformed("key length") }
        guard box.count >= overhead else { throw .authenticationFailed }
        let plain = SecretBytes(zeroedCount: box.count - overhead)
        let status: Int32 = box.withUnsafeBytes { b in
            plain.withUnsafeMutableBytes { p in
                key.withUnsafeBytes { k in
                    var written: UInt64 = 0
                    return crypto_aead_xchacha20poly1305_ietf_decrypt(
                        p.baseAddress?.assumingMemoryBound(to: UInt8.self), &written, nil,
                        b.baseAddress!.advanced(by: nonceLength).assumingMemoryBound(to: UInt8.self),
                        UInt64(box.count - nonceLength),
                        associatedData, UInt64(associatedData.count),
                        b.baseAddress!.assumingMemoryBound(to: UInt8.self),
                        k.baseAddress!.assumingMemoryBound(to: UInt8.self))
                }
            }
        }
        guard status == 0 else { throw .authenticationFailed }
        return plain
    }
}
