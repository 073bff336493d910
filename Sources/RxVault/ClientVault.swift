import Foundation
import RxCrypto
import RxModel
import RxStore
import RxValidate

/// The vault as a client app sees it, opened with its age X25519 identity instead of the
/// passphrase (`rxvault --identity FILE ...`).
///
/// It can read exactly its granted, unexpired prescriptions (and their attachments when the
/// grant includes them), because those are the only data keys sealed to it: this code enforces
/// the same set, so an id that exists but is not granted gets the same "not found" as one that
/// never existed. Reads are logged to the vault's audit log (sealed to the owner), each
/// authenticated to this client's key so that nobody else can log a read in its name.
public final class ClientVault {
    let store: any RecordStore
    public let header: VaultHeader
    let identity: AgeIdentity
    let clientID: ClientID
    let clock: VaultClock
    /// The usable grants, by prescription id, decrypted once at open.
    let granted: [PrescriptionID: GrantKeys]

    public static func open(
        at path: String, identity: AgeIdentity, clock: VaultClock = .system,
        busyTimeoutMilliseconds: Int32 = Database.defaultBusyTimeoutMilliseconds
    ) throws(VaultError) -> ClientVault {
        let (store, header) = try VaultHeader.openStore(at: path, busyTimeoutMilliseconds: busyTimeoutMilliseconds)
        do {
            // Format 3 finds our row by a tag only we and the owner can compute; earlier formats
            // by our public key, in the clear.
            let publicKey = identity.recipient.publicKey
            let lookup =
                header.formatVersion >= 3
                ? try ClientLookup.tag(
                    vaultID: header.vaultID, clientPublicKey: publicKey, auditPublicKey: header.auditPublicKey,
                    secretKey: identity.secretKey, peerPublicKey: header.auditPublicKey)
                : publicKey
            guard let client = try store.client(withLookup: lookup) else { throw VaultError.unknownIdentity }
            let today = clock.today()
            var granted: [PrescriptionID: GrantKeys] = [:]
            for row in try store.grants(clientID: client.id, references: nil) {
                // Only what opens with our key and names its own row counts; anything else is
                // treated as absent, like an ungranted prescription. (A format-3 row's reference
                // is the owner's to check; its prescription is the one sealed to us.)
                guard let plain = try? X25519.open(row.sealedKeys, publicKey: publicKey, secretKey: identity.secretKey),
                    let keys = GrantKeys.decode(plain),
                    keys.context.grant == row.id.hex, keys.context.client == client.id.hex,
                    header.formatVersion >= 3 || keys.context.prescription == row.reference,
                    let prescription = PrescriptionID(hex: keys.context.prescription),
                    keys.context.expires.map({ today <= $0 }) ?? true
                else { continue }
                granted[prescription] = keys
            }
            return ClientVault(
                store: store, header: header, identity: identity, clientID: client.id, clock: clock, granted: granted)
        } catch let error as VaultError {
            throw error
        } catch {
            throw VaultError.wrap(error)
        }
    }

    init(
        store: any RecordStore, header: VaultHeader, identity: AgeIdentity, clientID: ClientID, clock: VaultClock,
        granted: [PrescriptionID: GrantKeys]
    ) {
        self.store = store
        self.header = header
        self.identity = identity
        self.clientID = clientID
        self.clock = clock
        self.granted = granted
    }

    var sealing: Sealing { Sealing(vaultID: header.vaultID) }
    public var attachmentLimits: ValidationLimits { ValidationLimits(maxBytes: header.maxAttachmentBytes) }

    /// The granted prescriptions (their granted version), newest issue date first.
    public func list() throws(VaultError) -> [PrescriptionRecord] {
        var records: [PrescriptionRecord] = []
        for id in granted.keys.sorted() { records.append(try record(id)) }
        logRead(records.map(\.id.hex), detail: "list")
        return records.sorted { ($0.prescription.issued, $0.id.hex) > ($1.prescription.issued, $1.id.hex) }
    }

    /// The granted prescriptions matching `filter` (attachments count only when granted).
    public func query(_ filter: PrescriptionFilter) throws(VaultError) -> [PrescriptionRecord] {
        let records = try list()
        var counts: [PrescriptionID: Int] = [:]
        for record in records { counts[record.id] = granted[record.id]?.context.attachments.count ?? 0 }
        return filter.apply(records, attachmentCounts: counts, today: clock.today())
    }

    /// Resolves an id or prefix among the granted prescriptions only.
    public func resolve(_ idOrPrefix: String) throws(VaultError) -> PrescriptionID {
        let prefix = try PrescriptionID.prefix(from: idOrPrefix)
        let matches = granted.keys.filter { $0.hex.hasPrefix(prefix) }
        guard let first = matches.first else { throw .notFound(id: idOrPrefix) }
        guard matches.count == 1 else { throw .ambiguousID(prefix: idOrPrefix, matches: matches.count) }
        return first
    }

    public func prescription(_ id: PrescriptionID, version: Int? = nil) throws(VaultError) -> PrescriptionRecord {
        guard version == nil || version == granted[id]?.context.version else { throw .notFound(id: id.short) }
        let result = try record(id)
        logRead([id.hex], detail: "show")
        return result
    }

    public var count: Int { granted.count }

    func record(_ id: PrescriptionID) throws(VaultError) -> PrescriptionRecord {
        guard let keys = granted[id] else { throw .notFound(id: id.short) }
        let row: PrescriptionVersionRecord?
        do { row = try store.versions(of: id).first { $0.version == keys.context.version } } catch {
            throw VaultError.from(error)
        }
        guard let row else { throw .notFound(id: id.short) }
        let record = try sealing.openContent(row, dataKey: keys.dataKey)
        // Format 4: the content names the patient by id; the grant carries that patient.
        guard let patientID = record.prescription.patient.id else { return record }
        guard let patient = keys.context.patient, patient.id == patientID else {
            throw .integrity("the grant on prescription \(id.short) does not carry its patient")
        }
        var rx = record.prescription
        rx.patient = patient
        var resolved = PrescriptionRecord(
            id: record.id, version: record.version, recorded: record.recorded, prescription: rx)
        resolved.change = record.change
        return resolved
    }

    // MARK: - Attachments

    public func attachments(of prescriptionID: PrescriptionID) throws(VaultError) -> [AttachmentInfo] {
        let result = try attachmentRows(of: prescriptionID).map { row, keys throws(VaultError) in
            try sealing.openMetadata(row, keys: keys)
        }
        logRead([prescriptionID.hex], attachments: result.map(\.id.hex), detail: "attachments")
        return result
    }

    func attachmentRows(of prescriptionID: PrescriptionID) throws(VaultError) -> [(
        AttachmentRecord, Vault.AttachmentKeys
    )] {
        guard let keys = granted[prescriptionID] else { throw .notFound(id: prescriptionID.short) }
        var rows: [(AttachmentRecord, Vault.AttachmentKeys)] = []
        for (id, key) in zip(keys.context.attachments, keys.attachmentKeys) {
            let row: AttachmentRecord?
            guard let id = AttachmentID(hex: id) else { continue }
            do { row = try store.attachment(id) } catch { throw VaultError.from(error) }
            guard let row, row.prescriptionID == prescriptionID else { continue }
            rows.append((row, try Vault.AttachmentKeys(dataKey: key)))
        }
        return rows
    }

    public func resolveAttachment(_ reference: String, of prescriptionID: PrescriptionID) throws(VaultError)
        -> AttachmentID
    {
        try AttachmentInfo.resolve(
            reference,
            among: try attachmentRows(of: prescriptionID).map { row, keys throws(VaultError) in
                try sealing.openMetadata(row, keys: keys)
            })
    }

    public func readAttachment(_ id: AttachmentID, of prescriptionID: PrescriptionID, write: ([UInt8]) throws -> Void)
        throws -> AttachmentInfo
    {
        guard let (row, keys) = try attachmentRows(of: prescriptionID).first(where: { $0.0.id == id }) else {
            throw VaultError.attachmentNotFound(id.short)
        }
        store.useSmallCacheForStreaming()
        let info = try sealing.openMetadata(row, keys: keys)
        try store.read { try sealing.readStream(row, info: info, keys: keys, store: store, write: write) }
        logRead([prescriptionID.hex], attachments: [id.hex], detail: "extract \(info.metadata.name)")
        return info
    }

    public func previewAttachment(
        _ id: AttachmentID, of prescriptionID: PrescriptionID, width: UInt32, parser: IsolatedParser
    ) throws -> [UInt8] {
        try AttachmentInfo.preview(width: width, parser: parser) { send in
            _ = try readAttachment(id, of: prescriptionID, write: send)
        }
    }

    // MARK: - Audit

    /// Why the last read could not be logged (nil when it was): the vault file is read-only to
    /// us, or its audit log does not read (an entry altered: an integrity error naming it).
    public private(set) var lastLogFailure: VaultError?
    public var lastLogFailed: Bool { lastLogFailure != nil }

    /// Off while an export gathers its items (the export is logged once, as a whole).
    var loggingReads = true

    /// What a client exports: its granted prescriptions (`ids`, or those matching `filter`) and,
    /// where its grants allow, their attachments. Logged once as a read ("export FORMAT").
    public func exportItems(ids: [PrescriptionID]?, filter: PrescriptionFilter, attachments: Bool, format: String)
        throws -> [ExportItem]
    {
        loggingReads = false
        defer { loggingReads = true }
        var seen: Set<PrescriptionID> = []
        let records =
            try ids.map { try $0.filter { seen.insert($0).inserted }.map { try prescription($0) } } ?? query(filter)
        let items = try records.map { record in
            var files: [ExportAttachment] = []
            if attachments {
                for info in try self.attachments(of: record.id) {
                    var data: [UInt8] = []
                    _ = try readAttachment(info.id, of: record.id) { data += $0 }
                    files.append(ExportAttachment(info: info, data: data))
                }
            }
            return ExportItem(record: record, history: [], attachments: files)
        }
        loggingReads = true
        logRead(
            items.map(\.record.id.hex), attachments: items.flatMap { $0.attachments.map(\.info.id.hex) },
            detail: "export \(format)")
        return items
    }

    func logRead(_ prescriptions: [String], attachments: [String]? = nil, detail: String) {
        guard loggingReads else { return }
        let event = AuditEvent(
            time: clock.timestamp(), actor: clientID.hex, action: .read, client: clientID.hex,
            prescriptions: prescriptions, attachments: attachments, detail: detail)
        do {
            try store.write {
                try AuditLog.appendClientRead(
                    event, store: store, vaultID: header.vaultID, auditPublicKey: header.auditPublicKey,
                    identity: identity)
            }
            lastLogFailure = nil
        } catch {
            lastLogFailure = VaultError.wrap(error)
        }
    }
}
