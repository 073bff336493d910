/// The vault file's SQLite schema (docs/format.md, "Vault file v1", "Format 2", "Format 3" and
/// "Format 4"): a new file's tables come from their one description (`StoredSchema`, in
/// `SQLiteDialect`'s SQL); the steps that upgrade an older file (`SQLiteFormatUpgrade`) are the
/// SQL they always ran, kept as it was.
enum Schema {
    /// `PRAGMA application_id`: "RxVt". Tells an rxvault vault from any other SQLite file.
    static let applicationID: Int32 = 0x5278_5674
    /// `PRAGMA user_version`: the schema version; migrations step it one at a time.
    static let currentVersion = StoredSchema.currentFormat
    /// The oldest format `create` makes (for `copy`): format 4 has the tables of formats 5 to 7.
    static let oldestCreatedVersion = StoredSchema.oldestCreatedFormat

    /// The tables a vault file is created with: those of the current format, from their one
    /// description (`StoredSchema`), but those it gets at its first write that needs them.
    static var creation: String {
        SQLiteDialect.script(StoredSchema.tables.filter { !madeAtFirstUse.contains($0.name) })
    }

    /// Tables a vault file gets at the first owner write that stores a row in them, by an
    /// rxvault that knows them (`SQLStatements.makeIfMissing`), as every file made before:
    /// `person_buckets` (`setPatientBuckets`).
    static let madeAtFirstUse: Set = [StoredSchema.personBuckets.name]

    /// Format 2: the owner's commitment to the current set of rows. `vault_state` is
    /// one MAC'd row (write counter, hashes of every index and manifest bucket, the client set,
    /// the audit head); `manifest` lists, per prescription, the MACs of its current rows.
    static let version2 = """
        CREATE TABLE vault_state (
            singleton     INTEGER PRIMARY KEY CHECK (singleton = 1),
            write_counter INTEGER NOT NULL CHECK (write_counter >= 0),
            state         BLOB    NOT NULL,
            mac           BLOB    NOT NULL
        ) STRICT;
        CREATE TABLE manifest (
            bucket  INTEGER PRIMARY KEY CHECK (bucket >= 0 AND bucket < 256),
            content BLOB NOT NULL
        ) STRICT;
        """

    /// Format 3 ("what the file reveals without a key"): the client table no longer
    /// holds public keys and grants no longer name their prescription. A client row is found by
    /// its `lookup` tag (a hash of the X25519 secret shared by the client's key and the vault's
    /// audit key: only the owner and that client can compute it); a grant row by its
    /// `reference` (a keyed hash, under an owner sub-key, of its client and prescription). The
    /// prescription id and the client's public key are inside the owner's sealed `info`.
    ///
    /// Run on the format-2 tables inside the upgrade's transaction, after their rows were read
    /// (the caller writes them back in the new form). Grants are dropped first: nothing refers to
    /// them, and once they are gone nothing refers to the old client table either.
    static let version3 = """
        DROP INDEX IF EXISTS access_grant_by_prescription;
        DROP TABLE access_grant;
        DROP TABLE client;
        CREATE TABLE client (
            id     TEXT NOT NULL PRIMARY KEY CHECK (length(id) = 32),
            lookup BLOB NOT NULL UNIQUE CHECK (length(lookup) = 32),
            info   BLOB NOT NULL,
            mac    BLOB NOT NULL
        ) STRICT;
        CREATE TABLE access_grant (
            id          TEXT NOT NULL PRIMARY KEY CHECK (length(id) = 32),
            client_id   TEXT NOT NULL REFERENCES client(id) ON DELETE CASCADE,
            reference   TEXT NOT NULL UNIQUE CHECK (length(reference) = 32),
            sealed_keys BLOB NOT NULL,
            info        BLOB NOT NULL,
            mac         BLOB NOT NULL
        ) STRICT;
        CREATE INDEX access_grant_by_client ON access_grant (client_id);
        """

    /// Format 4, patients: a patient is a record of its own. A prescription's sealed
    /// content names its patient by id; the patient's name and birth date are in `info`, sealed
    /// under the owner-info sub-key and bound to the row's id, and `mac` is the owner's record MAC
    /// over the row. Nothing about a patient (not even which prescriptions are theirs) is in the
    /// clear: the row is a random id and two ciphertexts. The table is called `person`: the file
    /// names no field of what it holds (the word "patient" appears nowhere in it, schema included).
    static let version4Patients = """
        CREATE TABLE person (
            id   TEXT NOT NULL PRIMARY KEY CHECK (length(id) = 32),
            info BLOB NOT NULL,
            mac  BLOB NOT NULL
        ) STRICT;
        """

    /// Format 4, key slots: more ways into the vault than the header's passphrase. Each
    /// `key_slot` row wraps the same root key as the header does (slot 1), under a key derived
    /// from another passphrase (Argon2id, its own salt and costs) or from a recovery code
    /// (keyed BLAKE2b); `info` is the owner's sealed label and creation time. `key_ring` is the
    /// owner's commitment to the set of slots and to the header's settings, MAC'd with the write
    /// counter of the state root it was written with (docs/format.md, "Format 4: key slots").
    static let version4KeySlots = """
        CREATE TABLE key_slot (
            id               INTEGER PRIMARY KEY CHECK (id >= 2 AND id <= 8),
            kind             TEXT    NOT NULL CHECK (kind IN ('passphrase', 'recovery')),
            kdf_algorithm    TEXT    NOT NULL,
            kdf_ops_limit    INTEGER NOT NULL CHECK (kdf_ops_limit >= 0),
            kdf_mem_limit    INTEGER NOT NULL CHECK (kdf_mem_limit >= 0),
            kdf_salt         BLOB    NOT NULL,
            wrapped_root_key BLOB    NOT NULL,
            info             BLOB    NOT NULL
        ) STRICT;
        CREATE TABLE key_ring (
            singleton     INTEGER PRIMARY KEY CHECK (singleton = 1),
            write_counter INTEGER NOT NULL CHECK (write_counter >= 0),
            content       BLOB    NOT NULL,
            mac           BLOB    NOT NULL
        ) STRICT;
        """

    /// The columns that changed meaning in format 3, by schema version.
    static func clientLookupColumn(_ version: Int) -> String { version >= 3 ? "lookup" : "public_key" }
    static func grantReferenceColumn(_ version: Int) -> String { version >= 3 ? "reference" : "prescription_id" }
}
