import CSodium

/// Independent sub-keys from the vault root key, one per purpose (libsodium `crypto_kdf`,
/// BLAKE2b keyed with the root key, context "rxvault1").
///
/// Separate keys mean a weakness in one use (say, the MAC of an audit entry) can never be
/// turned against another (wrapping data keys). Ids are part of the file format: never reuse one.
public enum Subkey: UInt64, CaseIterable, Sendable {
    /// Wraps every data key (DEK) of a record.
    case keyWrapping = 1
    /// MACs grant rows (clients and grants).
    case grantMAC = 2
    /// MACs audit-log entries.
    case auditMAC = 3
    /// Encrypts the search index.
    case index = 4

    static let context: [CChar] = Array("rxvault1".utf8CString.prefix(8))

    /// Derives this sub-key from `root` (32 bytes).
    public func derive(from root: SecretBytes) throws(CryptoError) -> SecretBytes {
        try Sodium.ready()
        guard root.count == Int(crypto_kdf_KEYBYTES) else { throw .malformed("root key length") }
        let key = SecretBytes(zeroedCount: 32)
        key.withUnsafeMutableBytes { k in
            root.withUnsafeBytes { r in
                _ = crypto_kdf_derive_from_key(k.baseAddress!.assumingMemoryBound(to: UInt8.self), 32, rawValue,
                                               Subkey.context, r.baseAddress!.assumingMemoryBound(to: UInt8.self))
            }
        }
        return key
    }
}
