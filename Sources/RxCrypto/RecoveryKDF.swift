import CSodium

/// Turns a recovery code (format 4 key slots) into the key that wraps the vault root key:
/// keyed BLAKE2b-256 (libsodium `crypto_generichash`), the code's secret as the key and the
/// slot's place (vault, slot, salt) as the message.
///
/// A recovery code carries 160 random bits, not a human choice: an attacker holding the file
/// must try 2^159 codes on average whatever each try costs, so a memory-hard KDF (Argon2id, as
/// passphrases get) would add nothing an attacker notices and only slow the owner down. What the
/// derivation must do is what a keyed hash does: give an independent key per vault and slot, so
/// one code's key never opens another slot (SECURITY.md, "Ways in").
public enum RecoveryKDF {
    public static let algorithmName = "blake2b256-keyed"
    public static let saltLength = 16
    /// Shortest secret accepted (libsodium's minimum key length for keyed BLAKE2b).
    public static let minimumSecretLength = Int(crypto_generichash_KEYBYTES_MIN)

    public static func deriveKey(secret: SecretBytes, context: [UInt8]) throws(CryptoError) -> SecretBytes {
        try Sodium.ready()
        guard secret.count >= minimumSecretLength, secret.count <= Int(crypto_generichash_KEYBYTES_MAX) else {
            throw .malformed("recovery secret length")
        }
        let key = SecretBytes(zeroedCount: 32)
        let status: Int32 = key.withUnsafeMutableBytes { k in
            secret.withUnsafeBytes { s in
                crypto_generichash(
                    k.baseAddress!.assumingMemoryBound(to: UInt8.self), k.count, context, UInt64(context.count),
                    s.baseAddress!.assumingMemoryBound(to: UInt8.self), s.count)
            }
        }
        guard status == 0 else { throw .keyDerivationFailed }
        return key
    }
}
