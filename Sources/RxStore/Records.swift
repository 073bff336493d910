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

    public init(formatVersion: Int, vaultID: [UInt8], kdfAlgorithm: String, kdfOpsLimit: UInt64,
                kdfMemLimit: UInt64, kdfSalt: [UInt8], wrappedRootKey: [UInt8], maxAttachmentBytes: Int,
                auditPublicKey: [UInt8]) {
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

/// One stored version of a prescription: its data key wrapped under the vault's key-wrapping
/// key, and its content sealed under that data key. Both are bound to (vault, id, version).
public struct PrescriptionVersionRecord: Sendable, Equatable {
    /// 32 lower-case hex digits of a random 128-bit id.
    public var prescriptionID: String
    public var version: Int
    public var wrappedKey: [UInt8]
    public var content: [UInt8]
    /// The owner's MAC over the row (record-MAC sub-key).
    public var mac: [UInt8]

    public init(prescriptionID: String, version: Int, wrappedKey: [UInt8], content: [UInt8], mac: [UInt8]) {
        self.prescriptionID = prescriptionID
        self.version = version
        self.wrappedKey = wrappedKey
        self.content = content
        self.mac = mac
    }
}

/// An attachment: its data key wrapped under the key-wrapping key, its sealed metadata (name,
/// type, size, hash...) and the header of the secretstream its content is stored in, chunk by
/// chunk, in `attachment_chunk`.
public struct AttachmentRecord: Sendable, Equatable {
    public var id: String
    public var prescriptionID: String
    public var wrappedKey: [UInt8]
    public var metadata: [UInt8]
    public var streamHeader: [UInt8]
    /// The owner's MAC over the row (record-MAC sub-key).
    public var mac: [UInt8]

    public init(id: String, prescriptionID: String, wrappedKey: [UInt8], metadata: [UInt8], streamHeader: [UInt8], mac: [UInt8]) {
        self.id = id
        self.prescriptionID = prescriptionID
        self.wrappedKey = wrappedKey
        self.metadata = metadata
        self.streamHeader = streamHeader
        self.mac = mac
    }
}

/// A client app: how it is found when it opens the vault with its identity (`lookup`), its
/// owner-only info (name, added, and from format 3 its public key; sealed) and a MAC under the
/// grant sub-key.
public struct ClientRecord: Sendable, Equatable {
    public var id: String
    /// Format 1 and 2: the client's X25519 public key. Format 3: its lookup tag, which only the
    /// owner and the client can compute (the public key is then inside `info`).
    public var lookup: [UInt8]
    public var info: [UInt8]
    public var mac: [UInt8]

    public init(id: String, lookup: [UInt8], info: [UInt8], mac: [UInt8]) {
        self.id = id
        self.lookup = lookup
        self.info = info
        self.mac = mac
    }
}

/// A grant: the keys a client may use (sealed to its public key), the owner's sealed view of
/// the grant (dates, scope; from format 3 also its prescription) and a MAC over the whole row
/// under the grant sub-key.
public struct GrantRecord: Sendable, Equatable {
    public var id: String
    public var clientID: String
    /// Format 1 and 2: the prescription id. Format 3: the grant's reference, a keyed hash of its
    /// client and prescription that only the owner can compute (32 hex digits).
    public var reference: String
    public var sealedKeys: [UInt8]
    public var info: [UInt8]
    public var mac: [UInt8]

    public init(id: String, clientID: String, reference: String, sealedKeys: [UInt8], info: [UInt8], mac: [UInt8]) {
        self.id = id
        self.clientID = clientID
        self.reference = reference
        self.sealedKeys = sealedKeys
        self.info = info
        self.mac = mac
    }
}

/// One audit-log entry: sealed to the vault's audit key, chained by hash, MAC'd by the owner
/// (nil until the owner's next write when a client wrote it).
public struct AuditEntryRecord: Sendable, Equatable {
    public var sequence: Int
    public var entry: [UInt8]
    public var hash: [UInt8]
    public var mac: [UInt8]?

    public init(sequence: Int, entry: [UInt8], hash: [UInt8], mac: [UInt8]?) {
        self.sequence = sequence
        self.entry = entry
        self.hash = hash
        self.mac = mac
    }
}

/// The owner's state root (format 2): the write counter and the committed state, MAC'd by the
/// owner (RxVault encodes `state` and checks `mac`; the store only keeps them).
public struct VaultStateRecord: Sendable, Equatable {
    public var writeCounter: Int
    public var state: [UInt8]
    public var mac: [UInt8]

    public init(writeCounter: Int, state: [UInt8], mac: [UInt8]) {
        self.writeCounter = writeCounter
        self.state = state
        self.mac = mac
    }
}

/// The one `person_buckets` row: the patient bucket hashes (with the patients hash they were
/// computed with) and the owner's MAC over them, under the state sub-key (docs/format.md).
public struct PatientBucketsRecord: Sendable, Equatable {
    public var content: [UInt8]
    public var mac: [UInt8]

    public init(content: [UInt8], mac: [UInt8]) {
        self.content = content
        self.mac = mac
    }
}

/// A patient (format 4): the owner's sealed info (name, birth date, the ids of patients merged
/// into this one) and the owner's MAC over the row (record-MAC sub-key).
public struct PatientRecord: Sendable, Equatable {
    /// 32 lower-case hex digits of a random 128-bit id.
    public var id: String
    public var info: [UInt8]
    public var mac: [UInt8]

    public init(id: String, info: [UInt8], mac: [UInt8]) {
        self.id = id
        self.info = info
        self.mac = mac
    }
}

/// A way into the vault besides the header's passphrase (format 4, `key_slot`): the root key
/// wrapped under a key derived from another passphrase or from a recovery code. The KDF fields
/// say how that key is derived; all of them are in the wrapped key's associated data.
public struct KeySlotRecord: Sendable, Equatable {
    /// 2...8 (slot 1 is the header's passphrase).
    public var id: Int
    /// "passphrase" or "recovery".
    public var kind: String
    public var kdfAlgorithm: String
    public var kdfOpsLimit: UInt64
    public var kdfMemLimit: UInt64
    public var kdfSalt: [UInt8]
    public var wrappedRootKey: [UInt8]
    /// The owner's sealed label and creation time.
    public var info: [UInt8]

    public init(id: Int, kind: String, kdfAlgorithm: String, kdfOpsLimit: UInt64, kdfMemLimit: UInt64,
                kdfSalt: [UInt8], wrappedRootKey: [UInt8], info: [UInt8]) {
        self.id = id
        self.kind = kind
        self.kdfAlgorithm = kdfAlgorithm
        self.kdfOpsLimit = kdfOpsLimit
        self.kdfMemLimit = kdfMemLimit
        self.kdfSalt = kdfSalt
        self.wrappedRootKey = wrappedRootKey
        self.info = info
    }
}

/// The owner's commitment to the key slots and the header's settings (format 4, `key_ring`):
/// `content` lists what the owner wrote, `mac` binds it to the state root's write counter.
public struct KeyRingRecord: Sendable, Equatable {
    public var writeCounter: Int
    public var content: [UInt8]
    public var mac: [UInt8]

    public init(writeCounter: Int, content: [UInt8], mac: [UInt8]) {
        self.writeCounter = writeCounter
        self.content = content
        self.mac = mac
    }
}
