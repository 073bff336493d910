import RxStore

/// What `PrescriptionStore` and `AttachmentStore` do PostgreSQL's own way: the newest versions
/// (`DISTINCT ON`), inserts kept and sent in batches, reads of many prescriptions in one round
/// trip (`= ANY($1)`), chunks one query each. The rest is written once for both engines
/// (`SQLStatements+Records.swift`).
extension PostgresRecordStore {
    private static let versionColumns = PrescriptionVersionRecord.columnList

    public func latestVersions() throws(StoreError) -> [PrescriptionVersionRecord] {
        try records(
            """
            SELECT DISTINCT ON (prescription_id) \(Self.versionColumns) FROM prescription_version
            ORDER BY prescription_id, version DESC
            """)
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

    public func attachments(ofAll ids: [PrescriptionID]) throws(StoreError) -> [AttachmentRecord] {
        try records(
            """
            SELECT \(Self.attachmentColumns) FROM attachment WHERE prescription_id = ANY($1)
            ORDER BY prescription_id, position
            """, [.texts(ids.map(\.hex))])
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
}
