/// Prescriptions and their versions (`prescription`, `prescription_version`). A prescription is
/// its versions, 1, 2, ...; the newest is the highest. Deleting one deletes its versions, and its
/// attachments with their chunks (`AttachmentStore`), in one step.
public protocol PrescriptionStore: AnyObject {
    /// The ids that begin with `prefix` (lower-case hex digits, possibly none), in order, at most
    /// `limit` of them. A range scan on the id, not a table scan.
    func prescriptionIDs(withPrefix prefix: String, limit: Int) throws(StoreError) -> [PrescriptionID]
    /// Every prescription's newest version, by prescription id.
    func latestVersions() throws(StoreError) -> [PrescriptionVersionRecord]
    /// Every version of one prescription, oldest first; empty if there is no such prescription.
    func versions(of id: PrescriptionID) throws(StoreError) -> [PrescriptionVersionRecord]
    func latestVersion(of id: PrescriptionID) throws(StoreError) -> PrescriptionVersionRecord?
    /// Every version of each of `ids`, each prescription's oldest first (the prescriptions in
    /// any order): what a write that changed many reads back at its end, in one query where a
    /// server is a round trip away.
    func versions(ofAll ids: [PrescriptionID]) throws(StoreError) -> [PrescriptionVersionRecord]
    /// Adds a version; creates the prescription when `record.version` is 1. A version that is
    /// already stored is refused (`StoreError`), never replaced.
    func insert(_ record: PrescriptionVersionRecord) throws(StoreError)
    /// Deletes the prescription's versions numbered `version` and after (a merge renumbers a
    /// history from where the copies' versions interleave); never the first. Returns how many.
    func deleteVersions(of id: PrescriptionID, from version: Int) throws(StoreError) -> Int
    /// Deletes the prescription with every version and attachment. Returns false if there was none.
    func deletePrescription(_ id: PrescriptionID) throws(StoreError) -> Bool
    func prescriptionCount() throws(StoreError) -> Int
    func versionCount() throws(StoreError) -> Int
    /// Every prescription id that any table names in the clear, in order: prescriptions, versions,
    /// attachments, and grants up to format 2 (what the state root's manifest must account for,
    /// rows left behind included).
    func allPrescriptionIDs() throws(StoreError) -> [PrescriptionID]
}

extension PrescriptionStore {
    /// One `versions(of:)` after another: what a store a read away from its data needs no more.
    public func versions(ofAll ids: [PrescriptionID]) throws(StoreError) -> [PrescriptionVersionRecord] {
        var all: [PrescriptionVersionRecord] = []
        for id in ids { all += try versions(of: id) }
        return all
    }
}

/// One stored version of a prescription: its data key wrapped under the vault's key-wrapping
/// key, and its content sealed under that data key. Both are bound to (vault, id, version).
public struct PrescriptionVersionRecord: Sendable, Equatable {
    public var prescriptionID: PrescriptionID
    public var version: Int
    public var wrappedKey: [UInt8]
    public var content: [UInt8]
    /// The owner's MAC over the row (record-MAC sub-key).
    public var mac: [UInt8]

    public init(prescriptionID: PrescriptionID, version: Int, wrappedKey: [UInt8], content: [UInt8], mac: [UInt8]) {
        self.prescriptionID = prescriptionID
        self.version = version
        self.wrappedKey = wrappedKey
        self.content = content
        self.mac = mac
    }
}
