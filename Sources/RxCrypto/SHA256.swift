import CSodium

/// Incremental SHA-256 (libsodium), for the attachment hashes users compare with `sha256sum`.
public final class SHA256 {
    private var state = crypto_hash_sha256_state()

    public init() {
        _ = try? Sodium.ready()
        crypto_hash_sha256_init(&state)
    }

    public func update(_ bytes: UnsafeRawBufferPointer) {
        guard bytes.count > 0 else { return }
        crypto_hash_sha256_update(&state, bytes.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt64(bytes.count))
    }

    public func update(_ bytes: [UInt8]) { bytes.withUnsafeBytes { update($0) } }

    /// The digest as 64 lower-case hex digits.
    public func finalHex() -> String {
        finalBytes().map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
    }

    /// The 32-byte digest.
    public func finalBytes() -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: Int(crypto_hash_sha256_BYTES))
        crypto_hash_sha256_final(&state, &digest)
        return digest
    }

    public static func hash(_ bytes: [UInt8]) -> [UInt8] {
        let h = SHA256()
        h.update(bytes)
        return h.finalBytes()
    }
}
