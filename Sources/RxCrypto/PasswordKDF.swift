import CSodium

/// Argon2id (libsodium `crypto_pwhash`, ALG_ARGON2ID13) turning a passphrase into the key that
/// wraps the vault root key. Parameters and salt are stored in the vault header so a vault made
/// with any preset opens anywhere; the header's copy is bound into the wrapped key's associated
/// data, so lowering them in the file is detected.
public struct PasswordKDF: Hashable, Sendable {
    public let opsLimit: UInt64
    public let memLimit: UInt64

    public init(opsLimit: UInt64, memLimit: UInt64) {
        self.opsLimit = opsLimit
        self.memLimit = memLimit
    }

    /// libsodium's presets: interactive (ops 2, 64 MiB), moderate (ops 3, 256 MiB), sensitive (ops 4, 1 GiB).
    public enum Preset: String, CaseIterable, Sendable {
        case interactive, moderate, sensitive
    }

    public init(preset: Preset) {
        switch preset {
        case .interactive:
            self.init(
                opsLimit: UInt64(crypto_pwhash_OPSLIMIT_INTERACTIVE),
                memLimit: UInt64(crypto_pwhash_MEMLIMIT_INTERACTIVE))
        case .moderate:
            self.init(
                opsLimit: UInt64(crypto_pwhash_OPSLIMIT_MODERATE), memLimit: UInt64(crypto_pwhash_MEMLIMIT_MODERATE))
        case .sensitive:
            self.init(
                opsLimit: UInt64(crypto_pwhash_OPSLIMIT_SENSITIVE), memLimit: UInt64(crypto_pwhash_MEMLIMIT_SENSITIVE))
        }
    }

    /// The preset these parameters match, if any (for `status`).
    public var preset: Preset? { Preset.allCases.first { PasswordKDF(preset: $0) == self } }

    public static let algorithmName = "argon2id13"
    public static let saltLength = Int(crypto_pwhash_SALTBYTES)

    /// Whether libsodium accepts these limits; checked before use because they come from a file.
    public var isWithinLibraryLimits: Bool {
        opsLimit >= UInt64(crypto_pwhash_opslimit_min()) && opsLimit <= UInt64(crypto_pwhash_opslimit_max())
            && memLimit >= UInt64(crypto_pwhash_memlimit_min())
            && memLimit <= min(UInt64(crypto_pwhash_memlimit_max()), 1 << 32)
    }

    /// Derives a 32-byte key from `passphrase` and `salt`.
    public func deriveKey(passphrase: SecretBytes, salt: [UInt8]) throws(CryptoError) -> SecretBytes {
        try Sodium.ready()
        guard salt.count == Self.saltLength else { throw .malformed("KDF salt") }
        guard isWithinLibraryLimits else { throw .malformed("KDF parameters") }
        let key = SecretBytes(zeroedCount: 32)
        let status: Int32 = key.withUnsafeMutableBytes { k in
            passphrase.withUnsafeBytes { p in
                crypto_pwhash(
                    k.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt64(k.count),
                    p.baseAddress!.assumingMemoryBound(to: CChar.self), UInt64(p.count),
                    salt, opsLimit, Int(memLimit), crypto_pwhash_ALG_ARGON2ID13)
            }
        }
        guard status == 0 else { throw .keyDerivationFailed }
        return key
    }
}
