/// What `PrescriptionStore` does the file's own way: the newest versions, the insert, and every
/// id a table names (with the grants' before format 3). The rest is written once for both
/// engines (`SQLStatements+Records.swift`).
extension SQLiteRecordStore {
    private static let versionColumns = PrescriptionVersionRecord.columnList

    public func latestVersions() throws(StoreError) -> [PrescriptionVersionRecord] {
        try statement(
            """
            SELECT \(Self.versionColumns) FROM prescription_version v
            WHERE version = (SELECT max(version) FROM prescription_version WHERE prescription_id = v.prescription_id)
            ORDER BY prescription_id
            """
        ).records()
    }

    public func insert(_ record: PrescriptionVersionRecord) throws(StoreError) {
        if record.version == 1 {
            try statement("INSERT INTO prescription (id) VALUES (?)").run([.text(record.prescriptionID.hex)])
        }
        try insertRow(record)
    }

    public func allPrescriptionIDs() throws(StoreError) -> [PrescriptionID] {
        var ids: [PrescriptionID] = []
        try statement(
            """
            SELECT id FROM prescription UNION SELECT prescription_id FROM prescription_version
            UNION SELECT prescription_id FROM attachment\(try schemaVersion() >= 3 ? "" : " UNION SELECT prescription_id FROM access_grant") ORDER BY 1
            """
        ).forEach { row throws(StoreError) in
            ids.append(try row.row(of: "prescription, prescription_version or attachment").id(0))
        }
        return ids
    }
}
