import RxStore

/// Reads of many prescriptions in one round trip (`= ANY($1)`, the ids bound as one `text[]`):
/// what a write that changed many reads back at its end. `PrescriptionStore` and
/// `AttachmentStore` answer them one prescription at a time for every engine; a server a round
/// trip away answers them in one. The rest is written once for both engines
/// (`SQLStatements+Records.swift`).
extension PostgresRecordStore {
    public func versions(ofAll ids: [PrescriptionID]) throws(StoreError) -> [PrescriptionVersionRecord] {
        try records(
            """
            SELECT \(PrescriptionVersionRecord.columnList) FROM prescription_version WHERE prescription_id = ANY($1)
            ORDER BY prescription_id, version
            """, [.texts(ids.map(\.hex))])
    }

    public func attachments(ofAll ids: [PrescriptionID]) throws(StoreError) -> [AttachmentRecord] {
        try records(
            """
            SELECT \(AttachmentRecord.columnList) FROM attachment WHERE prescription_id = ANY($1)
            ORDER BY prescription_id, position
            """, [.texts(ids.map(\.hex))])
    }
}
