/// The vault header (`vault_header`, one row): what turns a passphrase into the root key, and the
/// vault's settings.
public protocol VaultHeaderStore: AnyObject {
    /// The header; `StoreError.corrupt` when there is none.
    func header() throws(StoreError) -> VaultHeaderRecord
    /// Replaces the header's passphrase slot (slot 1): its KDF costs, salt and wrapped root key
    /// (an empty `wrapped` leaves slot 1 empty, format 4).
    func replaceHeaderKey(opsLimit: UInt64, memLimit: UInt64, salt: [UInt8], wrapped: [UInt8]) throws(StoreError)
    func setMaxAttachmentBytes(_ bytes: Int) throws(StoreError)
}

/// The vault header: everything needed to turn a passphrase into the root key. Not secret, but
/// every field is bound into `wrappedRootKey`'s associated data, so none can be changed unnoticed.
public struct VaultHeaderRecord: Sendable, Equatable {
    public var formatVersion: Int
    public var vaultID: [UInt8]
    public var kdfAlgorithm: String
    public var kdfOpsLimit: UInt64
    public var kdfMemLimit: UInt64
    public var kdfSalt: [UInt8]
    public var wrappedRootKey: [UInt8]
    /// Largest attachment accepted, in bytes (a policy setting, chosen at `init`).
    public var maxAttachmentBytes: Int
    /// X25519 public key that audit entries are sealed to (its secret is derived from the root key).
    public var auditPublicKey: [UInt8]

    public init(
        formatVersion: Int, vaultID: [UInt8], kdfAlgorithm: String, kdfOpsLimit: UInt64,
        kdfMemLimit: UInt64, kdfSalt: [UInt8], wrappedRootKey: [UInt8], maxAttachmentBytes: Int,
        auditPublicKey: [UInt8]
    ) {
        self.formatVersion = formatVersion
        self.vaultID = vaultID
        self.kdfAlgorithm = kdfAlgorithm
        self.kdfOpsLimit = kdfOpsLimit
        self.kdfMemLimit = kdfMemLimit
        self.kdfSalt = kdfSalt
        self.wrappedRootKey = wrappedRootKey
        self.maxAttachmentBytes = maxAttachmentBytes
        self.auditPublicKey = auditPublicKey
    }
}
