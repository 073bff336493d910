/// What `AttachmentStore` does the file's own way: chunks streamed through one statement. The
/// rest is written once for both engines (`SQLStatements+Records.swift`).
extension SQLiteRecordStore {
    public func forEachChunk(ofAttachment id: AttachmentID, _ body: (Int, [UInt8]) throws -> Void) throws {
        // Not from the cache: `body` may run other statements (and this one) while it streams.
        let s = try database.prepare(
            "SELECT attachment_id, seq, data FROM attachment_chunk WHERE attachment_id = ? ORDER BY seq")
        try s.bind([.text(id.hex)])
        while try s.step() {
            let row = s.row(of: "attachment_chunk", keyColumns: 2)
            try body(try row.integer(1, in: StoredRange.chunk), try row.blob(2))
        }
    }
}
