import CSQLite

/// A prepared SQLite statement. Owns the C handle and finalizes it on release, so no code path
/// (including a thrown error) can leak one and keep the database locked.
///
/// Not thread-safe; used only on the thread of its `Database`.
public final class Statement {
    let handle: OpaquePointer
    /// Strong: a statement keeps its connection open (sqlite3_finalize needs it), so
    /// `Database(path:).prepare(...).run()` is safe. The database holds no statements, so there
    /// is no cycle.
    let database: Database
    let sql: String
    /// Whether the handle goes back to its database's idle statements when this use ends
    /// (`Database.reusable`) instead of being finalized.
    private let reused: Bool

    init(database: Database, sql: String, reused: Bool = false) throws(StoreError) {
        var stmt: OpaquePointer?
        let rc = sqlite3_prepare_v2(database.handle, sql, -1, &stmt, nil)
        guard rc == SQLITE_OK, let stmt else { throw database.error(rc, sql: sql) }
        self.handle = stmt
        self.database = database
        self.sql = sql
        self.reused = reused
    }

    /// A use of a handle prepared earlier and idle since (reset, bindings cleared).
    init(database: Database, sql: String, idleHandle: OpaquePointer) {
        self.handle = idleHandle
        self.database = database
        self.sql = sql
        self.reused = true
    }

    /// Finalized, or for a reusable statement reset and handed back: it was this object's alone
    /// while the object lived, so no other use can be in the middle of its rows.
    deinit {
        if reused {
            sqlite3_reset(handle)
            sqlite3_clear_bindings(handle)
            database.giveBack(handle, sql: sql)
        } else {
            sqlite3_finalize(handle)
        }
    }

    /// A value to bind, as every engine's (`StoredValue`): SQLite binds it as it is; blobs are
    /// copied by SQLite (`SQLITE_TRANSIENT`).
    public typealias Value = StoredValue

    @discardableResult
    public func bind(_ values: [Value]) throws(StoreError) -> Statement {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
        for (offset, value) in values.enumerated() {
            let index = Int32(offset + 1)
            let rc: Int32
            switch value {
            case .integer(let v): rc = sqlite3_bind_int64(handle, index, v)
            case .text(let v): rc = sqlite3_bind_text(handle, index, v, -1, rx_sqlite_transient())
            case .blob(let v):
                // 64-bit length: a blob past 2 GiB is refused by SQLite (SQLITE_TOOBIG), not a trap here.
                rc = v.withUnsafeBytes {
                    sqlite3_bind_blob64(
                        handle, index, $0.baseAddress ?? UnsafeRawPointer(bitPattern: 1), UInt64($0.count),
                        rx_sqlite_transient())
                }
            case .null: rc = sqlite3_bind_null(handle, index)
            }
            guard rc == SQLITE_OK else { throw database.error(rc, sql: sql) }
        }
        return self
    }

    /// Steps once; true while a row is available.
    public func step() throws(StoreError) -> Bool {
        let rc = sqlite3_step(handle)
        switch rc {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default: throw database.error(rc, sql: sql)
        }
    }

    /// Runs to completion, ignoring rows.
    public func run(_ values: [Value] = []) throws(StoreError) {
        defer { reset() }
        try bind(values)
        while try step() {}
    }

    /// Calls `row` for each result row.
    public func forEach(_ values: [Value] = [], _ row: (Statement) throws(StoreError) -> Void) throws(StoreError) {
        defer { reset() }
        try bind(values)
        while try step() { try row(self) }
    }

    /// The first result row through `row`, or nil; the statement is reset after, so a statement
    /// kept for reuse never holds a read snapshot open between uses.
    public func first<T>(_ values: [Value] = [], _ row: (Statement) throws(StoreError) -> T) throws(StoreError) -> T? {
        defer { reset() }
        try bind(values)
        return try step() ? try row(self) : nil
    }

    /// Ends the statement's current run (a no-op once it has stepped to the end).
    public func reset() { sqlite3_reset(handle) }

    // Loose readers, converting whatever is stored as SQLite does: for PRAGMAs, counts and tests.
    // A value of a vault table is read through `row(of:keyColumns:)`, which checks it (StoredRow).
    public func int(_ column: Int32) -> Int64 { sqlite3_column_int64(handle, column) }
    public func text(_ column: Int32) -> String? {
        guard let p = sqlite3_column_text(handle, column) else { return nil }
        return String(cString: p)
    }
    public func blob(_ column: Int32) -> [UInt8] {
        // The pointer first, then the length (SQLite's documented order).
        guard let p = sqlite3_column_blob(handle, column) else { return [] }
        return Array(UnsafeRawBufferPointer(start: p, count: Int(sqlite3_column_bytes(handle, column))))
    }
    public func isNull(_ column: Int32) -> Bool { sqlite3_column_type(handle, column) == SQLITE_NULL }
}
