import RxStore

/// `StateRootStore`, `SearchIndexStore` and `PatientStore`: `vault_state`, `manifest`,
/// `search_index`, `person` and the one `person_buckets` row.
extension PostgresRecordStore {
    public func vaultState() throws(StoreError) -> VaultStateRecord? {
        try record("SELECT \(VaultStateRecord.columnList) FROM vault_state WHERE singleton = 1")
    }

    /// One query outside any transaction: `rxvault serve` asks on every request.
    public func vaultStateStamp() throws(StoreError) -> (counter: Int, mac: [UInt8])? {
        try first("SELECT write_counter, mac FROM vault_state WHERE singleton = 1", table: "vault_state", keyColumns: 0)
        { row throws(StoreError) in try row.stateStamp() }
    }

    public func setVaultState(_ state: VaultStateRecord) throws(StoreError) {
        try insertRow(
            state,
            then: """
                 ON CONFLICT (singleton) DO UPDATE SET write_counter = excluded.write_counter, state = excluded.state,
                    mac = excluded.mac
                """)
    }

    public func manifestBuckets() throws(StoreError) -> [(Int, [UInt8])] {
        try buckets(of: "manifest")
    }

    public func manifestBucket(_ bucket: Int) throws(StoreError) -> [UInt8]? {
        try storedBucket(bucket, of: "manifest")
    }

    public func setManifestBucket(_ bucket: Int, to content: [UInt8]?) throws(StoreError) {
        if let content {
            try setBucket(bucket, of: "manifest", to: content)
        } else {
            try session.query("DELETE FROM manifest WHERE bucket = $1", [.integer(Int64(bucket))])
        }
    }

    // MARK: - Search index

    public func indexBuckets() throws(StoreError) -> [(Int, [UInt8])] { try buckets(of: "search_index") }

    public func indexBucket(_ bucket: Int) throws(StoreError) -> [UInt8]? {
        try storedBucket(bucket, of: "search_index")
    }

    public func setIndexBucket(_ bucket: Int, to sealed: [UInt8]) throws(StoreError) {
        try setBucket(bucket, of: "search_index", to: sealed)
    }

    public func clearIndex() throws(StoreError) { try session.query("DELETE FROM search_index") }

    /// `table` is one of the two bucket tables, named here, never from input.
    private func buckets(of table: String) throws(StoreError) -> [(Int, [UInt8])] {
        try rows("SELECT bucket, content FROM \(table) ORDER BY bucket", table: table) { row throws(StoreError) in
            try row.bucket()
        }
    }

    private func storedBucket(_ bucket: Int, of table: String) throws(StoreError) -> [UInt8]? {
        try first("SELECT bucket, content FROM \(table) WHERE bucket = $1", [.integer(Int64(bucket))], table: table) {
            row throws(StoreError) in try row.blob(1)
        }
    }

    private func setBucket(_ bucket: Int, of table: String, to content: [UInt8]) throws(StoreError) {
        try session.query(
            """
            INSERT INTO \(table) (bucket, content) VALUES ($1, $2)
            ON CONFLICT (bucket) DO UPDATE SET content = excluded.content
            """, [.integer(Int64(bucket)), .bytes(content)])
    }

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
