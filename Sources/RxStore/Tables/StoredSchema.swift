/// The vault's tables at the current format (docs/format.md), described once for every engine
/// (`StoredTable`). Plaintext columns hold only what joins and lookups need: random ids,
/// version numbers and the KDF header; everything about a prescription is ciphertext.
///
/// A vault is created with these tables (formats 4 to 6 have the same ones). A format that adds
/// a table adds it here and in its step (`SchemaStore.advanceFormat`), which creates it from this
/// description in the engine's SQL. The older steps of vault files (formats 1 to 4) keep the SQL
/// they always ran (`SQLiteFormatUpgrade`): what they made is what these tables generate,
/// space for space, which `StoredSchemaTests` checks.
public enum StoredSchema {
    /// The format a vault is created at and the newest this rxvault reads.
    public static let currentFormat = 8
    /// The oldest format a store is created at (for `copy`, which keeps its source's format):
    /// format 4 has the tables of formats 5 to 7.
    public static let oldestCreatedFormat = 4

    /// Every table, in an order in which each is created after those it references.
    public static let tables: [StoredTable] = [
        vaultHeader, prescription, prescriptionVersion, attachment, attachmentChunk, client, accessGrant, auditEntry,
        searchIndex, auditHead, vaultState, manifest, person, personBuckets, keySlot, keyRing
    ]

    /// What turns a passphrase into the root key, and the vault's settings (one row).
    static let vaultHeader = StoredTable(
        "vault_header",
        [
            .singleton, StoredColumn("format_version", .integer),
            StoredColumn("vault_id", .blob, check: "length(vault_id) = 16"), StoredColumn("kdf_algorithm", .text),
            StoredColumn("kdf_ops_limit", .integer), StoredColumn("kdf_mem_limit", .integer),
            StoredColumn("kdf_salt", .blob), StoredColumn("wrapped_root_key", .blob),
            StoredColumn("max_attachment_bytes", .integer, check: "max_attachment_bytes > 0"),
            StoredColumn("audit_public_key", .blob, check: "length(audit_public_key) = 32")
        ])

    static let prescription = StoredTable("prescription", [.id(nullable: true)])

    static let prescriptionVersion = StoredTable(
        "prescription_version",
        [
            StoredColumn("prescription_id", .id, references: "prescription"),
            StoredColumn("version", .integer, check: "version >= 1"), StoredColumn("wrapped_key", .blob),
            StoredColumn("content", .blob), StoredColumn("mac", .blob)
        ], compositeKey: ["prescription_id", "version"])

    static let attachment = StoredTable(
        "attachment",
        [
            .id(), StoredColumn("prescription_id", .id, references: "prescription"),
            StoredColumn("wrapped_key", .blob), StoredColumn("metadata", .blob),
            StoredColumn("stream_header", .blob, check: "length(stream_header) = 24"), StoredColumn("mac", .blob)
        ], keepsInsertionOrder: true,
        indexes: [StoredIndex(name: "attachment_by_prescription", columns: ["prescription_id"])])

    static let attachmentChunk = StoredTable(
        "attachment_chunk",
        [
            StoredColumn("attachment_id", .id, references: "attachment"),
            StoredColumn("seq", .integer, check: "seq >= 0"), StoredColumn("data", .blob)
        ], compositeKey: ["attachment_id", "seq"])

    /// Format 3: a client is found by its lookup tag, not its public key.
    static let client = StoredTable(
        "client",
        [
            .id(), StoredColumn("lookup", .blob, unique: true, check: "length(lookup) = 32"),
            StoredColumn("info", .blob), StoredColumn("mac", .blob)
        ], keepsInsertionOrder: true, format: 3)

    /// Format 3: a grant is found by its reference, a keyed hash of its client and prescription.
    static let accessGrant = StoredTable(
        "access_grant",
        [
            .id(), StoredColumn("client_id", .id, references: "client"),
            StoredColumn("reference", .id, unique: true, check: "length(reference) = 32"),
            StoredColumn("sealed_keys", .blob), StoredColumn("info", .blob), StoredColumn("mac", .blob)
        ], keepsInsertionOrder: true, indexes: [StoredIndex(name: "access_grant_by_client", columns: ["client_id"])],
        format: 3)

    static let auditEntry = StoredTable(
        "audit_entry",
        [
            StoredColumn("seq", .integer, primaryKey: true, check: "seq >= 1"), StoredColumn("entry", .blob),
            StoredColumn("hash", .blob, check: "length(hash) = 32"), StoredColumn("mac", .blob, nullable: true)
        ])

    static let searchIndex = bucketTable("search_index")

    static let auditHead = StoredTable(
        "audit_head",
        [.singleton, StoredColumn("seq", .integer), StoredColumn("hash", .blob), StoredColumn("mac", .blob)])

    /// Format 2: the owner's state root (one row) and the manifest it covers.
    static let vaultState = StoredTable(
        "vault_state",
        [
            .singleton, StoredColumn("write_counter", .integer, check: "write_counter >= 0"),
            StoredColumn("state", .blob), StoredColumn("mac", .blob)
        ], format: 2)

    static let manifest = bucketTable("manifest", format: 2)

    /// Format 4: patients. The table is called `person`: the vault names no field of what it
    /// holds (the word "patient" appears nowhere in it, schema included).
    static let person = StoredTable(
        "person", [.id(), StoredColumn("info", .blob), StoredColumn("mac", .blob)], format: 4)

    /// Format 4: the patient bucket hashes (one row; a vault file gets it at its first owner
    /// write by an rxvault that knows it, `setPatientBuckets`).
    static let personBuckets = StoredTable(
        "person_buckets", [.singleton, StoredColumn("content", .blob), StoredColumn("mac", .blob)], format: 4)

    /// Format 4: the ways into the vault besides the header's passphrase.
    static let keySlot = StoredTable(
        "key_slot",
        [
            StoredColumn("id", .integer, primaryKey: true, check: "id >= 2 AND id <= 8"),
            StoredColumn("kind", .text, check: "kind IN ('passphrase', 'recovery')"),
            StoredColumn("kdf_algorithm", .text),
            StoredColumn("kdf_ops_limit", .integer, check: "kdf_ops_limit >= 0"),
            StoredColumn("kdf_mem_limit", .integer, check: "kdf_mem_limit >= 0"),
            StoredColumn("kdf_salt", .blob), StoredColumn("wrapped_root_key", .blob), StoredColumn("info", .blob)
        ], format: 4)

    /// Format 4: the owner's commitment to the key slots and the header's settings (one row).
    static let keyRing = StoredTable(
        "key_ring",
        [
            .singleton, StoredColumn("write_counter", .integer, check: "write_counter >= 0"),
            StoredColumn("content", .blob), StoredColumn("mac", .blob)
        ], format: 4)

    /// 256 sealed buckets by the first byte of an id.
    private static func bucketTable(_ name: String, format: Int = 1) -> StoredTable {
        StoredTable(
            name,
            [
                StoredColumn("bucket", .integer, primaryKey: true, check: "bucket >= 0 AND bucket < 256"),
                StoredColumn("content", .blob)
            ], format: format)
    }
}
