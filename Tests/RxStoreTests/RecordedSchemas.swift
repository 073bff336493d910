/// The schemas as rxvault wrote them before its tables were described once (`StoredSchema`),
/// recorded as they ran: what every vault made until then holds, and so what the generated
/// schemas must equal (`StoredSchemaTests`). The file's steps of formats 2 to 4 are still in
/// RxStore (`Schema`), which upgrades older files with them.
enum RecordedSchemas {
    /// The vault file's format-1 tables: every vault file was created with these, then the steps
    /// of formats 2, 3 and 4 (`Schema.version2`, `version3`, `version4Patients`,
    /// `version4KeySlots`).
    static let sqliteFormatOne = """
        CREATE TABLE vault_header (
            singleton        INTEGER PRIMARY KEY CHECK (singleton = 1),
            format_version   INTEGER NOT NULL,
            vault_id         BLOB    NOT NULL CHECK (length(vault_id) = 16),
            kdf_algorithm    TEXT    NOT NULL,
            kdf_ops_limit    INTEGER NOT NULL,
            kdf_mem_limit    INTEGER NOT NULL,
            kdf_salt         BLOB    NOT NULL,
            wrapped_root_key BLOB    NOT NULL,
            max_attachment_bytes INTEGER NOT NULL CHECK (max_attachment_bytes > 0),
            audit_public_key BLOB    NOT NULL CHECK (length(audit_public_key) = 32)
        ) STRICT;
        CREATE TABLE prescription (
            id TEXT PRIMARY KEY CHECK (length(id) = 32)
        ) STRICT;
        CREATE TABLE prescription_version (
            prescription_id TEXT    NOT NULL REFERENCES prescription(id) ON DELETE CASCADE,
            version         INTEGER NOT NULL CHECK (version >= 1),
            wrapped_key     BLOB    NOT NULL,
            content         BLOB    NOT NULL,
            mac             BLOB    NOT NULL,
            PRIMARY KEY (prescription_id, version)
        ) STRICT, WITHOUT ROWID;
        CREATE TABLE attachment (
            id              TEXT NOT NULL PRIMARY KEY CHECK (length(id) = 32),
            prescription_id TEXT NOT NULL REFERENCES prescription(id) ON DELETE CASCADE,
            wrapped_key     BLOB NOT NULL,
            metadata        BLOB NOT NULL,
            stream_header   BLOB NOT NULL CHECK (length(stream_header) = 24),
            mac             BLOB NOT NULL
        ) STRICT;
        CREATE INDEX attachment_by_prescription ON attachment (prescription_id);
        CREATE TABLE attachment_chunk (
            attachment_id TEXT    NOT NULL REFERENCES attachment(id) ON DELETE CASCADE,
            seq           INTEGER NOT NULL CHECK (seq >= 0),
            data          BLOB    NOT NULL,
            PRIMARY KEY (attachment_id, seq)
        ) STRICT, WITHOUT ROWID;
        CREATE TABLE client (
            id         TEXT NOT NULL PRIMARY KEY CHECK (length(id) = 32),
            public_key BLOB NOT NULL UNIQUE CHECK (length(public_key) = 32),
            info       BLOB NOT NULL,
            mac        BLOB NOT NULL
        ) STRICT;
        CREATE TABLE access_grant (
            id              TEXT NOT NULL PRIMARY KEY CHECK (length(id) = 32),
            client_id       TEXT NOT NULL REFERENCES client(id) ON DELETE CASCADE,
            prescription_id TEXT NOT NULL REFERENCES prescription(id) ON DELETE CASCADE,
            sealed_keys     BLOB NOT NULL,
            info            BLOB NOT NULL,
            mac             BLOB NOT NULL,
            UNIQUE (client_id, prescription_id)
        ) STRICT;
        CREATE INDEX access_grant_by_prescription ON access_grant (prescription_id);
        CREATE TABLE audit_entry (
            seq   INTEGER PRIMARY KEY CHECK (seq >= 1),
            entry BLOB NOT NULL,
            hash  BLOB NOT NULL CHECK (length(hash) = 32),
            mac   BLOB
        ) STRICT;
        CREATE TABLE search_index (
            bucket  INTEGER PRIMARY KEY CHECK (bucket >= 0 AND bucket < 256),
            content BLOB NOT NULL
        ) STRICT;
        CREATE TABLE audit_head (
            singleton INTEGER PRIMARY KEY CHECK (singleton = 1),
            seq       INTEGER NOT NULL,
            hash      BLOB    NOT NULL,
            mac       BLOB    NOT NULL
        ) STRICT;
        """

    /// The patient bucket hashes, created by a vault file's first owner write that knows them.
    static let sqlitePatientBuckets = """
        CREATE TABLE IF NOT EXISTS person_buckets (
            singleton INTEGER PRIMARY KEY CHECK (singleton = 1),
            content   BLOB NOT NULL,
            mac       BLOB NOT NULL
        ) STRICT;
        """

    /// A database vault's tables (`PostgresSchema.tables` before), in the order they were created.
    static let postgres: [String] = [
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
