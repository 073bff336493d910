/// `PatientStore`: `person` and the one `person_buckets` row (format 4; the tables may exist
/// before `user_version` says 4, inside the upgrade's transaction).
extension SQLiteRecordStore {
    /// Whether the patient table is there to read.
    private func hasPatientTable() throws(StoreError) -> Bool {
        if try schemaVersion() >= 4 { return true }
        return try tableExists("person")
    }

    public func patients() throws(StoreError) -> [PatientRecord] {
        guard try hasPatientTable() else { return [] }
        return try database.prepare("SELECT \(PatientRecord.columnList) FROM person ORDER BY id").records()
    }

    public func patientMACs() throws(StoreError) -> [(id: PatientID, mac: [UInt8])] {
        guard try hasPatientTable() else { return [] }
        var rows: [(id: PatientID, mac: [UInt8])] = []
        try statement("SELECT id, mac FROM person ORDER BY id").forEach { s throws(StoreError) in
            let row = s.row(of: "person")
            rows.append((try row.id(0), try row.blob(1)))
        }
        return rows
    }

    public func patientMACs(withPrefix prefix: String) throws(StoreError) -> [(id: PatientID, mac: [UInt8])] {
        guard let last = prefix.unicodeScalars.last, let next = Unicode.Scalar(last.value + 1) else { return [] }
        guard try hasPatientTable() else { return [] }
        // Every id with the prefix and nothing else: ids >= "ab" and < "ac" (SQLite compares text bytewise).
        let upper = String(prefix.unicodeScalars.dropLast()) + String(next)
        var rows: [(id: PatientID, mac: [UInt8])] = []
        try statement("SELECT id, mac FROM person WHERE id >= ? AND id < ? ORDER BY id")
            .forEach([.text(prefix), .text(upper)]) { s throws(StoreError) in
                let row = s.row(of: "person")
                rows.append((try row.id(0), try row.blob(1)))
            }
        return rows
    }

    public func patientBuckets() throws(StoreError) -> PatientBucketsRecord? {
        guard try schemaVersion() >= 4, try tableExists("person_buckets") else { return nil }
        return try statement("SELECT \(PatientBucketsRecord.columnList) FROM person_buckets WHERE singleton = 1")
            .record()
    }

    public func setPatientBuckets(_ record: PatientBucketsRecord) throws(StoreError) {
        try database.execute(SQLiteDialect.script([StoredSchema.personBuckets], ifNotExists: true))
        try database.prepare(
            PatientBucketsRecord.insertStatement("INSERT OR REPLACE") { _ in "?" }
        ).run(record.storedValues)
    }

    public func patient(id: PatientID) throws(StoreError) -> PatientRecord? {
        guard try hasPatientTable() else { return nil }
        return try statement("SELECT \(PatientRecord.columnList) FROM person WHERE id = ?").record([.text(id.hex)])
    }

    /// A reusable statement: an import that makes a patient per prescription runs it tens of
    /// thousands of times (preparing each afresh was a tenth of the import's time).
    public func upsert(_ patient: PatientRecord) throws(StoreError) {
        try statement(PatientRecord.insertStatement("INSERT OR REPLACE") { _ in "?" })
            .run(patient.storedValues)
    }

    public func deletePatient(_ id: PatientID) throws(StoreError) -> Bool {
        try statement("DELETE FROM person WHERE id = ?").run([.text(id.hex)])
        return database.changes > 0
    }
}
