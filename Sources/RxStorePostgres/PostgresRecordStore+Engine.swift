import RxStore

/// `StoreEngine` for a vault in PostgreSQL: its transactions and locks, its structural check,
/// and snapshots to a vault file (backups, `rxvault copy`).
extension PostgresRecordStore {
    /// READ COMMITTED behind a transaction-level advisory lock that every writer takes first:
    /// one owner write at a time per vault across every machine, a second waiting up to the busy
    /// timeout (`lock_timeout`, then `StoreError.busy`). With the lock held no other write can
    /// commit, so each statement's fresh snapshot sees everything committed before this write
    /// began and nothing of another's: the contract SQLite's `BEGIN IMMEDIATE` gives the file.
    /// (REPEATABLE READ would not do: its snapshot is taken by the lock's own statement, before
    /// the lock is granted, so a write that waited would miss the one it waited for.)
    public func write<T>(_ body: () throws -> T) throws -> T {
        try session.transaction(
            begin: [
                "BEGIN ISOLATION LEVEL READ COMMITTED", "SELECT pg_advisory_xact_lock(\(PostgresSchema.writeLockKey))"
            ],
            body)
    }

    /// PostgreSQL gives a transaction an id at its first change of a row, not before (the
    /// advisory lock the write began with takes none); the query sends any buffered inserts first.
    public func writeHasChanges() throws(StoreError) -> Bool {
        let rows = try session.query("SELECT pg_current_xact_id_if_assigned() IS NOT NULL")
        return (try? rows.first?.decode(Bool.self)) ?? true
    }

    /// REPEATABLE READ, READ ONLY: every read of `body` sees one snapshot.
    public func read<T>(_ body: () throws -> T) throws -> T {
        try session.transaction(begin: ["BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"], body)
    }

    /// Every row that names another finds it (the foreign keys say so, but whoever owns the tables
    /// can turn them off: `session_replication_role = replica`), and the one-row tables have their
    /// row.
    public func checkStructure() throws(StoreError) -> [String] {
        var findings: [String] = []
        let orphans: [(String, String, String)] = [
            (
                "prescription_version", "prescription",
                "SELECT count(*) FROM prescription_version v WHERE NOT EXISTS (SELECT 1 FROM prescription p WHERE p.id = v.prescription_id)"
            ),
            (
                "attachment", "prescription",
                "SELECT count(*) FROM attachment a WHERE NOT EXISTS (SELECT 1 FROM prescription p WHERE p.id = a.prescription_id)"
            ),
            (
                "attachment_chunk", "attachment",
                "SELECT count(*) FROM attachment_chunk c WHERE NOT EXISTS (SELECT 1 FROM attachment a WHERE a.id = c.attachment_id)"
            ),
            (
                "access_grant", "client",
                "SELECT count(*) FROM access_grant g WHERE NOT EXISTS (SELECT 1 FROM client c WHERE c.id = g.client_id)"
            )
        ]
        for (table, target, sql) in orphans {
            let n = try count(sql)
            if n > 0 { findings.append("\(n) row\(n == 1 ? "" : "s") of \(table) point at a missing \(target)") }
        }
        for table in ["vault_header", "audit_head", "vault_state", "rxvault_schema"] {
            let n = try count("SELECT count(*) FROM \(table)")
            if n != 1 { findings.append("\(table) has \(n) rows, not 1") }
        }
        return findings
    }

    /// A vault file with every row of one REPEATABLE READ snapshot, made with the file engine
    /// (`SQLiteRecordStore`) and filled row by row (`StoreCopy`) before it is linked into place:
    /// the ciphertext as it is, nothing decrypted.
    public func snapshot(to path: String) throws(StoreError) {
        do {
            try read {
                guard let head = try auditHead() else { throw StoreError.corrupt("the audit head is missing") }
                try SQLiteRecordStore.create(at: path, header: try header(), auditHeadMAC: head.mac) { target in
                    try StoreCopy.copyContent(from: self, into: target)
                }
            }
        } catch let error as StoreError {
            throw error
        } catch {
            throw StoreError.cannotWrite("\(error)")
        }
    }

    /// A database has no pages a copy could keep in place: its snapshot.
    public func snapshotKeepingPages(to path: String) throws(StoreError) { try snapshot(to: path) }

    /// The server removes deleted rows' old versions itself (autovacuum); until it does, they are
    /// in its files (docs/deploy.md, SECURITY.md). Nothing rxvault can do from a connection.
    @discardableResult
    public func purgeDeletedContent() -> Bool { true }

    /// The server's write-ahead log is not beside the vault: nothing to fold.
    @discardableResult
    public func foldJournalWithoutWaiting() -> Bool { true }

    /// A database cannot be renamed over while it is open.
    public func wasReplaced() -> Bool { false }

    public func useSmallCacheForStreaming() {}

    public func useLargeCacheForBulkWork() {}
}
