import RxCrypto
import RxStore

/// An attachment decrypted one chunk per call, for a reader that cannot take it all at once
/// (the API streaming to a slow client): memory stays at one chunk, and nothing is read ahead.
///
/// Every chunk is authenticated as it is pulled; the end (the final tag, the size and SHA-256
/// recorded for the attachment) is checked when `next()` returns nil. If anything fails, the
/// caller must treat what it already sent as void (the API closes the connection without
/// finishing the response, so the client sees a truncated body).
public final class AttachmentStream {
    public let info: AttachmentInfo
    let row: AttachmentRecord
    let store: any RecordStore
    let reader: SecretStream.Reader
    let chunkAAD: [UInt8]
    let hash = SHA256()
    var sequence = 0
    var total = 0
    var finished = false

    init(
        info: AttachmentInfo, row: AttachmentRecord, keys: Vault.AttachmentKeys, store: any RecordStore,
        vaultID: [UInt8]
    ) throws(VaultError) {
        self.info = info
        self.row = row
        self.store = store
        chunkAAD = AssociatedData.attachment(
            .attachmentChunk, vaultID: vaultID, id: info.id.hex, prescriptionID: row.prescriptionID.hex)
        do { reader = try SecretStream.Reader(key: keys.streamKey, header: row.streamHeader) } catch {
            throw .integrity("attachment \(info.id.short): stream header is damaged")
        }
    }

    /// The next plaintext chunk; nil at the verified end.
    public func next() throws(VaultError) -> [UInt8]? {
        guard !finished else { return nil }
        let place = "attachment \(info.id.short)"
        let sealed: [UInt8]?
        do { sealed = try store.chunk(ofAttachment: info.id, sequence: sequence) } catch {
            throw VaultError.from(error)
        }
        guard let sealed else {
            finished = true
            guard reader.sawFinal else { throw .integrity("\(place) is truncated: its final chunk is missing") }
            guard total == info.metadata.size, hash.finalHex() == info.metadata.sha256 else {
                throw .integrity("\(place): content does not match its recorded size and SHA-256")
            }
            return nil
        }
        guard !reader.sawFinal else { throw .integrity("\(place): chunk \(sequence) follows the final one") }
        let plain: [UInt8]
        do { plain = try reader.pull(sealed, associatedData: chunkAAD) } catch {
            throw .integrity("\(place): chunk \(sequence) failed authentication (altered, moved or out of order)")
        }
        sequence += 1
        hash.update(plain)
        total += plain.count
        return plain
    }
}

extension Vault {
    /// Opens an attachment of `prescriptionID` for reading chunk by chunk (after checking the
    /// prescription's rows against the owner's manifest).
    public func attachmentStream(_ id: AttachmentID, of prescriptionID: PrescriptionID) throws(VaultError)
        -> AttachmentStream
    {
        try reading { read throws -> AttachmentStream in
            try verifyCurrent(prescriptionID.hex, in: read)
            guard let row = try store.attachment(id), row.prescriptionID == prescriptionID else {
                throw VaultError.attachmentNotFound(id.short)
            }
            let (info, keys) = try openInfo(row)
            return try AttachmentStream(info: info, row: row, keys: keys, store: store, vaultID: header.vaultID)
        }
    }
}
