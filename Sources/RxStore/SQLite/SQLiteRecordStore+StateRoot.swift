/// `StateRootStore`: the one `vault_state` row and `manifest` (format 2).
extension SQLiteRecordStore {
    public func vaultState() throws(StoreError) -> VaultStateRecord? {
        guard try schemaVersion() >= 2 else { return nil }
        return try statement("SELECT \(VaultStateRecord.columnList) FROM vault_state WHERE singleton = 1").record()
    }

    /// Prepared once (`rxvault serve` asks on every request) and reset after each use, so it
    /// never holds a read snapshot open.
    public func vaultStateStamp() throws(StoreError) -> (counter: Int, mac: [UInt8])? {
        let s: Statement
        if let stampStatement {
            s = stampStatement
        } else {
            s = try statement("SELECT write_counter, mac FROM vault_state WHERE singleton = 1")
            stampStatement = s
        }
        try s.bind([])
        defer { _ = try? s.bind([]) }
        guard try s.step() else { return nil }
        return try s.row(of: "vault_state", keyColumns: 0).stateStamp()
    }

    public func setVaultState(_ state: VaultStateRecord) throws(StoreError) {
        try statement(
            VaultStateRecord.insertStatement { _ in "?" }
                + " ON CONFLICT (singleton) DO UPDATE SET write_counter = excluded.write_counter,"
                + " state = excluded.state, mac = excluded.mac"
        ).run(state.storedValues)
    }

    public func manifestBuckets() throws(StoreError) -> [(Int, [UInt8])] {
        guard try schemaVersion() >= 2 else { return [] }
        var buckets: [(Int, [UInt8])] = []
        try statement("SELECT bucket, content FROM manifest ORDER BY bucket").forEach { s throws(StoreError) in
            buckets.append(try s.row(of: "manifest").bucket())
        }
        return buckets
    }

    public func manifestBucket(_ bucket: Int) throws(StoreError) -> [UInt8]? {
        try statement("SELECT bucket, content FROM manifest WHERE bucket = ?").first([.integer(Int64(bucket))]) {
            row throws(StoreError) in
            try row.row(of: "manifest").blob(1)
        }
    }

    public func setManifestBucket(_ bucket: Int, to content: [UInt8]?) throws(StoreError) {
        if let content {
            try statement(
                "INSERT INTO manifest (bucket, content) VALUES (?, ?) ON CONFLICT (bucket) DO UPDATE SET content = excluded.content"
            )
            .run([.integer(Int64(bucket)), .blob(content)])
        } else {
            try statement("DELETE FROM manifest WHERE bucket = ?").run([.integer(Int64(bucket))])
        }
    }
}
