/// `SearchIndexStore`: `search_index`.
extension SQLiteRecordStore {
    public func indexBuckets() throws(StoreError) -> [(Int, [UInt8])] {
        var buckets: [(Int, [UInt8])] = []
        try statement("SELECT bucket, content FROM search_index ORDER BY bucket").forEach { s throws(StoreError) in
            buckets.append(try s.row(of: "search_index").bucket())
        }
        return buckets
    }

    public func indexBucket(_ bucket: Int) throws(StoreError) -> [UInt8]? {
        try statement("SELECT bucket, content FROM search_index WHERE bucket = ?").first([.integer(Int64(bucket))]) {
            row throws(StoreError) in
            try row.row(of: "search_index").blob(1)
        }
    }

    public func setIndexBucket(_ bucket: Int, to sealed: [UInt8]) throws(StoreError) {
        try statement(
            "INSERT INTO search_index (bucket, content) VALUES (?, ?) ON CONFLICT (bucket) DO UPDATE SET content = excluded.content"
        )
        .run([.integer(Int64(bucket)), .blob(sealed)])
    }

    public func clearIndex() throws(StoreError) {
        try database.execute("DELETE FROM search_index")
    }
}
