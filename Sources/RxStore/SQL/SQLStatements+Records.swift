/// `PrescriptionStore`, `AttachmentStore` and `PatientStore`, written once for every engine that
/// speaks SQL (`SQLStatements`): the same statements, each engine numbering its parameters its
/// own way, sending the inserts an import repeats its own way (`insertRepeated`), and naming
/// the tables and columns a vault file older than format 4 lacks (`holds`, `storedName`).
extension PrescriptionStore where Self: SQLStatements {
    public func prescriptionIDs(withPrefix prefix: String, limit: Int) throws(StoreError) -> [PrescriptionID] {
        // Ids are lower-case hex compared byte by byte, so a range scan on the key finds a prefix.
        let p = Self.placeholder
        return try fetch(
            "SELECT id FROM prescription WHERE id >= \(p(1)) AND id < \(p(2)) ORDER BY id LIMIT \(p(3))",
            [.text(prefix), .text(prefix + "g"), .integer(Int64(limit))], table: "prescription", keyColumns: 1
        ) { row throws(StoreError) in try row.id(0) }
    }

    public func versions(of id: PrescriptionID) throws(StoreError) -> [PrescriptionVersionRecord] {
        try fetchRecords(
            Self.select(
                PrescriptionVersionRecord.self, "WHERE prescription_id = \(Self.placeholder(1)) ORDER BY version"),
            [.text(id.hex)])
    }

    public func latestVersion(of id: PrescriptionID) throws(StoreError) -> PrescriptionVersionRecord? {
        try fetchRecord(
            Self.select(
                PrescriptionVersionRecord.self,
                "WHERE prescription_id = \(Self.placeholder(1)) ORDER BY version DESC LIMIT 1"), [.text(id.hex)])
    }

    /// The versions no other of their prescription exceeds. SQLite searches the key once per
    /// row; PostgreSQL makes it an anti-join, as fast as its own `DISTINCT ON` at 100,000
    /// prescriptions (1.1 s against 1.0 s; `max(version)` in a subquery took 2.3 to 3.3 s).
    public func latestVersions() throws(StoreError) -> [PrescriptionVersionRecord] {
        try fetchRecords(
            Self.select(
                PrescriptionVersionRecord.self,
                "v WHERE NOT EXISTS (SELECT 1 FROM prescription_version n WHERE n.prescription_id = "
                    + "v.prescription_id AND n.version > v.version) ORDER BY prescription_id"))
    }

    /// Through `insertRepeated`: an import's thousands of rows go as each engine sends them fastest.
    public func insert(_ record: PrescriptionVersionRecord) throws(StoreError) {
        if record.version == 1 { try insertRepeated([.text(record.prescriptionID.hex)], through: .prescription) }
        try insertRepeated(record.storedValues, through: .prescriptionVersion)
    }

    public func allPrescriptionIDs() throws(StoreError) -> [PrescriptionID] {
        var naming = [
            "SELECT id FROM prescription", "SELECT prescription_id FROM prescription_version",
            "SELECT prescription_id FROM attachment"
        ]
        if try grantsNamePrescriptions() { naming.append("SELECT prescription_id FROM access_grant") }
        return try fetch(
            naming.joined(separator: " UNION ") + " ORDER BY 1", [],
            table: "prescription, prescription_version or attachment", keyColumns: 1
        ) { row throws(StoreError) in try row.id(0) }
    }

    public func deleteVersions(of id: PrescriptionID, from version: Int) throws(StoreError) -> Int {
        try runCountingChanges(
            "DELETE FROM prescription_version WHERE prescription_id = \(Self.placeholder(1)) AND version >= "
                + "\(Self.placeholder(2))", [.text(id.hex), .integer(Int64(max(version, 2)))])
    }

    public func deletePrescription(_ id: PrescriptionID) throws(StoreError) -> Bool {
        // Versions, attachments and their chunks go with it (ON DELETE CASCADE).
        try runCountingChanges("DELETE FROM prescription WHERE id = \(Self.placeholder(1))", [.text(id.hex)]) > 0
    }

    public func prescriptionCount() throws(StoreError) -> Int { try count(of: StoredSchema.prescription) }

    public func versionCount() throws(StoreError) -> Int { try count(of: StoredSchema.prescriptionVersion) }
}

extension AttachmentStore where Self: SQLStatements & StoreEngine {
    public func attachments(of prescriptionID: PrescriptionID) throws(StoreError) -> [AttachmentRecord] {
        try fetchRecords(
            Self.select(
                AttachmentRecord.self, "WHERE prescription_id = \(Self.placeholder(1)) ORDER BY \(Self.insertionOrder)"),
            [.text(prescriptionID.hex)])
    }

    public func attachment(_ id: AttachmentID) throws(StoreError) -> AttachmentRecord? {
        try fetchRecord(Self.select(AttachmentRecord.self, "WHERE id = \(Self.placeholder(1))"), [.text(id.hex)])
    }

    public func insert(_ attachment: AttachmentRecord) throws(StoreError) { try insertRecord(attachment) }

    public func updateMetadata(ofAttachment id: AttachmentID, to metadata: [UInt8], mac: [UInt8]) throws(StoreError) {
        let p = Self.placeholder
        try run(
            "UPDATE attachment SET metadata = \(p(1)), mac = \(p(2)) WHERE id = \(p(3))",
            [.blob(metadata), .blob(mac), .text(id.hex)])
    }

    /// A 30 MiB attachment is about 500 of these: SQLite keeps the statement prepared.
    public func insertChunk(attachmentID: AttachmentID, sequence: Int, data: [UInt8]) throws(StoreError) {
        let p = Self.placeholder
        try run(
            "INSERT INTO attachment_chunk (attachment_id, seq, data) VALUES (\(p(1)), \(p(2)), \(p(3)))",
            [.text(attachmentID.hex), .integer(Int64(sequence)), .blob(data)])
    }

    public func chunk(ofAttachment id: AttachmentID, sequence: Int) throws(StoreError) -> [UInt8]? {
        let p = Self.placeholder
        return try fetch(
            "SELECT attachment_id, seq, data FROM attachment_chunk WHERE attachment_id = \(p(1)) AND seq = \(p(2))",
            [.text(id.hex), .integer(Int64(sequence))], table: "attachment_chunk", keyColumns: 2
        ) { row throws(StoreError) in try row.blob(2) }.first
    }

    /// Every stored chunk, gaps included, fetched one per query after the list of their
    /// numbers: memory stays at a chunk whatever the attachment's size, on every engine (a
    /// server's driver may hold a whole result), and `body` may use the store meanwhile. One
    /// snapshot (`read`) from the list to the last chunk.
    public func forEachChunk(ofAttachment id: AttachmentID, _ body: (Int, [UInt8]) throws -> Void) throws {
        try read {
            let sequences = try fetch(
                "SELECT attachment_id, seq FROM attachment_chunk WHERE attachment_id = \(Self.placeholder(1)) ORDER BY seq",
                [.text(id.hex)], table: "attachment_chunk", keyColumns: 2
            ) { row throws(StoreError) in try row.integer(1, in: StoredRange.chunk) }
            for sequence in sequences {
                guard let data = try chunk(ofAttachment: id, sequence: sequence) else { continue }
                try body(sequence, data)
            }
        }
    }

    public func deleteAttachment(_ id: AttachmentID) throws(StoreError) -> Bool {
        // Its chunks go with it (ON DELETE CASCADE).
        try runCountingChanges("DELETE FROM attachment WHERE id = \(Self.placeholder(1))", [.text(id.hex)]) > 0
    }

    public func attachmentCount() throws(StoreError) -> Int { try count(of: StoredSchema.attachment) }

    public func attachmentCountsByPrescription() throws(StoreError) -> [PrescriptionID: Int] {
        let counts = try fetch(
            "SELECT prescription_id, count(*) FROM attachment GROUP BY prescription_id", [], table: "attachment",
            keyColumns: 1
        ) { row throws(StoreError) in (try row.id(0) as PrescriptionID, try row.integer(1, in: 0...Int64.max)) }
        var byPrescription: [PrescriptionID: Int] = [:]
        for (id, count) in counts { byPrescription[id] = count }
        return byPrescription
    }
}

extension PatientStore where Self: SQLStatements {
    public func patients() throws(StoreError) -> [PatientRecord] {
        guard try holds(StoredSchema.person) else { return [] }
        return try fetchRecords(Self.select(PatientRecord.self, "ORDER BY id"))
    }

    public func patientMACs() throws(StoreError) -> [(id: PatientID, mac: [UInt8])] {
        guard try holds(StoredSchema.person) else { return [] }
        return try fetch("SELECT id, mac FROM person ORDER BY id", [], table: "person", keyColumns: 1) {
            row throws(StoreError) in (try row.id(0), try row.blob(1))
        }
    }

    public func patientMACs(withPrefix prefix: String) throws(StoreError) -> [(id: PatientID, mac: [UInt8])] {
        guard let last = prefix.unicodeScalars.last, let next = Unicode.Scalar(last.value + 1) else { return [] }
        guard try holds(StoredSchema.person) else { return [] }
        // Every id with the prefix and nothing else: ids >= "ab" and < "ac" (compared byte by byte).
        let upper = String(prefix.unicodeScalars.dropLast()) + String(next)
        let p = Self.placeholder
        return try fetch(
            "SELECT id, mac FROM person WHERE id >= \(p(1)) AND id < \(p(2)) ORDER BY id",
            [.text(prefix), .text(upper)],
            table: "person", keyColumns: 1
        ) { row throws(StoreError) in (try row.id(0), try row.blob(1)) }
    }

    public func patient(id: PatientID) throws(StoreError) -> PatientRecord? {
        guard try holds(StoredSchema.person) else { return nil }
        return try fetchRecord(Self.select(PatientRecord.self, "WHERE id = \(Self.placeholder(1))"), [.text(id.hex)])
    }

    /// Through `insertRepeated`: an import that makes a patient per prescription runs it tens of
    /// thousands of times.
    public func upsert(_ patient: PatientRecord) throws(StoreError) {
        try insertRepeated(patient.storedValues, through: .patient)
    }

    public func patientBuckets() throws(StoreError) -> PatientBucketsRecord? {
        guard try holds(StoredSchema.personBuckets) else { return nil }
        return try fetchRecord(Self.select(PatientBucketsRecord.self, "WHERE singleton = 1"))
    }

    /// A vault file made before the table gets it here (`makeIfMissing`).
    public func setPatientBuckets(_ record: PatientBucketsRecord) throws(StoreError) {
        try makeIfMissing(StoredSchema.personBuckets)
        try upsertRecord(record, key: "singleton")
    }

    public func deletePatient(_ id: PatientID) throws(StoreError) -> Bool {
        try runCountingChanges("DELETE FROM person WHERE id = \(Self.placeholder(1))", [.text(id.hex)]) > 0
    }
}
