/// Attachments and their content (`attachment`, `attachment_chunk`). An attachment belongs to a
/// prescription (not to one version); its content is a secretstream stored chunk by chunk, so
/// neither writing nor reading it ever holds more than a chunk or two in memory.
public protocol AttachmentStore: AnyObject {
    /// The attachments of one prescription, in the order they were added.
    func attachments(of prescriptionID: PrescriptionID) throws(StoreError) -> [AttachmentRecord]
    /// The attachments of each of `ids`, each prescription's in the order they were added (the
    /// prescriptions in any order): `versions(ofAll:)`'s counterpart.
    func attachments(ofAll ids: [PrescriptionID]) throws(StoreError) -> [AttachmentRecord]
    func attachment(_ id: AttachmentID) throws(StoreError) -> AttachmentRecord?
    /// Adds an attachment row, before its chunks.
    func insert(_ attachment: AttachmentRecord) throws(StoreError)
    func updateMetadata(ofAttachment id: AttachmentID, to metadata: [UInt8], mac: [UInt8]) throws(StoreError)
    /// Stores chunk `sequence` (0, 1, ...) of an attachment's sealed content.
    func insertChunk(attachmentID: AttachmentID, sequence: Int, data: [UInt8]) throws(StoreError)
    /// Calls `body` with each stored chunk in sequence order, one at a time (memory stays bounded).
    /// `body` may use the store meanwhile.
    func forEachChunk(ofAttachment id: AttachmentID, _ body: (Int, [UInt8]) throws -> Void) throws
    /// One stored chunk (nil: there is none with that number), for readers that pull chunk by chunk.
    func chunk(ofAttachment id: AttachmentID, sequence: Int) throws(StoreError) -> [UInt8]?
    /// Deletes the attachment with its chunks. Returns false if there was none.
    func deleteAttachment(_ id: AttachmentID) throws(StoreError) -> Bool
    func attachmentCount() throws(StoreError) -> Int
    /// prescription id -> number of attachments (only prescriptions that have some).
    func attachmentCountsByPrescription() throws(StoreError) -> [PrescriptionID: Int]
}

extension AttachmentStore {
    /// One `attachments(of:)` after another, as `versions(ofAll:)`.
    public func attachments(ofAll ids: [PrescriptionID]) throws(StoreError) -> [AttachmentRecord] {
        var all: [AttachmentRecord] = []
        for id in ids { all += try attachments(of: id) }
        return all
    }
}

/// An attachment: its data key wrapped under the key-wrapping key, its sealed metadata (name,
/// type, size, hash...) and the header of the secretstream its content is stored in, chunk by
/// chunk (`AttachmentStore.insertChunk`).
public struct AttachmentRecord: Sendable, Equatable {
    public var id: AttachmentID
    public var prescriptionID: PrescriptionID
    public var wrappedKey: [UInt8]
    public var metadata: [UInt8]
    /// 24 bytes.
    public var streamHeader: [UInt8]
    /// The owner's MAC over the row (record-MAC sub-key).
    public var mac: [UInt8]

    public init(
        id: AttachmentID, prescriptionID: PrescriptionID, wrappedKey: [UInt8], metadata: [UInt8], streamHeader: [UInt8],
        mac: [UInt8]
    ) {
        self.id = id
        self.prescriptionID = prescriptionID
        self.wrappedKey = wrappedKey
        self.metadata = metadata
        self.streamHeader = streamHeader
        self.mac = mac
    }
}
