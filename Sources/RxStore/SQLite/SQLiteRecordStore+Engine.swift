#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `StoreEngine` for the vault file: SQLite's transactions, its write-ahead log and page cache,
/// `integrity_check`; and the operations on vault files that are no open store (a snapshot being
/// restored, an old file being replaced).
extension SQLiteRecordStore {
    /// `BEGIN IMMEDIATE`: the file's write lock is taken up front, so two writers queue on the
    /// busy timeout instead of deadlocking.
    public func write<T>(_ body: () throws -> T) throws -> T {
        try database.writeTransaction(body)
    }

    /// SQLite's count of rows this connection changed, against its count when the write began.
    public func writeHasChanges() throws(StoreError) -> Bool { database.changedSinceWriteBegan }

    /// `BEGIN DEFERRED`: the WAL gives this connection one snapshot until it commits.
    public func read<T>(_ body: () throws -> T) throws -> T {
        try database.readTransaction(body)
    }

    /// `PRAGMA integrity_check` (pages, b-trees, indexes, STRICT types, CHECK constraints) and
    /// `PRAGMA foreign_key_check` (every row finds the row it names).
    public func checkStructure() throws(StoreError) -> [String] {
        var findings: [String] = []
        try database.prepare("PRAGMA integrity_check").forEach { row in
            if let text = row.text(0), text != "ok" { findings.append("SQLite: \(text)") }
        }
        try database.prepare("PRAGMA foreign_key_check").forEach { row in
            findings.append("a row of \(row.text(0) ?? "?") points at a missing \(row.text(2) ?? "?")")
        }
        return findings
    }

    public func snapshot(to path: String) throws(StoreError) {
        // VACUUM INTO reads one snapshot and writes a compact new database (not WAL mode). It
        // accepts an empty file, which lets the copy be private (0600) from its first byte.
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw StoreError.cannotWrite("cannot create \(path): \(String(cString: strerror(errno)))")
        }
        close(fd)
        try database.prepare("VACUUM INTO ?").run([.text(path)])
    }

    public func snapshotKeepingPages(to path: String) throws(StoreError) {
        try database.copyPages(to: path)
    }

    /// `secure_delete` overwrote deleted rows in the pages; a TRUNCATE checkpoint copies the WAL
    /// into the file and empties it, so the old pages are gone from the WAL too.
    @discardableResult
    public func purgeDeletedContent() -> Bool {
        database.checkpointAndTruncateWAL()
    }

    /// A TRUNCATE checkpoint with no busy wait (it goes on as a PASSIVE one when readers hold it).
    @discardableResult
    public func foldJournalWithoutWaiting() -> Bool { database.checkpointWithoutWaiting() }

    /// SQLite compares its descriptor's inode with the path's (`SQLITE_FCNTL_HAS_MOVED`).
    public func wasReplaced() -> Bool { database.fileHasMoved }

    public func useSmallCacheForStreaming() {
        // 256 KiB: four 64 KiB chunks. Only for this connection, which lives for one command.
        try? database.execute("PRAGMA cache_size = -256")
    }

    public func useLargeCacheForBulkWork() {
        // 24 MiB (SQLite's default is 2 MiB). More pages than fit are spilled to the WAL, which
        // an import of 100,000 prescriptions (about 45 MiB of pages) did with 64 MiB no faster
        // but 40 MiB larger. An export of as many looks each prescription up by id, five small
        // queries: with 2 MiB the b-tree's inner pages kept falling out and were read again
        // (580,000 preads). Only for this connection, which lives for one command.
        try? database.execute("PRAGMA cache_size = -24576")
    }

    // MARK: - Vault files not open as a store

    /// Puts a vault file written by `snapshot(to:)` (rollback journal) in the mode a live vault
    /// runs in (WAL), before it is put in place.
    public static func prepareSnapshotForUse(at path: String) throws(StoreError) {
        try Database(path: path).execute("PRAGMA journal_mode = WAL")
    }

    /// Copies the WAL of the vault file at `path` into it and truncates it, then closes the
    /// file; SQLite then removes the -wal and -shm files, unless another connection still has
    /// the vault open. False when a reader kept the checkpoint from finishing.
    public static func foldJournal(ofFileAt path: String, busyTimeoutMilliseconds: Int32) throws(StoreError) -> Bool {
        try Database(path: path, busyTimeoutMilliseconds: busyTimeoutMilliseconds).checkpointAndTruncateWAL()
    }
}
