/// What `PatientStore` does the file's own way: `person_buckets`, which a file gets at its first
/// owner write that sets it, and `INSERT OR REPLACE` for a patient. The rest is written once for
/// both engines (`SQLStatements+Records.swift`).
extension SQLiteRecordStore {
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

    /// A reusable statement: an import that makes a patient per prescription runs it tens of
    /// thousands of times (preparing each afresh was a tenth of the import's time).
    public func upsert(_ patient: PatientRecord) throws(StoreError) {
        try statement(PatientRecord.insertStatement("INSERT OR REPLACE") { _ in "?" })
            .run(patient.storedValues)
    }
}
