/// What can go wrong in RxCrypto. No case carries key material or plaintext.
public enum CryptoError: Error, Equatable, Sendable, CustomStringConvertible {
    /// libsodium could not initialise (no entropy source).
    case libraryUnavailable
    /// Authentication failed: wrong key, or the ciphertext, nonce or its bound context was changed.
    case authenticationFailed
    /// Input that cannot be a ciphertext of ours (too short, wrong key length).
    case malformed(String)
    /// Argon2id could not run with these parameters (usually: not enough memory).
    case keyDerivationFailed

    public var description: String {
        switch self {
        case .libraryUnavailable: return "libsodium could not be initialised"
        case .authenticationFailed: return "authentication failed"
        case .malformed(let what): return "malformed \(what)"
        case .keyDerivationFailed: return "key derivation failed (not enough memory for the KDF parameters?)"
        }
    }
}
