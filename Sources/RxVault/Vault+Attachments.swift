import Foundation
import RxCrypto
import RxModel
import RxStore
import RxValidate

/// Attachments: the photo or scan of the paper prescription, PNG or PDF only.
///
/// Each attachment has its own random data key, from which two keys are derived (`rxattach`
/// family): one seals the metadata, one drives the secretstream that stores the content in
/// 64 KiB chunks. Everything is bound to (vault, attachment, prescription). The file is
/// validated by `IsolatedParser` while it is streamed in; nothing is stored unless the child
/// accepts it, and memory stays at a few chunks whatever the file's size.
extension Vault {
    public static let attachmentChunkSize = 64 << 10
    static let attachmentKeyContext = "rxattach"

    /// The file limits of this vault (its size cap with the validator's defaults).
    public var attachmentLimits: ValidationLimits { ValidationLimits(maxBytes: header.maxAttachmentBytes) }

    /// Validates and stores a file read through `read` (which fills the buffer it is given and
    /// returns the byte count, 0 at the end). `name` nil means "attachment.png|pdf".
    ///
    /// Content the prescription already has (same SHA-256) is refused, naming the attachment
    /// that has it, unless `allowDuplicate`: a second copy is rarely meant, and two attachments
    /// of one name make the name ambiguous.
    public func attach(
        to prescriptionID: PrescriptionID, name: String?, allowDuplicate: Bool = false, keepMetadata: Bool = false,
        parser: IsolatedParser, read: (inout [UInt8]) throws -> Int
    ) throws(VaultError) -> AttachmentInfo {
        try perform { write in
            try storeAttachment(
                to: prescriptionID, name: name, allowDuplicate: allowDuplicate, keepMetadata: keepMetadata,
                parser: parser, in: write, read: read)
        }
    }

    /// `attach`'s work inside the caller's write transaction (so an import can add many).
    func storeAttachment(
        to prescriptionID: PrescriptionID, name: String?, allowDuplicate: Bool = false, keepMetadata: Bool = false,
        parser: IsolatedParser, in write: OwnerWrite, read: (inout [UInt8]) throws -> Int
    ) throws -> AttachmentInfo {
        if let name { try Self.checkName(name) }
        let attachmentID = AttachmentID.random()
        let keys = try AttachmentKeys(fresh: ())
        let wrappedKey = try seal(
            keys.dataKey, purpose: .attachmentKey, attachment: attachmentID.hex, prescription: prescriptionID.hex)
        let writer: SecretStream.Writer
        do { writer = try SecretStream.Writer(key: keys.streamKey) } catch {
            throw VaultError.internalError(error.description)
        }
        let chunkAAD = AssociatedData.attachment(
            .attachmentChunk, vaultID: header.vaultID, id: attachmentID.hex, prescriptionID: prescriptionID.hex)
        let limit = header.maxAttachmentBytes
        store.useSmallCacheForStreaming()

        do {
            guard try store.latestVersion(of: prescriptionID) != nil else {
                throw VaultError.notFound(id: prescriptionID.short)
            }
            try touch(prescriptionID.hex, in: write)
            let existing = allowDuplicate ? [] : try store.attachments(of: prescriptionID).map { try openInfo($0).info }
            try store.insert(
                AttachmentRecord(
                    id: attachmentID, prescriptionID: prescriptionID, wrappedKey: wrappedKey,
                    metadata: [], streamHeader: writer.header, mac: []))
            // The whole file goes to the checker first; what is stored is what it sends back
            // (a PNG without its metadata unless kept), sealed as it arrives.
            let session = try parser.start(mode: keepMetadata ? .validateKeepingMetadata : .validate)
            var total = 0
            var buffer = [UInt8](repeating: 0, count: Self.attachmentChunkSize)
            while true {
                let count = try read(&buffer)
                if count == 0 { break }
                total += count
                guard total <= limit else {
                    throw AttachmentRefusal(.tooLarge, "file is over the \(ByteCount(limit)) limit of this vault")
                }
                buffer.withUnsafeBytes { _ = session.send(UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
            }
            let hash = SHA256()
            var size = 0
            var sequence = 0
            var pending: [UInt8] = []
            pending.reserveCapacity(Self.attachmentChunkSize)
            func storeChunk(final: Bool) throws {
                let sealed = try pending.withUnsafeBytes { try writer.push($0, associatedData: chunkAAD, final: final) }
                try store.insertChunk(attachmentID: attachmentID, sequence: sequence, data: sealed)
                sequence += 1
                pending.removeAll(keepingCapacity: true)
            }
            let validated = try session.finish { piece in
                piece.withUnsafeBytes { hash.update($0) }
                size += piece.count
                var rest = piece
                while !rest.isEmpty {
                    // A full chunk is sealed only once more follows, so the last one is final.
                    if pending.count == Self.attachmentChunkSize { try storeChunk(final: false) }
                    let take = min(Self.attachmentChunkSize - pending.count, rest.count)
                    pending += rest.prefix(take)
                    rest = rest.dropFirst(take)
                }
            }
            try storeChunk(final: true)
            let sha256 = hash.finalHex()
            if let same = existing.first(where: { $0.metadata.sha256 == sha256 }) {
                throw VaultError.duplicateAttachment(existing: same.label)
            }
            let metadata = AttachmentMetadata(
                schema: AttachmentMetadata.currentSchema, name: name ?? "attachment.\(validated.type.fileExtension)",
                type: validated.type, size: size, sha256: sha256, width: validated.width, height: validated.height,
                pages: validated.pages, added: clock.timestamp(), by: try stamp(write)?.text)
            let sealedMetadata = try sealMetadata(metadata, keys: keys, id: attachmentID, prescription: prescriptionID)
            let mac = try MAC.authenticate(
                attachmentRowMessage(
                    id: attachmentID, prescriptionID: prescriptionID, wrappedKey: wrappedKey,
                    metadata: sealedMetadata, streamHeader: writer.header), key: recordMACKey)
            try store.updateMetadata(ofAttachment: attachmentID, to: sealedMetadata, mac: mac)
            try resealGrants(of: prescriptionID, in: write)
            var info = AttachmentInfo(id: attachmentID, prescriptionID: prescriptionID, metadata: metadata)
            info.droppedMetadata = session.droppedMetadata
            info.notes = validated.notes ?? []
            info.imageDataSplits = session.imageDataSplits
            return info
        }
    }

    /// The attachments of a prescription, in the order they were added.
    public func attachments(of prescriptionID: PrescriptionID) throws(VaultError) -> [AttachmentInfo] {
        try reading { read in try attachments(of: prescriptionID, in: read) }
    }

    /// `attachments(of:)` in `read`.
    func attachments(of prescriptionID: PrescriptionID, in read: VaultRead) throws(VaultError) -> [AttachmentInfo] {
        do {
            // Format 2 on: the rows as checked against the manifest (in an export's read, those
            // just read for the prescription itself).
            if let rows = try verifiedRows(prescriptionID.hex, in: read) {
                guard !rows.versions.isEmpty else { throw VaultError.notFound(id: prescriptionID.short) }
                return try rows.attachments.map { try openInfo($0).info }
            }
            guard try store.latestVersion(of: prescriptionID) != nil else {
                throw VaultError.notFound(id: prescriptionID.short)
            }
            return try store.attachments(of: prescriptionID).map { try openInfo($0).info }
        } catch {
            throw VaultError.wrap(error)
        }
    }

    /// Finds an attachment of `prescriptionID` by exact name or by a unique id prefix.
    public func resolveAttachment(_ reference: String, of prescriptionID: PrescriptionID) throws(VaultError)
        -> AttachmentID
    {
        try AttachmentInfo.resolve(reference, among: try attachments(of: prescriptionID))
    }

    /// Decrypts the attachment chunk by chunk, handing each plaintext chunk to `write`. Throws an
    /// integrity error if any chunk fails, one is missing, the final tag is absent or the hash differs;
    /// the caller must then discard what it was given.
    public func readAttachment(
        _ id: AttachmentID, of prescriptionID: PrescriptionID,
        write: ([UInt8]) throws -> Void
    ) throws -> AttachmentInfo {
        store.useSmallCacheForStreaming()
        return try reading { read in try readAttachment(id, of: prescriptionID, in: read, write: write) }
    }

    /// `readAttachment` in `read` (an export's keeps its larger cache for the rest).
    func readAttachment(
        _ id: AttachmentID, of prescriptionID: PrescriptionID, in read: VaultRead,
        write: ([UInt8]) throws -> Void
    ) throws -> AttachmentInfo {
        try verifyCurrent(prescriptionID.hex, in: read)
        guard let row = try store.attachment(id), row.prescriptionID == prescriptionID else {
            throw VaultError.attachmentNotFound(id.short)
        }
        let (info, keys) = try openInfo(row)
        try sealing.readStream(row, info: info, keys: keys, store: store, write: write)
        return info
    }

    /// Renders a downscaled PNG of the attachment in the isolated child.
    public func previewAttachment(
        _ id: AttachmentID, of prescriptionID: PrescriptionID, width: UInt32,
        parser: IsolatedParser
    ) throws -> [UInt8] {
        try AttachmentInfo.preview(width: width, parser: parser) { send in
            _ = try readAttachment(id, of: prescriptionID, write: send)
        }
    }

    /// Deletes the attachment and purges it from the files.
    public func detach(_ id: AttachmentID, of prescriptionID: PrescriptionID) throws(VaultError) {
        try perform { write in
            try touch(prescriptionID.hex, in: write)
            guard let row = try store.attachment(id), row.prescriptionID == prescriptionID else {
                throw VaultError.attachmentNotFound(id.short)
            }
            _ = try store.deleteAttachment(id)
            try resealGrants(of: prescriptionID, in: write)
        }
        purge()
    }

    // MARK: - Keys and sealing

    struct AttachmentKeys {
        let dataKey: SecretBytes
        let metadataKey: SecretBytes
        let streamKey: SecretBytes

        init(dataKey: SecretBytes) throws(VaultError) {
            self.dataKey = dataKey
            do {
                metadataKey = try KeyDerivation.derive(from: dataKey, id: 1, context: Vault.attachmentKeyContext)
                streamKey = try KeyDerivation.derive(from: dataKey, id: 2, context: Vault.attachmentKeyContext)
            } catch { throw .internalError(error.description) }
        }

        init(fresh: Void) throws(VaultError) { try self.init(dataKey: SecretBytes(randomCount: AEAD.keyLength)) }
    }

    /// The shared rule for attachment names (`TextField.attachmentNameProblem`): `extract` writes
    /// the name as a file name and every listing prints it, so it must print as what it is.
    static func checkName(_ name: String) throws(VaultError) {
        if let problem = TextField.attachmentNameProblem(name) {
            throw .invalidInput("attachment name: \(problem)")
        }
    }

    func seal(_ key: SecretBytes, purpose: AssociatedData.Purpose, attachment: String, prescription: String)
        throws(VaultError) -> [UInt8]
    {
        do {
            return try AEAD.seal(
                key, key: keyWrappingKey,
                associatedData: AssociatedData.attachment(
                    purpose, vaultID: header.vaultID, id: attachment, prescriptionID: prescription))
        } catch { throw .internalError(error.description) }
    }

    func sealMetadata(
        _ metadata: AttachmentMetadata, keys: AttachmentKeys, id: AttachmentID, prescription: PrescriptionID
    ) throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return try AEAD.seal(
            Array(try encoder.encode(metadata)), key: keys.metadataKey,
            associatedData: AssociatedData.attachment(
                .attachmentMetadata, vaultID: header.vaultID, id: id.hex, prescriptionID: prescription.hex))
    }

    /// Unwraps an attachment's key and opens its metadata, both bound to the row's own place.
    func openInfo(_ row: AttachmentRecord) throws(VaultError) -> (info: AttachmentInfo, keys: AttachmentKeys) {
        // The owner's MAC covers the metadata (with the content's size and SHA-256) and the stream
        // header: a client holding the attachment's key cannot substitute other content.
        guard
            MAC.verify(
                row.mac,
                attachmentRowMessage(
                    id: row.id, prescriptionID: row.prescriptionID, wrappedKey: row.wrappedKey,
                    metadata: row.metadata, streamHeader: row.streamHeader), key: recordMACKey)
        else {
            throw .integrity("attachment \(row.id.short) was altered (its owner MAC does not verify)")
        }
        let keys = try AttachmentKeys(dataKey: try attachmentDataKey(of: row))
        return (try sealing.openMetadata(row, keys: keys), keys)
    }

    func attachmentRowMessage(
        id: AttachmentID, prescriptionID: PrescriptionID, wrappedKey: [UInt8], metadata: [UInt8],
        streamHeader: [UInt8]
    ) -> [UInt8] {
        AssociatedData.build(
            .attachmentRow,
            [
                .bytes(header.vaultID), .text(id.hex), .text(prescriptionID.hex), .bytes(wrappedKey),
                .bytes(metadata), .bytes(streamHeader)
            ])
    }

    func attachmentDataKey(of row: AttachmentRecord) throws(VaultError) -> SecretBytes {
        do {
            return try AEAD.open(
                row.wrappedKey, key: keyWrappingKey,
                associatedData:
                    AssociatedData.attachment(
                        .attachmentKey, vaultID: header.vaultID, id: row.id.hex, prescriptionID: row.prescriptionID.hex)
            )
        } catch {
            throw .integrity("attachment \(row.id.short) failed authentication (altered, moved or damaged)")
        }
    }
}
