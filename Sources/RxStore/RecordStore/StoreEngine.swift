/// The engine's own part of a store: transactions, the upkeep that depends on how the engine
/// keeps its data, and its structural check. Named by what RxVault needs, so each engine says how
/// it provides it (SQLite: `SQLiteRecordStore+Engine.swift`; a server database would use its own
/// isolation levels, locks and maintenance).
public protocol StoreEngine: AnyObject {
    /// Runs `body` as one atomic write: all of it is stored, or none (an error thrown by `body`
    /// rolls back). One write at a time per vault, across processes and machines: a second writer
    /// waits for the first (up to the busy timeout the store was opened with, then
    /// `StoreError.busy`); it never interleaves with it or fails at commit for having read what
    /// the first one changed. `body` sees what it wrote and what was committed before it began.
    /// (SQLite: `BEGIN IMMEDIATE`. A server engine: a lock per vault taken first, or
    /// serializable isolation with the whole `body` retried.) Not nested.
    func write<T>(_ body: () throws -> T) throws -> T
    /// Runs `body` against one consistent snapshot: no write committed meanwhile is seen, by any
    /// of its reads. Inside `write` or another `read`, `body` runs in that transaction.
    func read<T>(_ body: () throws -> T) throws -> T
    /// Whether the write under way has changed anything stored so far (a row inserted, updated or
    /// deleted). Asked inside `write` only: an owner write whose work changed nothing ends
    /// without writing its new root, so a command that changes nothing writes nothing (its write
    /// counter stays, and a copy of the file put back is not taken for a rollback). An engine
    /// that cannot tell answers true.
    func writeHasChanges() throws(StoreError) -> Bool

    /// The engine's own check of what it stores, beyond what RxVault authenticates: its pages and
    /// indexes are whole, and every row that names another (a version its prescription, a chunk
    /// its attachment, a grant its client) finds it. Each finding is one sentence; none: all is
    /// well. Run inside `read`, as the first stage of `rxvault check`.
    func checkStructure() throws(StoreError) -> [String]

    /// Writes a consistent copy of the whole vault to `path` (a new file, mode 0600) as a vault
    /// file, whatever this store's engine: one read snapshot, taken even while others write. A
    /// backup is such a file, sealed with age; it restores to a file or into another engine.
    func snapshot(to path: String) throws(StoreError)
    /// As `snapshot`, but a file engine keeps its pages where they are (SQLite's online backup,
    /// where `snapshot` compacts): two such copies taken a few writes apart differ only in the
    /// pages those writes touched, which is all `rxvault sync` moves. An engine without pages
    /// answers with its `snapshot`. Inside `read`, the copy is of that read's snapshot.
    func snapshotKeepingPages(to path: String) throws(StoreError)

    /// Makes deleted content unrecoverable from what the engine keeps, as far as it can (SQLite
    /// overwrites deleted rows as it deletes them, then this folds its write-ahead log into the
    /// file and truncates it; a server engine would vacuum the tables written). Waits for readers
    /// up to the busy timeout. Returns false when another connection kept it from finishing.
    @discardableResult
    func purgeDeletedContent() -> Bool
    /// Folds what the engine's journal holds into the vault's own storage, as far as no reader
    /// needs it, without waiting for anyone: after a long-running server's write, so that a copy
    /// of the vault's location alone is the vault as of that write. A store whose journal is not
    /// beside the vault (a server database) has nothing to do and answers true.
    @discardableResult
    func foldJournalWithoutWaiting() -> Bool
    /// Whether what this store has open is no longer the vault at its location (the file renamed
    /// over or removed, while this process kept writing to the old one). A store whose location
    /// cannot be replaced under it (a server database) answers false.
    func wasReplaced() -> Bool

    /// Keeps the engine's cache small while a large attachment streams through, so memory stays at
    /// a few chunks instead of the engine's default cache (2 MiB for SQLite). A hint: an engine
    /// may ignore it.
    func useSmallCacheForStreaming()
    /// Lets one large write (an import of many prescriptions) keep its pages in memory until
    /// commit, instead of spilling and rewriting them many times over; and one large read (an
    /// export) keep the index pages it comes back to. A hint: an engine may ignore it.
    func useLargeCacheForBulkWork()
}
