/// Each record's row, written once for every engine (`StoredRecord`): the columns in the order
/// they are read and bound, the checks on each value read (`StoredRange`, fixed lengths), and the
/// values written.

extension VaultHeaderRecord: StoredRecord {
    public static let table = "vault_header"
    public static let keyColumns = 0
    public static let columns = [
        "format_version", "vault_id", "kdf_algorithm", "kdf_ops_limit", "kdf_mem_limit", "kdf_salt",
        "wrapped_root_key", "max_attachment_bytes", "audit_public_key"
    ]

    public init(row: some StoredRowReading) throws(StoreError) {
        self.init(
            formatVersion: try row.integer(0, in: StoredRange.positive), vaultID: try row.blob(1, count: 16),
            kdfAlgorithm: try row.text(2), kdfOpsLimit: try row.unsigned(3), kdfMemLimit: try row.unsigned(4),
            kdfSalt: try row.blob(5), wrappedRootKey: try row.blob(6),
            maxAttachmentBytes: try row.integer(7, in: StoredRange.positive),
            auditPublicKey: try row.blob(8, count: 32))
    }

    public var storedValues: [StoredValue] {
        [
            .integer(Int64(formatVersion)), .blob(vaultID), .text(kdfAlgorithm), .integer(Int64(kdfOpsLimit)),
            .integer(Int64(kdfMemLimit)), .blob(kdfSalt), .blob(wrappedRootKey), .integer(Int64(maxAttachmentBytes)),
            .blob(auditPublicKey)
        ]
    }
}

extension KeySlotRecord: StoredRecord {
    public static let table = "key_slot"
    public static let columns = [
        "id", "kind", "kdf_algorithm", "kdf_ops_limit", "kdf_mem_limit", "kdf_salt", "wrapped_root_key", "info"
    ]

    public init(row: some StoredRowReading) throws(StoreError) {
        self.init(
            id: try row.integer(0, in: StoredRange.keySlot), kind: try row.text(1), kdfAlgorithm: try row.text(2),
            kdfOpsLimit: try row.unsigned(3), kdfMemLimit: try row.unsigned(4), kdfSalt: try row.blob(5),
            wrappedRootKey: try row.blob(6), info: try row.blob(7))
    }

    public var storedValues: [StoredValue] {
        [
            .integer(Int64(id)), .text(kind), .text(kdfAlgorithm), .integer(Int64(kdfOpsLimit)),
            .integer(Int64(kdfMemLimit)), .blob(kdfSalt), .blob(wrappedRootKey), .blob(info)
        ]
    }
}

extension KeyRingRecord: StoredRecord {
    public static let table = "key_ring"
    public static let keyColumns = 0
    public static let columns = ["write_counter", "content", "mac"]

    public init(row: some StoredRowReading) throws(StoreError) {
        self.init(
            writeCounter: try row.integer(0, in: StoredRange.counter), content: try row.blob(1), mac: try row.blob(2))
    }

    public var storedValues: [StoredValue] { [.integer(Int64(writeCounter)), .blob(content), .blob(mac)] }
}

extension VaultStateRecord: StoredRecord {
    public static let table = "vault_state"
    public static let keyColumns = 0
    public static let columns = ["write_counter", "state", "mac"]

    public init(row: some StoredRowReading) throws(StoreError) {
        self.init(
            writeCounter: try row.integer(0, in: StoredRange.counter), state: try row.blob(1), mac: try row.blob(2))
    }

    public var storedValues: [StoredValue] { [.integer(Int64(writeCounter)), .blob(state), .blob(mac)] }
}

extension PrescriptionVersionRecord: StoredRecord {
    public static let table = "prescription_version"
    public static let keyColumns = 2
    public static let columns = ["prescription_id", "version", "wrapped_key", "content", "mac"]

    public init(row: some StoredRowReading) throws(StoreError) {
        self.init(
            prescriptionID: try row.id(0), version: try row.integer(1, in: StoredRange.version),
            wrappedKey: try row.blob(2), content: try row.blob(3), mac: try row.blob(4))
    }

    public var storedValues: [StoredValue] {
        [.text(prescriptionID.hex), .integer(Int64(version)), .blob(wrappedKey), .blob(content), .blob(mac)]
    }
}

extension AttachmentRecord: StoredRecord {
    public static let table = "attachment"
    public static let columns = ["id", "prescription_id", "wrapped_key", "metadata", "stream_header", "mac"]

    public init(row: some StoredRowReading) throws(StoreError) {
        self.init(
            id: try row.id(0), prescriptionID: try row.id(1), wrappedKey: try row.blob(2),
            metadata: try row.blob(3), streamHeader: try row.blob(4, count: 24), mac: try row.blob(5))
    }

    public var storedValues: [StoredValue] {
        [.text(id.hex), .text(prescriptionID.hex), .blob(wrappedKey), .blob(metadata), .blob(streamHeader), .blob(mac)]
    }
}

extension ClientRecord: StoredRecord {
    public static let table = "client"
    /// `lookup` is `public_key` in a file before format 3 (`Schema.clientLookupColumn`).
    public static let columns = ["id", "lookup", "info", "mac"]

    /// The lookup tag (format 3) and the public key before it are both 32 bytes.
    public init(row: some StoredRowReading) throws(StoreError) {
        self.init(id: try row.id(0), lookup: try row.blob(1, count: 32), info: try row.blob(2), mac: try row.blob(3))
    }

    public var storedValues: [StoredValue] { [.text(id.hex), .blob(lookup), .blob(info), .blob(mac)] }
}

extension GrantRecord: StoredRecord {
    public static let table = "access_grant"
    /// `reference` is `prescription_id` in a file before format 3 (`Schema.grantReferenceColumn`).
    public static let columns = ["id", "client_id", "reference", "sealed_keys", "info", "mac"]

    /// The reference is 32 hex digits in every format: a keyed hash's 16 bytes (3), a
    /// prescription id (1 and 2).
    public init(row: some StoredRowReading) throws(StoreError) {
        self.init(
            id: try row.id(0), clientID: try row.id(1), reference: try row.hexDigits(2), sealedKeys: try row.blob(3),
            info: try row.blob(4), mac: try row.blob(5))
    }

    public var storedValues: [StoredValue] {
        [.text(id.hex), .text(clientID.hex), .text(reference), .blob(sealedKeys), .blob(info), .blob(mac)]
    }
}

extension AuditEntryRecord: StoredRecord {
    public static let table = "audit_entry"
    public static let columns = ["seq", "entry", "hash", "mac"]

    public init(row: some StoredRowReading) throws(StoreError) {
        self.init(
            sequence: try row.integer(0, in: StoredRange.auditEntry), entry: try row.blob(1),
            hash: try row.blob(2, count: 32), mac: try row.optionalBlob(3))
    }

    public var storedValues: [StoredValue] {
        [.integer(Int64(sequence)), .blob(entry), .blob(hash), mac.map { .blob($0) } ?? .null]
    }
}

extension PatientRecord: StoredRecord {
    public static let table = "person"
    public static let columns = ["id", "info", "mac"]

    public init(row: some StoredRowReading) throws(StoreError) {
        self.init(id: try row.id(0), info: try row.blob(1), mac: try row.blob(2))
    }

    public var storedValues: [StoredValue] { [.text(id.hex), .blob(info), .blob(mac)] }
}

extension PatientBucketsRecord: StoredRecord {
    public static let table = "person_buckets"
    public static let keyColumns = 0
    public static let columns = ["content", "mac"]

    public init(row: some StoredRowReading) throws(StoreError) {
        self.init(content: try row.blob(0), mac: try row.blob(1))
    }

    public var storedValues: [StoredValue] { [.blob(content), .blob(mac)] }
}

/// The rows of the two bucket tables (`search_index`, `manifest`) and the audit head, which are
/// no record type of their own: read here once for both engines.
extension StoredRowReading {
    /// A bucket row: its number (0...255) and content.
    public func bucket() throws(StoreError) -> (Int, [UInt8]) {
        (try integer(0, in: StoredRange.bucket), try blob(1))
    }

    /// The `audit_head` row (`seq, hash, mac`).
    public func auditHead() throws(StoreError) -> (sequence: Int, hash: [UInt8], mac: [UInt8]) {
        (try integer(0, in: StoredRange.counter), try blob(1, count: 32), try blob(2))
    }

    /// The state root's stamp (`write_counter, mac`).
    public func stateStamp() throws(StoreError) -> (counter: Int, mac: [UInt8]) {
        (try integer(0, in: StoredRange.counter), try blob(1))
    }
}
