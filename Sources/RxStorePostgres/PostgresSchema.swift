/// The vault's tables in PostgreSQL (docs/format.md, "PostgreSQL"): the file's format-4 tables
/// column for column (`Schema` in RxStore), `bytea` for its blobs, `bigint` for its integers, and
/// the same rule for what is in the clear: random ids, version numbers, the KDF header. The
/// database never holds what the file would not.
///
/// Two differences: `rxvault_schema` holds what the file keeps in its SQLite header (the
/// application id that tells an rxvault vault from other tables, and the schema version), and
/// `position` keeps the order rows were added in, which the file has as its rowid.
///
/// One vault per database (in the schema first on the connection's search path): `init`
/// refuses a database that holds any table already.
enum PostgresSchema {
    /// The same number as the file's `PRAGMA application_id` ("RxVt").
    static let applicationID: Int64 = 0x5278_5674
    /// A database vault is always created at the current format (vaults older than format 4 are
    /// upgraded as files first, then copied).
    static let version = 7
    /// The oldest format a database holds: format 4, which the owner's next write upgrades in
    /// place (`upgradeToFormat5`, then `upgradeToFormat6` and `upgradeToFormat7`).
    static let oldestVersion = 4
    /// The key of the transaction-level advisory lock every owner write takes first: one write at
    /// a time per vault (per database), across processes and machines.
    static let writeLockKey: Int64 = 0x5278_5674

    static let tables: [String] = [
        """
        CREATE TABLE rxvault_schema (
            singleton      integer PRIMARY KEY CHECK (singleton = 1),
            application_id bigint  NOT NULL,
            version        integer NOT NULL
        )
        """,
        """
        CREATE TABLE vault_header (
            singleton        integer PRIMARY KEY CHECK (singleton = 1),
            format_version   bigint NOT NULL,
            vault_id         bytea  NOT NULL CHECK (length(vault_id) = 16),
            kdf_algorithm    text   NOT NULL,
            kdf_ops_limit    bigint NOT NULL,
            kdf_mem_limit    bigint NOT NULL,
            kdf_salt         bytea  NOT NULL,
            wrapped_root_key bytea  NOT NULL,
            max_attachment_bytes bigint NOT NULL CHECK (max_attachment_bytes > 0),
            audit_public_key bytea  NOT NULL CHECK (length(audit_public_key) = 32)
        )
        """,
        "CREATE TABLE prescription (id text COLLATE \"C\" PRIMARY KEY CHECK (length(id) = 32))",
        """
        CREATE TABLE prescription_version (
            prescription_id text COLLATE "C" NOT NULL REFERENCES prescription(id) ON DELETE CASCADE,
            version         bigint NOT NULL CHECK (version >= 1),
            wrapped_key     bytea  NOT NULL,
            content         bytea  NOT NULL,
            mac             bytea  NOT NULL,
            PRIMARY KEY (prescription_id, version)
        )
        """,
        """
        CREATE TABLE attachment (
            id              text COLLATE "C" PRIMARY KEY CHECK (length(id) = 32),
            prescription_id text COLLATE "C" NOT NULL REFERENCES prescription(id) ON DELETE CASCADE,
            wrapped_key     bytea NOT NULL,
            metadata        bytea NOT NULL,
            stream_header   bytea NOT NULL CHECK (length(stream_header) = 24),
            mac             bytea NOT NULL,
            position        bigserial NOT NULL
        )
        """,
        "CREATE INDEX attachment_by_prescription ON attachment (prescription_id)",
        """
        CREATE TABLE attachment_chunk (
            attachment_id text COLLATE "C" NOT NULL REFERENCES attachment(id) ON DELETE CASCADE,
            seq           bigint NOT NULL CHECK (seq >= 0),
            data          bytea  NOT NULL,
            PRIMARY KEY (attachment_id, seq)
        )
        """,
        """
        CREATE TABLE client (
            id       text COLLATE "C" PRIMARY KEY CHECK (length(id) = 32),
            lookup   bytea NOT NULL UNIQUE CHECK (length(lookup) = 32),
            info     bytea NOT NULL,
            mac      bytea NOT NULL,
            position bigserial NOT NULL
        )
        """,
        """
        CREATE TABLE access_grant (
            id          text COLLATE "C" PRIMARY KEY CHECK (length(id) = 32),
            client_id   text COLLATE "C" NOT NULL REFERENCES client(id) ON DELETE CASCADE,
            reference   text COLLATE "C" NOT NULL UNIQUE CHECK (length(reference) = 32),
            sealed_keys bytea NOT NULL,
            info        bytea NOT NULL,
            mac         bytea NOT NULL,
            position    bigserial NOT NULL
        )
        """,
        "CREATE INDEX access_grant_by_client ON access_grant (client_id)",
        """
        CREATE TABLE audit_entry (
            seq   bigint PRIMARY KEY CHECK (seq >= 1),
            entry bytea NOT NULL,
            hash  bytea NOT NULL CHECK (length(hash) = 32),
            mac   bytea
        )
        """,
        """
        CREATE TABLE search_index (
            bucket  bigint PRIMARY KEY CHECK (bucket >= 0 AND bucket < 256),
            content bytea NOT NULL
        )
        """,
        """
        CREATE TABLE audit_head (
            singleton integer PRIMARY KEY CHECK (singleton = 1),
            seq       bigint NOT NULL,
            hash      bytea  NOT NULL,
            mac       bytea  NOT NULL
        )
        """,
        """
        CREATE TABLE vault_state (
            singleton     integer PRIMARY KEY CHECK (singleton = 1),
            write_counter bigint NOT NULL CHECK (write_counter >= 0),
            state         bytea  NOT NULL,
            mac           bytea  NOT NULL
        )
        """,
        """
        CREATE TABLE manifest (
            bucket  bigint PRIMARY KEY CHECK (bucket >= 0 AND bucket < 256),
            content bytea NOT NULL
        )
        """,
        """
        CREATE TABLE person (
            id   text COLLATE "C" PRIMARY KEY CHECK (length(id) = 32),
            info bytea NOT NULL,
            mac  bytea NOT NULL
        )
        """,
        """
        CREATE TABLE person_buckets (
            singleton integer PRIMARY KEY CHECK (singleton = 1),
            content   bytea NOT NULL,
            mac       bytea NOT NULL
        )
        """,
        """
        CREATE TABLE key_slot (
            id               bigint PRIMARY KEY CHECK (id >= 2 AND id <= 8),
            kind             text   NOT NULL CHECK (kind IN ('passphrase', 'recovery')),
            kdf_algorithm    text   NOT NULL,
            kdf_ops_limit    bigint NOT NULL CHECK (kdf_ops_limit >= 0),
            kdf_mem_limit    bigint NOT NULL CHECK (kdf_mem_limit >= 0),
            kdf_salt         bytea  NOT NULL,
            wrapped_root_key bytea  NOT NULL,
            info             bytea  NOT NULL
        )
        """,
        """
        CREATE TABLE key_ring (
            singleton     integer PRIMARY KEY CHECK (singleton = 1),
            write_counter bigint NOT NULL CHECK (write_counter >= 0),
            content       bytea  NOT NULL,
            mac           bytea  NOT NULL
        )
        """
    ]
}
