import Foundation
import RxCrypto
import RxModel
import RxStore
import RxValidate

/// Gathering what leaves the vault: the prescriptions an export holds, and the MAC that binds
/// an export to this vault (what `import` checks to tell where a file comes from).
extension Vault {
    /// The prescriptions to export: `ids` if given, else those matching `filter`; for a client
    /// only what it is granted now (and its attachments only if the grant includes them).
    public func exportItems(
        ids: [PrescriptionID]?, filter: PrescriptionFilter, for client: ClientSummary?,
        attachments: Bool, versions: Bool
    ) throws -> [ExportItem] {
        var items: [ExportItem] = []
        try forEachExportBatch(ids: ids, filter: filter, for: client, attachments: attachments, versions: versions) {
            items += $0
        }
        return items
    }

    /// How many prescriptions an export reads, opens and hands over at once (`forEachExportBatch`):
    /// as many as a read over many prescriptions keeps the rows of.
    public static let exportBatchSize = ReadBatch.recentLimit
    /// The attachment bytes after which a batch is handed over early, however few its items: a
    /// batch of phone photos must not hold hundreds of megabytes (an export's, an import's).
    static let batchAttachmentBytes = 16 << 20

    /// Makes an element of each source in order and hands them to `body` in runs that end as
    /// soon as their `weight` reaches `budget` (one heavy element can pass it alone) or they hold
    /// `limit` elements, and at the end; each element is made only when the run before it was
    /// handed over, so what is held at once stays near the budget (a batch of attachments).
    static func handOver<Source, Element>(
        _ sources: some Sequence<Source>, making make: (Source) throws -> Element, weight: (Element) -> Int,
        budget: Int, limit: Int = .max, to body: ([Element]) throws -> Void
    ) throws {
        var run: [Element] = []
        var total = 0
        for source in sources {
            let next = try make(source)
            run.append(next)
            total += weight(next)
            if total >= budget || run.count >= limit {
                try body(run)
                (run, total) = ([], 0)
            }
        }
        if !run.isEmpty { try body(run) }
    }

    /// `exportItems` a batch at a time, in order, as they are read: an export of the whole vault
    /// (or of what a filter selects) selects on the index, then reads, verifies and hands over
    /// the prescriptions in one read transaction, so memory does not grow with the vault (a batch
    /// is at most `exportBatchSize` items, and ends early at `batchAttachmentBytes` of
    /// attachments). `count` is told how many there will be before the first batch comes.
    public func forEachExportBatch(
        ids: [PrescriptionID]?, filter: PrescriptionFilter, for client: ClientSummary?,
        attachments: Bool, versions: Bool, count: ((Int) -> Void)? = nil,
        _ body: ([ExportItem]) throws -> Void
    ) throws {
        // Each id once, in the order given.
        var seen: Set<PrescriptionID> = []
        let ids = ids?.filter { seen.insert($0).inserted }
        var attachmentsAllowed: Set<String>? = nil
        let item = { [self] (record: PrescriptionRecord, read: VaultRead) throws -> ExportItem in
            var files: [ExportAttachment] = []
            if attachments && (attachmentsAllowed?.contains(record.id.hex) ?? true) {
                for info in try self.attachments(of: record.id, in: read) {
                    var data: [UInt8] = []
                    // A read over the whole vault keeps its larger cache for the rest.
                    if read.batch == nil { store.useSmallCacheForStreaming() }
                    _ = try readAttachment(info.id, of: record.id, in: read) { data += $0 }
                    files.append(ExportAttachment(info: info, data: data))
                }
            }
            let history = versions && client == nil ? try self.history(record.id, in: read).dropLast() : []
            return ExportItem(record: record, history: Array(history), attachments: files)
        }
        // The items of `records`, handed over in order, in batches that end early once their
        // attachments reach the byte budget (one large item can pass it alone).
        func handOver(_ records: some Sequence<PrescriptionRecord>, in read: VaultRead) throws {
            try Self.handOver(
                records, making: { try item($0, read) }, weight: \.attachmentBytes,
                budget: Self.batchAttachmentBytes, to: body)
        }
        guard client != nil || ids != nil else {
            // Matched on the index, then read from the records themselves: an export is a copy of
            // what is stored, not of a derived view.
            let selected = try matchingIDs(filter)
            count?(selected.count)
            if selected.count > 1000 {
                store.useLargeCacheForBulkWork()
                // Most patients will be read: open their directory once, on all cores, rather
                // than each one's bucket as its first prescription comes.
                _ = try reading { read in try patientDirectory(in: read) }
            }
            // Each batch's rows are read and checked against the manifest on this thread (the
            // store's connection), then opened on all cores (MAC, data key, content: most of an
            // export's work), then handed over in order.
            let sealing = versionSealing
            try readingMany { read in
                for batch in selected.chunks(of: Self.exportBatchSize) {
                    let rows = try batch.map { id throws(VaultError) in try newestRow(id, in: read) }
                    let opened = rows.concurrentMap { row in
                        Result { () throws(VaultError) in try sealing.open(row) }
                    }
                    try handOver(try opened.map { try withPatient(try $0.get(), in: read) }, in: read)
                }
            }
            return
        }
        var records: [PrescriptionRecord]
        if let client {
            // The client's live grants first, then the filter over those (as a client's own query).
            let today = clock.today()
            let live = try grants(client: client).filter { $0.isActive(on: today) }
            let granted = Set(live.map(\.prescriptionID))
            if let ids, let missing = ids.first(where: { !granted.contains($0) }) {
                throw VaultError.invalidInput("client \(client.name) is not granted prescription \(missing.short)")
            }
            attachmentsAllowed = Set(live.filter(\.includesAttachments).map(\.prescriptionID.hex))
            let candidates = try (ids ?? Array(granted)).map { try prescription($0) }
            var counts: [PrescriptionID: Int] = [:]
            for record in candidates where attachmentsAllowed!.contains(record.id.hex) {
                counts[record.id] = try self.attachments(of: record.id).count
            }
            records = ids == nil ? filter.apply(candidates, attachmentCounts: counts, today: today) : candidates
        } else {
            records = try ids!.map { try prescription($0) }
        }
        count?(records.count)
        try reading { read in
            for batch in records.chunks(of: Self.exportBatchSize) { try handOver(batch, in: read) }
        }
    }

    /// Logs an export (what, in which format, for whom).
    public func recordExport(_ items: [ExportItem], format: String, client: ClientSummary?, recipients: String?)
        throws(VaultError)
    {
        try recordExport(
            prescriptions: items.map(\.record.id.hex), attachments: items.flatMap { $0.attachments.map(\.info.id.hex) },
            format: format, client: client, recipients: recipients)
    }

    /// Logs an export of these prescriptions and attachments (ids, hex), and how many patient
    /// records and measurements it carries.
    public func recordExport(
        prescriptions: [String], attachments: [String], patients: [ExportPatient] = [], format: String,
        client: ClientSummary?, recipients: String?
    ) throws(VaultError) {
        let records = patients.isEmpty ? nil : patients.carriedText
        try perform { write in
            try audit(
                AuditEvent(
                    time: clock.timestamp(), actor: AuditEvent.ownerActor, action: .export, client: client?.id.hex,
                    prescriptions: prescriptions, attachments: attachments,
                    detail: [format, records, recipients].compactMap { $0 }.joined(separator: ", ")))
        }
    }

    /// The owner's rxvault JSON export, bound to this vault: its id and a MAC over the content
    /// under the export-MAC sub-key, so an import into this vault can tell its owner wrote it.
    public func encodeBoundExport(_ items: [ExportItem], exported: String) throws -> [UInt8] {
        try RxvaultExport.encode(items, exported: exported) { [self] content in
            (header.vaultID, try MAC.authenticate(bindingMessage(content, purpose: .exportBinding), key: exportMACKey))
        }
    }

    /// The binding of a streamed export (`RxvaultExport.Stream`'s `bind`).
    public func exportBinding(_ content: [UInt8]) throws -> (vaultID: [UInt8], mac: [UInt8]) {
        (header.vaultID, try MAC.authenticate(bindingMessage(content, purpose: .exportBinding), key: exportMACKey))
    }

    /// What an export's MAC covers: the purpose (`exportBinding` for the prescriptions,
    /// `exportPatients` for the patient records), the vault id and the bound content. Signing and
    /// verifying both build it here.
    func bindingMessage(_ content: [UInt8], purpose: AssociatedData.Purpose) -> [UInt8] {
        AssociatedData.build(purpose, [.bytes(header.vaultID), .bytes(content)])
    }
}
