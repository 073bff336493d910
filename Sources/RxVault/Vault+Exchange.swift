import Foundation
import RxCrypto
import RxModel
import RxStore
import RxValidate

/// Gathering what leaves the vault (exports) and taking in what comes (imports).
extension Vault {
    /// The prescriptions to export: `ids` if given, else those matching `filter`; for a client
    /// only what it is granted now (and its attachments only if the grant includes them).
    public func exportItems(ids: [PrescriptionID]?, filter: PrescriptionFilter, for client: ClientSummary?,
                            attachments: Bool, versions: Bool) throws -> [ExportItem] {
        // Each id once, in the order given.
        var seen: Set<PrescriptionID> = []
        let ids = ids?.filter { seen.insert($0).inserted }
        var records: [PrescriptionRecord]
        var attachmentsAllowed: Set<String>? = nil
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
        } else if let ids {
            records = try ids.map { try prescription($0) }
        } else {
            // Matched on the index, then read from the records themselves: an export is a copy of
            // what is stored, not of a derived view.
            records = try query(filter).map { try prescription($0.id) }
        }
        return try records.map { record in
            var files: [ExportAttachment] = []
            if attachments && (attachmentsAllowed?.contains(record.id.hex) ?? true) {
                for info in try self.attachments(of: record.id) {
                    var data: [UInt8] = []
                    _ = try readAttachment(info.id, of: record.id) { data += $0 }
                    files.append(ExportAttachment(info: info, data: data))
                }
            }
            let history = versions && client == nil ? try self.history(record.id).dropLast() : []
            return ExportItem(record: record, history: Array(history), attachments: files)
        }
    }

    /// Logs an export (what, in which format, for whom).
    public func recordExport(_ items: [ExportItem], format: String, client: ClientSummary?, recipients: String?) throws(VaultError) {
        try perform {
            try audit(AuditEvent(time: clock.timestamp(), actor: AuditEvent.ownerActor, action: .export, client: client?.id.hex,
                                 prescriptions: items.map(\.record.id.hex),
                                 attachments: items.flatMap { $0.attachments.map(\.info.id.hex) },
                                 detail: [format, recipients].compactMap { $0 }.joined(separator: ", ")))
        }
    }

    /// What an import did (or would do, in a dry run).
    public struct ImportReport: Sendable {
        public var added: [PrescriptionID] = []
        /// Already in the vault with the same content: left alone.
        public var unchanged: [PrescriptionID] = []
        /// In the vault with other content: stored as a new version.
        public var updated: [PrescriptionID] = []
        public var attachmentsAdded = 0
    }

    /// Imports all of `items` or nothing. Every prescription is checked by the same rules as
    /// `add`, and every attachment by the isolated validator; any problem refuses the whole
    /// import with every problem listed by position. Ids are kept (a file from another vault
    /// brings its ids; an item without one gets an id derived from its content), so importing the
    /// same file twice changes nothing.
    public func importItems(_ items: [ImportItem], parser: IsolatedParser, dryRun: Bool) throws -> ImportReport {
        var problems: [String] = []
        var checked: [(ImportItem, RecordID, Prescription)] = []
        var seen: Set<String> = []
        for item in items {
            do {
                let result = try PrescriptionRules.check(item.prescription, today: clock.today())
                let id = item.id ?? Self.derivedID(result.prescription)
                if !seen.insert(id.hex).inserted { problems.append("\(item.position): the same prescription appears twice"); continue }
                for (k, attachment) in item.attachments.enumerated() {
                    if let claimed = attachment.sha256 {
                        let actual = SHA256()
                        actual.update(attachment.data)
                        if actual.finalHex() != claimed { problems.append("\(item.position) attachment \(k) (\(attachment.name)): its SHA-256 does not match its data") }
                    }
                }
                var item = item
                for (index, earlier) in item.history.enumerated() {
                    do {
                        // Store earlier versions as the rules normalise them, with a well-formed time.
                        let normalised = try PrescriptionRules.check(earlier.prescription, today: clock.today()).prescription
                        item.history[index] = (Self.isTimestamp(earlier.recorded) ? earlier.recorded : clock.timestamp(), normalised)
                    } catch {
                        problems += error.violations.map { "\(item.position).history[\(index)]: \($0)" }
                    }
                }
                checked.append((item, id, result.prescription))
            } catch {
                problems += error.violations.map { "\(item.position): \($0)" }
            }
        }
        guard problems.isEmpty else { throw ImportError(problems: problems) }

        var report = ImportReport()
        do {
            try store.write {
                try beginOwnerWrite()
                _ = try maintain()
                report = try importChecked(checked, parser: parser)
                if dryRun { throw DryRunRollback() }
                try finishOwnerWrite()
            }
        } catch is DryRunRollback {
            abandonOwnerWrite()
            return report
        } catch let error as ImportError {
            abandonOwnerWrite()
            throw error
        } catch {
            abandonOwnerWrite()
            throw VaultError.wrap(error)
        }
        ownerWriteCommitted()
        return report
    }

    /// Writes checked import items inside the caller's transaction.
    private func importChecked(_ checked: [(ImportItem, RecordID, Prescription)], parser: IsolatedParser) throws -> ImportReport {
        var report = ImportReport()
        for (item, id, prescription) in checked {
            if let latest = try store.latestVersion(of: id.hex) {
                let current = try open(latest)
                if current.prescription == prescription {
                    report.unchanged.append(id)
                } else {
                    let record = PrescriptionRecord(id: id, version: latest.version + 1, recorded: clock.timestamp(), prescription: prescription)
                    try storeVersion(record)
                    try resealGrants(of: id.hex, previousVersion: latest.version)
                    report.updated.append(id)
                }
            } else {
                // A new prescription brings its earlier versions along (exports made with --versions).
                var version = 0
                for (recorded, earlier) in item.history {
                    version += 1
                    try storeVersion(PrescriptionRecord(id: id, version: version, recorded: recorded, prescription: earlier))
                }
                try storeVersion(PrescriptionRecord(id: id, version: version + 1, recorded: clock.timestamp(), prescription: prescription))
                report.added.append(id)
            }
            var existing: Set<String> = []
            for row in try store.attachments(of: id.hex) { existing.insert(try openInfo(row).info.metadata.sha256) }
            for attachment in item.attachments {
                let hash = SHA256()
                hash.update(attachment.data)
                if existing.contains(hash.finalHex()) { continue }
                let source = ByteSource(attachment.data)
                do {
                    _ = try storeAttachment(to: id, name: attachment.name, parser: parser) { try source.read(into: &$0) }
                } catch let error as AttachmentRefusal {
                    throw ImportError(problems: ["\(item.position) attachment \(attachment.name): refused: \(error.message)"])
                } catch VaultError.attachmentRefused(let refusal) {
                    throw ImportError(problems: ["\(item.position) attachment \(attachment.name): refused: \(refusal.message)"])
                }
                report.attachmentsAdded += 1
            }
        }
        return report
    }

    struct DryRunRollback: Error {}

    /// "2026-11-21T21:14:22Z": the only form a recorded time is stored in.
    static func isTimestamp(_ text: String) -> Bool {
        let b = Array(text.utf8)
        guard b.count == 20, b[4] == 0x2D, b[7] == 0x2D, b[10] == 0x54, b[13] == 0x3A, b[16] == 0x3A, b[19] == 0x5A else { return false }
        return [0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18].allSatisfy { b[$0] >= 0x30 && b[$0] <= 0x39 }
            && CalendarDate(iso: String(text.prefix(10))) != nil
    }

    /// An id from the content, for imported prescriptions that bring none (foreign FHIR): the
    /// same record imported twice gets the same id, so it is not duplicated.
    static func derivedID(_ prescription: Prescription) -> RecordID {
        let json = (try? JSONEncoderSorted.encode(prescription)).map(Array.init) ?? []
        let digest = SHA256.hash(Array("rxvault/v1 imported".utf8) + json)
        return RecordID(hex: digest.prefix(16).map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined())!
    }
}

/// Bytes in memory read in chunks, as `attach` reads a file.
final class ByteSource {
    let bytes: [UInt8]
    var offset = 0
    init(_ bytes: [UInt8]) { self.bytes = bytes }
    func read(into buffer: inout [UInt8]) throws -> Int {
        let n = min(buffer.count, bytes.count - offset)
        for i in 0..<n { buffer[i] = bytes[offset + i] }
        offset += n
        return n
    }
}
