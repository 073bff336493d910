/// `PrescriptionStore`: `prescription` and `prescription_version`.
extension SQLiteRecordStore {
    public func prescriptionIDs(withPrefix prefix: String, limit: Int) throws(StoreError) -> [PrescriptionID] {
        // Ids are lower-case hex, so a range scan on the primary key finds a prefix without a table scan.
        var ids: [PrescriptionID] = []
        try statement("SELECT id FROM prescription WHERE id >= ? AND id < ? ORDER BY id LIMIT ?")
            .forEach([.text(prefix), .text(prefix + "g"), .integer(Int64(limit))]) { row throws(StoreError) in
                ids.append(try row.row(of: "prescription").id(0))
            }
        return ids
    }

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

    public func versions(of id: PrescriptionID) throws(StoreError) -> [PrescriptionVersionRecord] {
        try statement(
            "SELECT \(Self.versionColumns) FROM prescription_version WHERE prescription_id = ? ORDER BY version"
        ).records([.text(id.hex)])
    }

    public func latestVersion(of id: PrescriptionID) throws(StoreError) -> PrescriptionVersionRecord? {
        try statement(
            "SELECT \(Self.versionColumns) FROM prescription_version WHERE prescription_id = ? ORDER BY version DESC LIMIT 1"
        ).record([.text(id.hex)])
    }

    public func insert(_ record: PrescriptionVersionRecord) throws(StoreError) {
        if record.version == 1 {
            try statement("INSERT INTO prescription (id) VALUES (?)").run([.text(record.prescriptionID.hex)])
        }
        try insertRow(record)
    }

    public func deletePrescription(_ id: PrescriptionID) throws(StoreError) -> Bool {
        // Versions, attachments and their chunks go with it (ON DELETE CASCADE).
        try statement("DELETE FROM prescription WHERE id = ?").run([.text(id.hex)])
        return database.changes > 0
    }

    public func prescriptionCount() throws(StoreError) -> Int {
        Int(try database.integer("SELECT count(*) FROM prescription") ?? 0)
    }

    public func versionCount() throws(StoreError) -> Int {
        Int(try database.integer("SELECT count(*) FROM prescription_version") ?? 0)
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
