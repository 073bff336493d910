/// The sealed search index (`search_index`): 256 buckets by the first byte of a prescription id,
/// each sealed whole by RxVault (DESIGN.md, "Search index").
public protocol SearchIndexStore: AnyObject {
    /// Every stored bucket, by number.
    func indexBuckets() throws(StoreError) -> [(Int, [UInt8])]
    func indexBucket(_ bucket: Int) throws(StoreError) -> [UInt8]?
    /// Inserts or replaces a bucket.
    func setIndexBucket(_ bucket: Int, to sealed: [UInt8]) throws(StoreError)
    /// Deletes every bucket.
    func clearIndex() throws(StoreError)
}
