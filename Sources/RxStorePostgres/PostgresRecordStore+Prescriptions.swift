import RxStore

/// `PrescriptionStore` and `AttachmentStore`: `prescription`, `prescription_version`,
/// `attachment` and `attachment_chunk`.
extension PostgresRecordStore {
    public func prescriptionIDs(withPrefix prefix: String, limit: Int) throws(StoreError) -> [PrescriptionID] {
        // Ids are lower-case hex in the C collation: a range scan on the primary key.
        try rows(
            "SELECT id FROM prescription WHERE id >= $1 AND id < $2 ORDER BY id LIMIT $3",
            [.text(prefix), .text(prefix + "g"), .integer(Int64(limit))], table: "prescription"
        ) { row throws(StoreError) in try row.id(0) }
    }

    private static let versionColumns = PrescriptionVersionRecord.columnList

    public func latestVersions() throws(StoreError) -> [PrescriptionVersionRecord] {
        try records(
            """
            SELECT DISTINCT ON (prescription_id) \(Self.versionColumns) FROM prescription_version
            ORDER BY prescription_id, version DESC
            """)
    }

    public func versions(of id: PrescriptionID) throws(StoreError) -> [PrescriptionVersionRecord] {
        try records(
            "SELECT \(Self.versionColumns) FROM prescription_version WHERE prescription_id = $1 ORDER BY version",
            [.text(id.hex)])
    }

    public func latestVersion(of id: PrescriptionID) throws(StoreError) -> PrescriptionVersionRecord? {
        try record(
            """
            SELECT \(Self.versionColumns) FROM prescription_version WHERE prescription_id = $1
            ORDER BY version DESC LIMIT 1
            """, [.text(id.hex)])
    }

    public func insert(_ record: PrescriptionVersionRecord) throws(StoreError) {
        // Kept and sent with the write's next statement (`InsertBuffer`): an import's thousands
        // of rows go a thousand to a round trip.
        if record.version == 1 { try session.insert(.prescription, [.text(record.prescriptionID.hex)]) }
        try session.insert(.prescriptionVersion, record.storedValues.map(BoundValue.init))
    }

    public func versions(ofAll ids: [PrescriptionID]) throws(StoreError) -> [PrescriptionVersionRecord] {
        try records(
            """
            SELECT \(Self.versionColumns) FROM prescription_version WHERE prescription_id = ANY($1)
            ORDER BY prescription_id, version
            """, [.texts(ids.map(\.hex))])
    }

    public func deletePrescription(_ id: PrescriptionID) throws(StoreError) -> Bool {
        // Versions, attachments and their chunks go with it (ON DELETE CASCADE).
        try changed("DELETE FROM prescription WHERE id = $1", [.text(id.hex)])
    }

    public func prescriptionCount() throws(StoreError) -> Int { try count("SELECT count(*) FROM prescription") }

    public func versionCount() throws(StoreError) -> Int { try count("SELECT count(*) FROM prescription_version") }

    public func allPrescriptionIDs() throws(StoreError) -> [PrescriptionID] {
        try rows(
            """
            SELECT id FROM prescription UNION SELECT prescription_id FROM prescription_version
            UNION SELECT prescription_id FROM attachment ORDER BY 1
            """, table: "prescription, prescription_version or attachment"
        ) { row throws(StoreError) in try row.id(0) }
    }

    // MARK: - Attachments

    private static let attachmentColumns = AttachmentRecord.columnList

    public func attachments(of prescriptionID: PrescriptionID) throws(StoreError) -> [AttachmentRecord] {
        try records(
            "SELECT \(Self.attachmentColumns) FROM attachment WHERE prescription_id = $1 ORDER BY position",
            [.text(prescriptionID.hex)])
    }

    public func attachments(ofAll ids: [PrescriptionID]) throws(StoreError) -> [AttachmentRecord] {
        try records(
            """
            SELECT \(Self.attachmentColumns) FROM attachment WHERE prescription_id = ANY($1)
            ORDER BY prescription_id, position
            """, [.texts(ids.map(\.hex))])
    }

    public func attachment(_ id: AttachmentID) throws(StoreError) -> AttachmentRecord? {
        try record("SELECT \(Self.attachmentColumns) FROM attachment WHERE id = $1", [.text(id.hex)])
    }

    public func insert(_ attachment: AttachmentRecord) throws(StoreError) {
        try insertRow(attachment)
    }

    public func updateMetadata(ofAttachment id: AttachmentID, to metadata: [UInt8], mac: [UInt8]) throws(StoreError) {
        try session.query(
            "UPDATE attachment SET metadata = $1, mac = $2 WHERE id = $3",
            [.bytes(metadata), .bytes(mac), .text(id.hex)])
    }

    public func insertChunk(attachmentID: AttachmentID, sequence: Int, data: [UInt8]) throws(StoreError) {
        try session.query(
            "INSERT INTO attachment_chunk (attachment_id, seq, data) VALUES ($1, $2, $3)",
            [.text(attachmentID.hex), .integer(Int64(sequence)), .bytes(data)])
    }

    public func forEachChunk(ofAttachment id: AttachmentID, _ body: (Int, [UInt8]) throws -> Void) throws {
        // Every stored chunk, gaps included (as the file's store hands them), one per query:
        // memory stays at a chunk whatever the attachment's size, and `body` may use the session
        // meanwhile.
        let sequences = try rows(
            "SELECT attachment_id, seq FROM attachment_chunk WHERE attachment_id = $1 ORDER BY seq", [.text(id.hex)],
            table: "attachment_chunk", keyColumns: 2
        ) { row throws(StoreError) in try row.integer(1, in: StoredRange.chunk) }
        for sequence in sequences {
            guard let data = try chunk(ofAttachment: id, sequence: sequence) else { continue }
            try body(sequence, data)
        }
    }

    public func chunk(ofAttachment id: AttachmentID, sequence: Int) throws(StoreError) -> [UInt8]? {
        try first(
            "SELECT attachment_id, seq, data FROM attachment_chunk WHERE attachment_id = $1 AND seq = $2",
            [.text(id.hex), .integer(Int64(sequence))], table: "attachment_chunk", keyColumns: 2
        ) { row throws(StoreError) in try row.blob(2) }
    }

    public func deleteAttachment(_ id: AttachmentID) throws(StoreError) -> Bool {
        try changed("DELETE FROM attachment WHERE id = $1", [.text(id.hex)])
    }

    public func attachmentCount() throws(StoreError) -> Int { try count("SELECT count(*) FROM attachment") }

    public func attachmentCountsByPrescription() throws(StoreError) -> [PrescriptionID: Int] {
        var counts: [PrescriptionID: Int] = [:]
        for (id, n) in try rows(
            "SELECT prescription_id, count(*) FROM attachment GROUP BY prescription_id", table: "attachment",
            { row throws(StoreError) in (try row.id(0) as PrescriptionID, try row.integer(1, in: 0...Int64.max)) })
        {
            counts[id] = n
        }
        return counts
    }
}
