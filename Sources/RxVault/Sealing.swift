import Foundation
import RxCrypto
import RxModel
import RxStore

/// Opening stored content once its data key is known: shared by the owner (who unwraps data keys
/// with the vault's key-wrapping key) and a client (who gets them from its grants). Keeping one
/// path means a client's reads are checked exactly like the owner's.
struct Sealing {
    let vaultID: [UInt8]

    /// Opens a prescription version's content with its data key, bound to the row's own place.
    func openContent(_ row: PrescriptionVersionRecord, dataKey: SecretBytes) throws(VaultError) -> PrescriptionRecord {
        let id = row.prescriptionID
        let place = "prescription \(id.short) version \(row.version)"
        let plaintext: SecretBytes
        do {
            plaintext = try AEAD.open(
                row.content, key: dataKey,
                associatedData:
                    AssociatedData.object(
                        .content, vaultID: vaultID, type: Vault.objectType, id: id.hex, version: row.version))
        } catch {
            throw .integrity("\(place) failed authentication (altered, moved or damaged)")
        }
        do {
            let content = try plaintext.withUnsafeBytes { bytes throws in try RecordContent(json: bytes) }
            var record = PrescriptionRecord(
                id: id, version: row.version, recorded: content.recorded, prescription: content.prescription,
                change: content.change)
            if let by = content.by {
                guard let stamp = WriteStamp(text: by) else { throw VaultError.integrity("bad stamp") }
                record.by = stamp
            }
            (record.parents, record.conflict) = (content.parents, content.conflict)
            return record
        } catch {
            throw .integrity("\(place) decrypted but does not decode")
        }
    }

    /// Opens an attachment's metadata with its keys.
    func openMetadata(_ row: AttachmentRecord, keys: Vault.AttachmentKeys) throws(VaultError) -> AttachmentInfo {
        let (id, prescriptionID) = (row.id, row.prescriptionID)
        let place = "attachment \(id.short)"
        let plain: SecretBytes
        do {
            plain = try AEAD.open(
                row.metadata, key: keys.metadataKey,
                associatedData:
                    AssociatedData.attachment(
                        .attachmentMetadata, vaultID: vaultID, id: id.hex, prescriptionID: prescriptionID.hex))
        } catch {
            throw .integrity("\(place) failed authentication (altered, moved or damaged)")
        }
        do {
            let metadata = try plain.withUnsafeBytes {
                try JSONDecoder().decode(AttachmentMetadata.self, from: Data($0))
            }
            return AttachmentInfo(id: id, prescriptionID: prescriptionID, metadata: metadata)
        } catch {
            throw .integrity("\(place) metadata decrypted but does not decode")
        }
    }

    /// Decrypts an attachment's chunks in order, handing each to `write`; verifies the final tag,
    /// the size and the SHA-256 against `info`.
    func readStream(
        _ row: AttachmentRecord, info: AttachmentInfo, keys: Vault.AttachmentKeys, store: any RecordStore,
        write: ([UInt8]) throws -> Void
    ) throws {
        let id = info.id
        let place = "attachment \(id.short)"
        let chunkAAD = AssociatedData.attachment(
            .attachmentChunk, vaultID: vaultID, id: id.hex, prescriptionID: row.prescriptionID.hex)
        let reader: SecretStream.Reader
        do { reader = try SecretStream.Reader(key: keys.streamKey, header: row.streamHeader) } catch {
            throw VaultError.integrity("\(place): stream header is damaged")
        }
        let hash = SHA256()
        var total = 0
        var expected = 0
        try store.forEachChunk(ofAttachment: id) { sequence, sealed in
            guard sequence == expected else { throw VaultError.integrity("\(place): chunk \(expected) is missing") }
            expected += 1
            let plain: [UInt8]
            do { plain = try reader.pull(sealed, associatedData: chunkAAD) } catch {
                throw VaultError.integrity(
                    "\(place): chunk \(sequence) failed authentication (altered, moved or out of order)")
            }
            hash.update(plain)
            total += plain.count
            try write(plain)
        }
        guard reader.sawFinal else { throw VaultError.integrity("\(place) is truncated: its final chunk is missing") }
        guard total == info.metadata.size, hash.finalHex() == info.metadata.sha256 else {
            throw VaultError.integrity("\(place): content does not match its recorded size and SHA-256")
        }
    }
}
