import CSQLite
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// One SQLite connection with the settings a vault needs (DESIGN.md, "Storage").
///
/// - WAL journal (persistent, set at creation) so readers never block the writer;
/// - `synchronous=FULL` so a committed command survives power loss;
/// - `secure_delete=ON` so deleted records are overwritten, not just unlinked;
/// - `temp_store=MEMORY` so sorts and temporary tables never reach the disk;
/// - foreign keys on; a busy timeout so a second rxvault process waits instead of failing.
public final class Database {
    let handle: OpaquePointer
    public let path: String
    let busyTimeoutMilliseconds: Int32
    /// Prepared statements not in use, by SQL text (`reusable`). A handle is here or owned by
    /// exactly one `Statement`, never both: that is what makes reuse safe.
    private let idle = Mutex(IdleStatements())

    struct IdleStatements {
        /// A handle no `Statement` owns: only ever moved between the map and one owner, under the lock.
        struct Handle: @unchecked Sendable { let pointer: OpaquePointer }
        var handles: [String: [Handle]] = [:]
        var count = 0
        /// Enough for the few statements an import or a query repeats, with a nested use or two.
        static let limit = 64

        mutating func finalizeAll() {
            for list in handles.values { for handle in list { sqlite3_finalize(handle.pointer) } }
            handles = [:]
            count = 0
        }
    }

    /// How long a command waits for another process's write transaction before giving up.
    public static let defaultBusyTimeoutMilliseconds: Int32 = 30_000

    /// Opens an existing file read-write; never creates one.
    public convenience init(path: String, busyTimeoutMilliseconds: Int32 = Database.defaultBusyTimeoutMilliseconds)
        throws(StoreError)
    {
        try self.init(path: path, busyTimeoutMilliseconds: busyTimeoutMilliseconds, peeking: false)
    }

    /// Opens an existing file only to read it, as a file that cannot change (SQLite's
    /// `immutable=1`): no lock is taken and nothing is created or written beside it. A plain
    /// read-only open of a WAL-mode file would create its -wal and -shm files, and leave them
    /// behind: in a folder a sync tool carries, those would travel to every device. What a
    /// -wal beside the file holds is not read. For files rxvault only looks at (a conflict copy
    /// beside the vault, `ConflictCopies`), never for the vault it works on.
    public convenience init(peekingAt path: String) throws(StoreError) {
        try self.init(path: path, busyTimeoutMilliseconds: 0, peeking: true)
    }

    private init(path: String, busyTimeoutMilliseconds: Int32, peeking: Bool) throws(StoreError) {
        var info = stat()
        guard stat(path, &info) == 0 else { throw StoreError.missing(path: path) }
        guard info.st_mode & S_IFMT == S_IFREG else {
            throw StoreError.notAVault(path: path, reason: "not a regular file")
        }
        guard access(path, R_OK) == 0 else {
            throw StoreError.notAVault(path: path, reason: "no permission to read it")
        }
        var db: OpaquePointer?
        let flags =
            (peeking ? SQLITE_OPEN_READONLY | SQLITE_OPEN_URI : SQLITE_OPEN_READWRITE) | SQLITE_OPEN_NOMUTEX
            | SQLITE_OPEN_PRIVATECACHE
        let rc = sqlite3_open_v2(peeking ? Self.immutableURI(path) : path, &db, flags, nil)
        guard rc == SQLITE_OK, let db else {
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? "cannot open"
            sqlite3_close(db)
            throw StoreError.engine(name: "SQLite", code: String(rc), message: message, sql: nil)
        }
        handle = db
        self.path = path
        self.busyTimeoutMilliseconds = busyTimeoutMilliseconds
        sqlite3_extended_result_codes(db, 1)
        sqlite3_busy_timeout(db, busyTimeoutMilliseconds)
        // A file that is no SQLite database fails here (`error` makes it `notAVault`).
        try execute(
            "PRAGMA foreign_keys = ON; PRAGMA secure_delete = ON; PRAGMA synchronous = FULL; PRAGMA temp_store = MEMORY;"
        )
    }

    /// `path` as an SQLite URI that opens it read-only and immutable: every byte outside the
    /// characters a URI path keeps as they are is %-escaped (`?`, `#` and `%` would otherwise
    /// end or alter the path).
    static func immutableURI(_ path: String) -> String {
        let kept = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~/".utf8)
        let digits = Array("0123456789ABCDEF".unicodeScalars)
        var escaped = String.UnicodeScalarView()
        for byte in path.utf8 {
            if kept.contains(byte) {
                escaped.append(Unicode.Scalar(byte))
            } else {
                escaped.append(contentsOf: ["%", digits[Int(byte >> 4)], digits[Int(byte & 15)]])
            }
        }
        return "file:" + String(escaped) + "?mode=ro&immutable=1"
    }

    deinit {
        idle.withLock { $0.finalizeAll() }
        sqlite3_close_v2(handle)
    }

    public func prepare(_ sql: String) throws(StoreError) -> Statement {
        try Statement(database: self, sql: sql)
    }

    /// A statement for `sql` that is this caller's alone until it is released, then kept
    /// prepared for the next caller (an import runs a few statements hundreds of thousands of
    /// times; preparing each afresh was a third of its time). Two uses at once, e.g. a
    /// `forEach` whose body runs the same SQL, get two handles.
    public func reusable(_ sql: String) throws(StoreError) -> Statement {
        let handle: IdleStatements.Handle? = idle.withLock { idle in
            guard var list = idle.handles[sql], let handle = list.popLast() else { return nil }
            idle.handles[sql] = list.isEmpty ? nil : list
            idle.count -= 1
            return handle
        }
        if let handle { return Statement(database: self, sql: sql, idleHandle: handle.pointer) }
        return try Statement(database: self, sql: sql, reused: true)
    }

    /// Takes back a reusable statement's handle (already reset), or finalizes it when enough
    /// are idle.
    func giveBack(_ handle: OpaquePointer, sql: String) {
        let kept = idle.withLock { idle in
            guard idle.count < IdleStatements.limit else { return false }
            idle.handles[sql, default: []].append(IdleStatements.Handle(pointer: handle))
            idle.count += 1
            return true
        }
        if !kept { sqlite3_finalize(handle) }
    }

    /// Runs one or more statements without parameters.
    public func execute(_ sql: String) throws(StoreError) {
        let rc = sqlite3_exec(handle, sql, nil, nil, nil)
        guard rc == SQLITE_OK else { throw error(rc, sql: sql) }
    }

    /// Reads a single integer (`PRAGMA user_version`, `SELECT count(*)`).
    public func integer(_ sql: String, _ values: [Statement.Value] = []) throws(StoreError) -> Int64? {
        let statement = try prepare(sql)
        try statement.bind(values)
        return try statement.step() ? statement.int(0) : nil
    }

    /// Reads a single blob (the first column of the first row; empty when there is none).
    public func blob(_ sql: String, _ values: [Statement.Value] = []) throws(StoreError) -> [UInt8] {
        let statement = try prepare(sql)
        try statement.bind(values)
        return try statement.step() ? statement.blob(0) : []
    }

    /// Runs `body` in one write transaction (`BEGIN IMMEDIATE`: the write lock is taken up front,
    /// so two writers queue on the busy timeout instead of deadlocking), committing on success and
    /// rolling back on any error.
    public func writeTransaction<T, E: Error>(_ body: () throws(E) -> T) throws -> T {
        try execute("BEGIN IMMEDIATE")
        changesWhenWriteBegan = sqlite3_total_changes64(handle)
        do {
            let result = try body()
            try execute("COMMIT")
            return result
        } catch {
            try? execute("ROLLBACK")
            throw error
        }
    }

    /// `sqlite3_total_changes64` when the write under way began (`writeTransaction`).
    private var changesWhenWriteBegan: Int64 = 0

    /// Whether the write under way has inserted, updated or deleted a row (SQLite counts every
    /// row an INSERT, UPDATE or DELETE changed, on this connection, since it opened).
    var changedSinceWriteBegan: Bool { sqlite3_total_changes64(handle) != changesWhenWriteBegan }

    /// A read transaction, so several reads see one consistent snapshot. Inside a transaction
    /// already open, `body` just runs in it (a command reading many prescriptions in one snapshot).
    public func readTransaction<T, E: Error>(_ body: () throws(E) -> T) throws -> T {
        if sqlite3_get_autocommit(handle) == 0 { return try body() }
        try execute("BEGIN DEFERRED")
        defer { try? execute("COMMIT") }
        return try body()
    }

    /// Copies this database, page for page, into a new file at `path` (mode 0600, which must not
    /// exist) with SQLite's online backup: one read snapshot, the pages where they are. Two such
    /// copies taken a few writes apart differ only in the pages those writes touched.
    public func copyPages(to path: String) throws(StoreError) {
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw StoreError.cannotWrite("cannot create \(path): \(String(cString: strerror(errno)))")
        }
        close(fd)
        var target: OpaquePointer?
        guard sqlite3_open_v2(path, &target, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nil) == SQLITE_OK,
            let target
        else {
            sqlite3_close(target)
            throw StoreError.cannotWrite("cannot open \(path) to copy the vault into")
        }
        defer { sqlite3_close(target) }
        guard let backup = sqlite3_backup_init(target, "main", handle, "main") else {
            throw StoreError.cannotWrite("cannot copy the vault: \(String(cString: sqlite3_errmsg(target)))")
        }
        let stepped = sqlite3_backup_step(backup, -1)
        let finished = sqlite3_backup_finish(backup)
        guard stepped == SQLITE_DONE, finished == SQLITE_OK else {
            throw error(stepped == SQLITE_DONE ? finished : stepped, sql: nil)
        }
    }

    /// Copies the WAL into the main file and truncates the WAL to zero bytes, so content deleted
    /// by `secure_delete` is gone from both files. Returns false if a reader kept it from finishing.
    @discardableResult
    public func checkpointAndTruncateWAL() -> Bool {
        var logFrames: Int32 = 0
        var checkpointed: Int32 = 0
        let rc = sqlite3_wal_checkpoint_v2(handle, nil, SQLITE_CHECKPOINT_TRUNCATE, &logFrames, &checkpointed)
        return rc == SQLITE_OK
    }

    /// Copies into the main file what the WAL holds, as far as no reader still needs it, and
    /// truncates the WAL if no reader is using it, without waiting for anyone (a TRUNCATE
    /// checkpoint with no busy wait goes on as a PASSIVE one). False when it could not do all.
    @discardableResult
    public func checkpointWithoutWaiting() -> Bool {
        sqlite3_busy_timeout(handle, 0)
        defer { sqlite3_busy_timeout(handle, busyTimeoutMilliseconds) }
        var logFrames: Int32 = 0
        var checkpointed: Int32 = 0
        return sqlite3_wal_checkpoint_v2(handle, nil, SQLITE_CHECKPOINT_TRUNCATE, &logFrames, &checkpointed)
            == SQLITE_OK
    }

    /// Whether the file this connection has open is no longer the one at `path` (renamed over,
    /// or removed): SQLite compares its descriptor's inode with the path's. A connection to a
    /// replaced file still works, on the deleted inode, and nobody will read what it writes.
    public var fileHasMoved: Bool {
        var moved: Int32 = 0
        return sqlite3_file_control(handle, "main", SQLITE_FCNTL_HAS_MOVED, &moved) == SQLITE_OK && moved != 0
    }

    public var changes: Int { Int(sqlite3_changes(handle)) }

    func error(_ rc: Int32, sql: String?) -> StoreError {
        let primary = rc & 0xff
        let message = String(cString: sqlite3_errmsg(handle))
        switch primary {
        case SQLITE_BUSY, SQLITE_LOCKED: return .busy
        case SQLITE_FULL: return .cannotWrite("the disk is full")
        case SQLITE_READONLY: return .cannotWrite("the file is read-only")
        case SQLITE_IOERR: return .cannotWrite("the disk refused a write (full, or over a file-size limit)")
        case SQLITE_NOTADB: return .notAVault(path: path, reason: "not an SQLite database")
        case SQLITE_CORRUPT: return .corrupt("SQLite reports: \(message)")
        case SQLITE_CANTOPEN:
            return .cannotWrite("cannot open \(path) or its -wal/-shm files (check the directory's permissions)")
        default: return .engine(name: "SQLite", code: String(rc), message: message, sql: sql)
        }
    }
}
