import RxStore

/// `PatientStore`: `person` and the one `person_buckets` row. (The state root, manifest and
/// search index are written once for both engines, `SQLStatements+Tables.swift`.)
extension PostgresRecordStore {
    // MARK: - Patients

    public func patients() throws(StoreError) -> [PatientRecord] {
        try records("SELECT \(PatientRecord.columnList) FROM person ORDER BY id")
    }

    public func patientMACs() throws(StoreError) -> [(id: PatientID, mac: [UInt8])] {
        try rows("SELECT id, mac FROM person ORDER BY id", table: "person") { row throws(StoreError) in
            (try row.id(0), try row.blob(1))
        }
    }

    public func patientMACs(withPrefix prefix: String) throws(StoreError) -> [(id: PatientID, mac: [UInt8])] {
        guard let last = prefix.unicodeScalars.last, let next = Unicode.Scalar(last.value + 1) else { return [] }
        let upper = String(prefix.unicodeScalars.dropLast()) + String(next)
        return try rows(
            "SELECT id, mac FROM person WHERE id >= $1 AND id < $2 ORDER BY id", [.text(prefix), .text(upper)],
            table: "person"
        ) { row throws(StoreError) in (try row.id(0), try row.blob(1)) }
    }

    public func patientBuckets() throws(StoreError) -> PatientBucketsRecord? {
        try record("SELECT \(PatientBucketsRecord.columnList) FROM person_buckets WHERE singleton = 1")
    }

    public func setPatientBuckets(_ record: PatientBucketsRecord) throws(StoreError) {
        try insertRow(
            record, then: " ON CONFLICT (singleton) DO UPDATE SET content = excluded.content, mac = excluded.mac")
    }

    public func patient(id: PatientID) throws(StoreError) -> PatientRecord? {
        try record("SELECT \(PatientRecord.columnList) FROM person WHERE id = $1", [.text(id.hex)])
    }

    public func upsert(_ patient: PatientRecord) throws(StoreError) {
        // Kept and sent with the write's next statement (`InsertBuffer`), as prescriptions are.
        try session.insert(.person, patient.storedValues.map(BoundValue.init))
    }

    public func deletePatient(_ id: PatientID) throws(StoreError) -> Bool {
        try changed("DELETE FROM person WHERE id = $1", [.text(id.hex)])
    }
}
