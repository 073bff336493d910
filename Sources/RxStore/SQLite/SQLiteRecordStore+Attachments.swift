/// `AttachmentStore`: `attachment` and `attachment_chunk`.
extension SQLiteRecordStore {
    private static let attachmentColumns = AttachmentRecord.columnList

    public func attachments(of prescriptionID: PrescriptionID) throws(StoreError) -> [AttachmentRecord] {
        try statement("SELECT \(Self.attachmentColumns) FROM attachment WHERE prescription_id = ? ORDER BY rowid")
            .records([.text(prescriptionID.hex)])
    }

    public func attachment(_ id: AttachmentID) throws(StoreError) -> AttachmentRecord? {
        try statement("SELECT \(Self.attachmentColumns) FROM attachment WHERE id = ?").record([.text(id.hex)])
    }

    public func insert(_ attachment: AttachmentRecord) throws(StoreError) {
        try insertRow(attachment)
    }

    public func updateMetadata(ofAttachment id: AttachmentID, to metadata: [UInt8], mac: [UInt8]) throws(StoreError) {
        try statement("UPDATE attachment SET metadata = ?, mac = ? WHERE id = ?").run([
            .blob(metadata), .blob(mac), .text(id.hex)
        ])
    }

    public func insertChunk(attachmentID: AttachmentID, sequence: Int, data: [UInt8]) throws(StoreError) {
        try chunkInsert.run([.text(attachmentID.hex), .integer(Int64(sequence)), .blob(data)])
    }

    /// Prepared once (`chunkInsertStatement`), or for this use when that failed.
    private var chunkInsert: Statement {
        get throws(StoreError) {
            if let statement = chunkInsertStatement { return statement }
            return try statement("INSERT INTO attachment_chunk (attachment_id, seq, data) VALUES (?, ?, ?)")
        }
    }

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

    public func chunk(ofAttachment id: AttachmentID, sequence: Int) throws(StoreError) -> [UInt8]? {
        try statement("SELECT attachment_id, seq, data FROM attachment_chunk WHERE attachment_id = ? AND seq = ?")
            .first([.text(id.hex), .integer(Int64(sequence))]) { row throws(StoreError) in
                try row.row(of: "attachment_chunk", keyColumns: 2).blob(2)
            }
    }

    public func deleteAttachment(_ id: AttachmentID) throws(StoreError) -> Bool {
        // Its chunks go with it (ON DELETE CASCADE).
        try statement("DELETE FROM attachment WHERE id = ?").run([.text(id.hex)])
        return database.changes > 0
    }

    public func attachmentCountsByPrescription() throws(StoreError) -> [PrescriptionID: Int] {
        var counts: [PrescriptionID: Int] = [:]
        try statement("SELECT prescription_id, count(*) FROM attachment GROUP BY prescription_id").forEach {
            row throws(StoreError) in
            counts[try row.row(of: "attachment").id(0)] = Int(row.int(1))
        }
        return counts
    }

    public func attachmentCount() throws(StoreError) -> Int {
        Int(try database.integer("SELECT count(*) FROM attachment") ?? 0)
    }
}
