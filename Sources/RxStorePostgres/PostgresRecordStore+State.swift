import RxStore

/// What `PatientStore` does PostgreSQL's own way: the patient buckets' upsert, and patients kept
/// and sent in batches (`InsertBuffer`). The rest is written once for both engines
/// (`SQLStatements+Records.swift`).
extension PostgresRecordStore {
    public func patientBuckets() throws(StoreError) -> PatientBucketsRecord? {
        try record("SELECT \(PatientBucketsRecord.columnList) FROM person_buckets WHERE singleton = 1")
    }

    public func setPatientBuckets(_ record: PatientBucketsRecord) throws(StoreError) {
        try insertRow(
            record, then: " ON CONFLICT (singleton) DO UPDATE SET content = excluded.content, mac = excluded.mac")
    }

    public func upsert(_ patient: PatientRecord) throws(StoreError) {
        // Kept and sent with the write's next statement (`InsertBuffer`), as prescriptions are.
        try session.insert(.person, patient.storedValues.map(BoundValue.init))
    }
}
