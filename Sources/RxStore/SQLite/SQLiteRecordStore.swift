import CSQLite

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The vault file: one SQLite database (docs/format.md, DESIGN.md "Schema" and "Storage and
/// concurrency"). This file opens and creates it. The table requirements are written once for
/// every engine (`Sources/RxStore/SQL/`); beside this file are what they run on
/// (`+SQL.swift`: `SQLStatements`), where the format number is kept (`+Schema.swift`) and the
/// engine's own part (`+Engine.swift`: transactions, upkeep and the structural check).
public final class SQLiteRecordStore: RecordStore {
    /// The connection: for the sections here, and for tests that alter the file as an attacker would.
    public let database: Database

    /// A prepared statement for `sql`, this caller's alone while it holds it, kept prepared for
    /// the next caller once released (`Database.reusable`). An earlier cache that handed the
    /// same statement object to every caller let one use reset another in the middle of its
    /// rows (a download cut short; mismatched rows under concurrency).
    func statement(_ sql: String) throws(StoreError) -> Statement {
        try database.reusable(sql)
    }

    /// Opens an existing vault, checking it is one of ours and of a version we read.
    public convenience init(
        openingAt path: String, busyTimeoutMilliseconds: Int32 = Database.defaultBusyTimeoutMilliseconds
    ) throws(StoreError) {
        try self.init(Database(path: path, busyTimeoutMilliseconds: busyTimeoutMilliseconds))
    }

    /// Opens an existing vault file only to read it, taking no lock and creating nothing beside
    /// it (`Database(peekingAt:)`): a file rxvault looks at without working on it, such as a
    /// sync tool's conflict copy. Any write through it fails.
    public convenience init(peekingAt path: String) throws(StoreError) {
        try self.init(Database(peekingAt: path))
    }

    private init(_ database: Database) throws(StoreError) {
        self.database = database
        let path = database.path
        let applicationID = try database.integer("PRAGMA application_id") ?? 0
        guard applicationID == Int64(Schema.applicationID) else {
            throw StoreError.notAVault(
                path: path,
                reason: applicationID == 0 ? "an SQLite database of another program" : "unknown application id")
        }
        let version = Int(try statement("PRAGMA user_version").first { $0.int(0) } ?? 0)
        guard version <= Schema.currentVersion else {
            throw StoreError.unsupportedVersion(found: version, supported: Schema.currentVersion)
        }
        guard version >= 1 else { throw StoreError.corrupt("schema version \(version)") }
    }

    /// Creates a new vault file at `path` with `header` and an empty audit log whose head (sequence
    /// 0) carries `auditHeadMAC`, atomically and without ever replacing a
    /// file: the database is built in a temporary file (mode 0600) beside `path` and linked into
    /// place with link(2), which fails if `path` exists, so two `init`s cannot both win and a
    /// failed `init` leaves nothing behind.
    ///
    /// `fill` (a copy's rows: `StoreCopy`) runs on the new store in one write transaction before
    /// the file is linked into place, so a copy interrupted half-way leaves no vault behind.
    public static func create(
        at path: String, header: VaultHeaderRecord, auditHeadMAC: [UInt8],
        state: VaultStateRecord? = nil, keyRing: KeyRingRecord? = nil,
        fill: ((any RecordStore) throws -> Void)? = nil
    ) throws(StoreError) {
        // The tables made here are those of formats 4 to 7 (a copy keeps its source's format).
        guard (Schema.oldestCreatedVersion...Schema.currentVersion).contains(header.formatVersion) else {
            throw StoreError.unsupportedVersion(found: header.formatVersion, supported: Schema.currentVersion)
        }
        guard access(path, F_OK) != 0 else { throw StoreError.alreadyExists(path: path) }
        let temporary = path + ".tmp-" + String(UInt32.random(in: .min ... .max), radix: 16)
        let fd = open(temporary, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw StoreError.cannotWrite("cannot create \(temporary): \(String(cString: strerror(errno)))")
        }
        close(fd)
        defer {
            unlink(temporary)
            unlink(temporary + "-wal")
            unlink(temporary + "-shm")
        }
        do {
            let database = try Database(path: temporary)
            try database.execute("PRAGMA journal_mode = WAL")
            try database.execute("PRAGMA application_id = \(Schema.applicationID)")
            try database.writeTransaction { () throws(StoreError) in
                try database.execute(Schema.creation)
                try database.prepare(VaultHeaderRecord.insertStatement { _ in "?" }).run(header.storedValues)
                try database.prepare("INSERT INTO audit_head (singleton, seq, hash, mac) VALUES (1, 0, ?, ?)")
                    .run([.blob([UInt8](repeating: 0, count: 32)), .blob(auditHeadMAC)])
                if let state {
                    try database.prepare(VaultStateRecord.insertStatement { _ in "?" }).run(state.storedValues)
                }
                if let keyRing {
                    try database.prepare(KeyRingRecord.insertStatement { _ in "?" }).run(keyRing.storedValues)
                }
                // The header's format: a copy keeps its source's (format 4 has the same tables).
                try database.execute("PRAGMA user_version = \(header.formatVersion)")
            }
            if let fill {
                let store = try SQLiteRecordStore(openingAt: temporary)
                try store.write { try fill(store) }
                store.database.checkpointAndTruncateWAL()
            }
            database.checkpointAndTruncateWAL()
        } catch let error as StoreError {
            throw error
        } catch {
            throw StoreError.cannotWrite("\(error)")
        }
        // The connection is closed (WAL folded in) before the file is linked into place.
        guard link(temporary, path) == 0 else {
            // Another `init` won the race for the name: EEXIST is the one "already exists".
            if errno == EEXIST { throw StoreError.alreadyExists(path: path) }
            throw StoreError.cannotWrite("cannot create \(path): \(String(cString: strerror(errno)))")
        }
    }

    /// Whether the table exists (the format-4 upgrade creates it before `user_version` moves).
    func tableExists(_ name: String) throws(StoreError) -> Bool {
        let s = try database.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?")
        try s.bind([.text(name)])
        return try s.step()
    }
}
