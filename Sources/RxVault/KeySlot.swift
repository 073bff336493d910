import RxCrypto
import RxStore

/// One way into the vault (format 4; docs/format.md, "Format 4: key slots"): the root key
/// wrapped under a key derived from a passphrase (Argon2id) or a recovery code (keyed BLAKE2b).
/// Slot 1 is the header's passphrase; slots 2 to 8 are `key_slot` rows. Every slot wraps the
/// same root key, as LUKS key slots wrap the same volume key.
public struct KeySlot: Sendable, Equatable {
    public enum Kind: String, Sendable, CaseIterable {
        case passphrase, recovery
    }

    public static let wrappedLength = 32 + AEAD.overhead
    /// LUKS1's number: enough for a household, few enough that a hostile file cannot make a
    /// wrong passphrase cost more than eight derivations.
    public static let maximumID = 8

    public let id: Int
    public let kind: Kind
    let algorithm: String
    /// The Argon2id costs of a passphrase slot; nil for a recovery slot.
    public let kdf: PasswordKDF?
    let salt: [UInt8]
    let wrappedRootKey: [UInt8]
    /// The owner's sealed label and creation time (empty for slot 1, which has no row).
    let info: [UInt8]

    init(
        id: Int, kind: Kind, algorithm: String, kdf: PasswordKDF?, salt: [UInt8], wrappedRootKey: [UInt8], info: [UInt8]
    ) {
        self.id = id
        self.kind = kind
        self.algorithm = algorithm
        self.kdf = kdf
        self.salt = salt
        self.wrappedRootKey = wrappedRootKey
        self.info = info
    }

    /// A `key_slot` row as read from the file, refused unless it is shaped as rxvault writes it
    /// (ids in order, known kinds, KDF costs within what `init --kdf` offers, as for the header).
    /// `headerSlot` admits slot 1, the header's passphrase, as a backup's header states it.
    init(_ row: KeySlotRecord, after previous: Int, headerSlot: Bool = false) throws(VaultError) {
        guard row.id > previous, row.id >= (headerSlot ? 1 : 2), row.id <= Self.maximumID,
            let kind = Kind(rawValue: row.kind), row.id > 1 || kind == .passphrase,
            row.wrappedRootKey.count == Self.wrappedLength
        else {
            throw .integrity("key slot \(row.id) is malformed")
        }
        switch kind {
        case .passphrase:
            let kdf = PasswordKDF(opsLimit: row.kdfOpsLimit, memLimit: row.kdfMemLimit)
            guard row.kdfAlgorithm == PasswordKDF.algorithmName, row.kdfSalt.count == PasswordKDF.saltLength,
                kdf.isWithinLibraryLimits,
                VaultHeader.acceptedOpsLimits.contains(kdf.opsLimit),
                VaultHeader.acceptedMemLimits.contains(kdf.memLimit)
            else {
                throw .integrity("key slot \(row.id) has KDF parameters rxvault never writes")
            }
            self.init(
                id: row.id, kind: kind, algorithm: row.kdfAlgorithm, kdf: kdf, salt: row.kdfSalt,
                wrappedRootKey: row.wrappedRootKey, info: row.info)
        case .recovery:
            guard row.kdfAlgorithm == RecoveryKDF.algorithmName, row.kdfSalt.count == RecoveryKDF.saltLength,
                row.kdfOpsLimit == 0, row.kdfMemLimit == 0
            else {
                throw .integrity("key slot \(row.id) has KDF parameters rxvault never writes")
            }
            self.init(
                id: row.id, kind: kind, algorithm: row.kdfAlgorithm, kdf: nil, salt: row.kdfSalt,
                wrappedRootKey: row.wrappedRootKey, info: row.info)
        }
    }

    /// Associated data of a `key_slot` row's wrapped root key: its purpose, the format, the
    /// vault, the slot's id and kind and everything that decides how its key is derived, so a
    /// row moved to another id, another vault, or edited to weaker costs does not open.
    static func associatedData(
        formatVersion: Int, vaultID: [UInt8], id: Int, kind: Kind, algorithm: String,
        opsLimit: UInt64, memLimit: UInt64, salt: [UInt8]
    ) -> [UInt8] {
        AssociatedData.build(
            .keySlot,
            [
                .int(VaultHeader.keyFormat(formatVersion)), .bytes(vaultID), .int(id), .text(kind.rawValue),
                .text(algorithm), .integer(opsLimit), .integer(memLimit), .bytes(salt)
            ])
    }

    /// What a recovery slot's key is derived from besides the code: its place.
    static func recoveryContext(vaultID: [UInt8], id: Int, salt: [UInt8]) -> [UInt8] {
        AssociatedData.build(.recoveryKey, [.bytes(vaultID), .int(id), .bytes(salt)])
    }
}

/// The owner's view of a key slot (`rxvault key list`).
public struct KeySlotSummary: Sendable {
    public let id: Int
    public let kind: KeySlot.Kind
    public let label: String?
    /// ISO 8601 time it was added; nil for slot 1 (the header's passphrase, made at `init`).
    public let created: String?
    public let kdf: PasswordKDF?
    /// Whether this slot opened the vault in this command.
    public let isCurrent: Bool
}

/// What the owner seals into a slot's `info`.
struct KeySlotInfo: Codable {
    var label: String?
    var created: String
}
