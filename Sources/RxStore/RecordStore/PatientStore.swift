/// Patient records (`person`, format 4) and the owner's bucket hashes over them
/// (`person_buckets`, one row). Before format 4 there are none: every read answers empty.
public protocol PatientStore: AnyObject {
    /// Every patient row, in id order.
    func patients() throws(StoreError) -> [PatientRecord]
    /// Every patient row's id and MAC, in id order (what the state root's patients hash covers),
    /// without the sealed info: enough to check the set before opening one row.
    func patientMACs() throws(StoreError) -> [(id: PatientID, mac: [UInt8])]
    /// The ids and MACs of the patient rows whose id starts with `prefix` (two hex digits: one
    /// bucket, `PatientBuckets`), in id order: a range query on the id.
    func patientMACs(withPrefix prefix: String) throws(StoreError) -> [(id: PatientID, mac: [UInt8])]
    /// The owner's patient bucket hashes, nil when there are none (a vault last written by an
    /// rxvault before them, or a new vault before its first write).
    func patientBuckets() throws(StoreError) -> PatientBucketsRecord?
    /// Stores the patient bucket hashes, creating their table if there is none yet.
    func setPatientBuckets(_ record: PatientBucketsRecord) throws(StoreError)
    /// One patient row, or nil.
    func patient(id: PatientID) throws(StoreError) -> PatientRecord?
    /// Inserts the patient, or replaces the row with the same id.
    func upsert(_ patient: PatientRecord) throws(StoreError)
    /// Deletes the patient row. Returns false if there was none.
    func deletePatient(_ id: PatientID) throws(StoreError) -> Bool
}

/// A patient (format 4): the owner's sealed info (name, birth date, the ids of patients merged
/// into this one) and the owner's MAC over the row (record-MAC sub-key).
public struct PatientRecord: Sendable, Equatable {
    public var id: PatientID
    public var info: [UInt8]
    public var mac: [UInt8]

    public init(id: PatientID, info: [UInt8], mac: [UInt8]) {
        self.id = id
        self.info = info
        self.mac = mac
    }
}

/// The one `person_buckets` row: the patient bucket hashes (with the patients hash they were
/// computed with) and the owner's MAC over them, under the state sub-key (docs/format.md).
public struct PatientBucketsRecord: Sendable, Equatable {
    public var content: [UInt8]
    public var mac: [UInt8]

    public init(content: [UInt8], mac: [UInt8]) {
        self.content = content
        self.mac = mac
    }
}
