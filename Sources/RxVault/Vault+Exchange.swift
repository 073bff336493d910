import Foundation
import RxCrypto
import RxModel
import RxStore
import RxValidate

/// Gathering what leaves the vault (exports) and taking in what comes (imports).
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
    /// as many as a read scope keeps the rows of.
    public static let exportBatchSize = ReadScope.recentLimit
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
        let item = { [self] (record: PrescriptionRecord) throws -> ExportItem in
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
        // The items of `records`, handed over in order, in batches that end early once their
        // attachments reach the byte budget (one large item can pass it alone).
        func handOver(_ records: some Sequence<PrescriptionRecord>) throws {
            try Self.handOver(
                records, making: item, weight: \.attachmentBytes,
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
                _ = try patientDirectory()
            }
            // Each batch's rows are read and checked against the manifest on this thread (the
            // store's connection), then opened on all cores (MAC, data key, content: most of an
            // export's work), then handed over in order.
            let sealing = versionSealing
            try verifiedReads {
                for batch in selected.chunks(of: Self.exportBatchSize) {
                    let rows = try batch.map { id throws(VaultError) in try newestRow(id) }
                    let opened = rows.concurrentMap { row in
                        Result { () throws(VaultError) in try sealing.open(row) }
                    }
                    try handOver(try opened.map { try withPatient(try $0.get()) })
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
        for batch in records.chunks(of: Self.exportBatchSize) { try handOver(batch) }
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

    /// Where an import file comes from, as far as this vault can tell.
    public enum ImportOrigin: Sendable, Equatable {
        /// Bound to this vault and its MAC verifies: written by this vault's owner, unchanged since.
        case thisVault
        /// No binding: a client's export, FHIR, or another program's file.
        case unbound
        /// Bound to another vault.
        case otherVault
        /// Bound to this vault, but the MAC does not verify: the file was changed after export.
        case altered

        /// Why such a file may not update prescriptions, in a few words.
        public var reason: String {
            switch self {
            case .thisVault: return "it was exported from this vault"
            case .unbound:
                return "it carries no binding to this vault (a client's export, FHIR or another program's file)"
            case .otherVault: return "it was exported from another vault"
            case .altered: return "its binding to this vault does not verify (the file was changed after export)"
            }
        }
    }

    /// What `import` may do to prescriptions that already exist here. By default nothing: an
    /// import adds new prescriptions, and an id that exists with other content refuses the
    /// whole import (ids are visible in every file, so anyone could write one that names yours).
    public struct ImportPolicy: Sendable {
        /// Store the file's content as a new version of an existing prescription (and add the
        /// attachments it lacks), when the file is bound to this vault.
        public var update: Bool
        /// Update from a file that is not bound to this vault (or whose binding fails).
        public var unverified: Bool
        /// Make new patient records for names close to an existing patient's (`PatientNearMiss`);
        /// without it such names refuse the import, listed, so a typo in one row of a practice's
        /// file cannot split a patient in two (one question per row would not do for a file).
        public var newPatients: Bool

        public init(update: Bool = false, unverified: Bool = false, newPatients: Bool = false) {
            self.update = update || unverified
            self.unverified = unverified
            self.newPatients = newPatients
        }
    }

    /// What an import did (or would do, in a dry run), item by item.
    public struct ImportReport: Sendable {
        public var added: [PrescriptionID] = []
        /// Already in the vault with the same content and attachments: left alone.
        public var unchanged: [PrescriptionID] = []
        /// In the vault with other content or fewer attachments: stored as a new version (--update).
        public var updated: [PrescriptionID] = []
        public var attachmentsAdded = 0
        public var origin: ImportOrigin = .unbound
        /// Every item in file order, with what it does (or why it is refused).
        public var items: [ImportOutcome] = []
        public var refused: [ImportOutcome] { items.filter { $0.action == .refused } }
        /// The rules' advisories for the items stored (new or updated), in file order: what
        /// `add` would have warned about (a zero cylinder with an axis stored as spherical, an
        /// unusual base curve), so an import says it too.
        public var warnings: [ImportWarning] = []
        /// The measurements of the file's patient records (revision 1.2), in file order.
        public var measurements: [MeasurementOutcome] = []
        /// Where the file's patient records come from (their own binding, `vault.patientsMac`).
        public var patientsOrigin: ImportOrigin = .unbound
        public var refusedMeasurements: [MeasurementOutcome] { measurements.filter { $0.action == .refused } }
        /// `2 new, 0 updated, 1 unchanged`, nil when the file carried no measurements.
        public var measurementCounts: String? {
            guard !measurements.isEmpty else { return nil }
            let count = { (action: ImportOutcome.Action) in self.measurements.filter { $0.action == action }.count }
            return "\(count(.new)) new, \(count(.update)) updated, \(count(.unchanged)) unchanged"
        }
    }

    /// One advisory for one item of an import: where in the file, and what.
    public struct ImportWarning: Sendable, Equatable {
        /// The item's place in the file (`prescriptions[3]`, `Bundle.entry[7]`).
        public let position: String
        public let text: String
        /// `prescriptions[3]: OD axis 38 is not made in soft lenses ...`
        public var line: String { "\(position): \(text)" }
    }

    /// One item of an import and what happens to it.
    public struct ImportOutcome: Sendable {
        public enum Action: String, Sendable { case new, unchanged, update, refused }
        public enum Refusal: Sendable, Equatable {
            /// The prescription exists with other content and no update was asked for.
            case needsUpdate
            /// An update was asked for, but the file is not bound to this vault.
            case notBound(ImportOrigin)
        }
        public let position: String
        public let id: PrescriptionID
        public let action: Action
        /// Field by field, what the file's content changes in the stored prescription.
        public let changes: [FieldChange]
        /// Names of the file's attachments this prescription does not have yet.
        public let newAttachments: [String]
        public let refusal: Refusal?

        /// `OD sphere -2.00 → -2.25; note; attachment scan.pdf added`.
        public var changeSummary: String {
            (changes.map(\.description) + newAttachments.map { "attachment \($0) added" }).joined(separator: "; ")
        }
    }

    /// Imports all of `file` or nothing. Every prescription is checked by the same rules as
    /// `add`, and every attachment by the isolated validator; any problem refuses the whole
    /// import with every problem listed by position. Ids are kept (a file from another vault
    /// brings its ids; an item without one gets an id derived from its content), so importing the
    /// same file twice changes nothing. An id that exists here with other content (or without
    /// some of the file's attachments) is an update: refused unless `policy` allows it (see
    /// `ImportPolicy`); a refusal carries the report of every item so a dry run can show it.
    ///
    /// The file is read item by item inside one owner write (`ownerWrite`, the path every owner
    /// write takes), a batch at a time (`importBatchSize`): the batch's items are checked on all
    /// cores (`ImportCheck`), then planned and written in file order, the manifest
    /// rewritten every `importFlushInterval` prescriptions so what is pending stays bounded, and
    /// the write is rolled back if anything is refused (nothing is written once a problem is
    /// found; the rest are only checked, so every problem is listed). `progress` is told how many
    /// items were read so far.
    public func importItems(
        _ file: ImportFile, policy: ImportPolicy = ImportPolicy(), parser: IsolatedParser,
        dryRun: Bool, progress: ((Int) -> Void)? = nil
    ) throws -> ImportReport {
        let today = clock.today()
        var problems: [String] = []
        var seen: Set<String> = []
        var report = ImportReport()
        if file.count > 1000 { store.useLargeCacheForBulkWork() }
        do {
            try ownerWrite { write in
                var read = 0
                var refused = false
                // A large import learns at once which prescriptions have rows (`StoredPrescriptions`).
                if file.count > 1000 { try learnStoredPrescriptions(write) }
                // Names are compared with the records the vault held before the import, once per name.
                let before: PatientDirectory? =
                    try header.formatVersion >= 4 && !policy.newPatients ? patientDirectory() : nil
                let nearMissIndex = before.map(PatientNearMiss.Index.init)
                var nearMisses: [String] = []
                var namesSeen: Set<String> = []
                // Most warnings repeat word for word (every contact-lens prescription of a file
                // without the practice's address): each text is kept once, not once per item
                // (23 MiB of an import of 100,000 prescriptions).
                var warningTexts: Set<String> = []
                // Items are checked a batch at a time on all cores (`ImportCheck`), then planned
                // and written in file order here; the new versions of a batch are sealed together.
                var batch: [ImportItem] = []
                // A batch also ends at `batchAttachmentBytes` of attachments, as an export's does.
                var batchBytes = 0
                let batchSize = min(Self.importBatchSize, Self.importFlushInterval)
                func importBatch() throws {
                    let checks = batch.concurrentMap {
                        ImportCheck($0, today: today, directory: before, index: nearMissIndex)
                    }
                    batch.removeAll(keepingCapacity: true)
                    batchBytes = 0
                    for check in checks {
                        var advisories: [String] = []
                        guard
                            let (item, id, prescription) = checkedItem(
                                check, seen: &seen, problems: &problems, advisories: &advisories),
                            problems.isEmpty
                        else { continue }
                        // Updates are planned as if the file were bound to this vault: its binding is
                        // known only at the end, and refuses them then (rolling back) if it is not.
                        let outcome = try planItem(
                            item, id: id, prescription: prescription, origin: .thisVault, policy: policy, in: write)
                        report.items.append(outcome)
                        let stored = outcome.action == .new || outcome.action == .update
                        // What `add` would have warned about, said for what is stored.
                        if stored {
                            report.warnings += advisories.map {
                                ImportWarning(position: item.position, text: warningTexts.insert($0).memberAfterInsert)
                            }
                        }
                        if stored,
                            let problem = Self.nearMissProblem(
                                prescription.patient, at: item.position, candidates: check.nearMisses,
                                seen: &namesSeen)
                        {
                            nearMisses.append(problem)
                        }
                        if outcome.action == .refused { refused = true }
                        // Once anything is refused nothing more is written (it will all be rolled back).
                        if !refused {
                            try importItem(
                                item, id: id, prescription: prescription, outcome: outcome, report: &report,
                                parser: parser, in: write)
                        }
                    }
                    try storeUnsealedVersions(write)
                    // The manifest written every few ten thousand, so what is pending stays small.
                    if write.touched.count >= Self.importFlushInterval { try flushManifest(write) }
                }
                var importFailed = false
                let binding: ExportBinding?
                do {
                    binding = try file.forEachItem { item in
                        read += 1
                        progress?(read)
                        batch.append(item)
                        batchBytes += item.attachmentBytes
                        guard batch.count >= batchSize || batchBytes >= Self.batchAttachmentBytes else { return }
                        do { try importBatch() } catch {
                            importFailed = true
                            throw error
                        }
                    }
                } catch let error as ImportError where !importFailed {
                    // Entries that do not decode: the items before them are imported first, so a
                    // problem one of those throws (an ambiguous patient, a refused attachment) is
                    // the one reported, as when each item was written as it came.
                    try importBatch()
                    throw error
                }
                try importBatch()
                // The file's patient records (revision 1.2), after the prescriptions linked theirs.
                report.patientsOrigin = origin(of: file.patientsBinding, purpose: .exportPatients)
                if problems.isEmpty {
                    try importPatients(
                        file.patients, origin: report.patientsOrigin, policy: policy, today: today,
                        nearMisses: { patient, position in
                            guard let before, let nearMissIndex else { return nil }
                            return Self.nearMissProblem(
                                patient, at: position, in: before, index: nearMissIndex, seen: &namesSeen)
                        }, problems: &problems, report: &report, in: write)
                }
                if !problems.isEmpty || !nearMisses.isEmpty { throw ImportError(problems: problems + nearMisses) }
                let origin = self.origin(of: binding, purpose: .exportBinding)
                report.origin = origin
                if origin != .thisVault && !policy.unverified && report.items.contains(where: { $0.action == .update })
                {
                    report.items = report.items.map { outcome in
                        guard outcome.action == .update else { return outcome }
                        return ImportOutcome(
                            position: outcome.position, id: outcome.id, action: .refused, changes: outcome.changes,
                            newAttachments: outcome.newAttachments, refusal: .notBound(origin))
                    }
                }
                if !report.refused.isEmpty || !report.refusedMeasurements.isEmpty {
                    throw ImportError(
                        problems: report.refused.map(Self.refusalProblem) + report.refusedMeasurements.map(\.problem),
                        report: report)
                }
                if dryRun { throw DryRunRollback() }
                try audit(
                    AuditEvent(
                        time: clock.timestamp(), actor: AuditEvent.ownerActor, action: .import,
                        prescriptions: (report.added + report.updated).map(\.hex),
                        detail: Self.auditDetail(report)))
            }
        } catch is DryRunRollback {
            return report
        } catch let error as ImportError {
            throw error
        } catch {
            throw VaultError.wrap(error)
        }
        return report
    }

    /// `entry[2] VisionPrescription: no patient is named 'Sam Rivra': did you mean ...`, when
    /// `patient` would make a new record and is a near miss of one in `directory`; each name once.
    static func nearMissProblem(
        _ patient: Patient, at position: String, in directory: PatientDirectory, index: PatientNearMiss.Index,
        seen: inout Set<String>
    ) -> String? {
        nearMissProblem(
            patient, at: position, candidates: nearMissCandidates(patient, in: directory, index: index), seen: &seen)
    }

    /// The records of `directory` that `patient` is a near miss of (the part of `nearMissProblem`
    /// that needs nothing of the items before, so an import finds it on all cores); nil when
    /// `patient` names one of its records by id.
    static func nearMissCandidates(
        _ patient: Patient, in directory: PatientDirectory, index: PatientNearMiss.Index
    ) -> [PatientSummary]? {
        if let id = patient.id, directory.summary(id) != nil { return nil }
        return directory.nearMisses(patient, index: index)
    }

    /// `nearMissProblem` with the near misses found (`nearMissCandidates`).
    static func nearMissProblem(
        _ patient: Patient, at position: String, candidates: [PatientSummary]?, seen: inout Set<String>
    ) -> String? {
        guard let near = candidates else { return nil }
        guard seen.insert(PatientName.key(patient.name) + "|" + (patient.birthDate?.description ?? "")).inserted
        else { return nil }
        guard !near.isEmpty else { return nil }
        return "\(position): no patient is named '\(patient.name)': did you mean "
            + near.map { "'\($0.name)' (\($0.id.short))" }.joined(separator: " or ")
            + "? (--new-patient makes a new patient)"
    }

    /// Prescriptions an import writes between rewrites of the manifest buckets.
    /// `RXVAULT_TEST_IMPORT_FLUSH` sets it (tests: a small import that rewrites several times).
    static let importFlushInterval: Int = FaultHook.number("RXVAULT_TEST_IMPORT_FLUSH") ?? 50_000

    /// Whether `binding` says this vault's owner wrote the file, as it is now.
    /// `purpose` names what the MAC covers: the prescriptions (`exportBinding`) or the patient
    /// records (`exportPatients`), each bound on its own so neither can stand in for the other.
    func origin(of binding: ExportBinding?, purpose: AssociatedData.Purpose) -> ImportOrigin {
        guard let binding else { return .unbound }
        guard binding.vaultID == header.vaultID else { return .otherVault }
        return MAC.verify(binding.mac, bindingMessage(binding.content, purpose: purpose), key: exportMACKey)
            ? .thisVault : .altered
    }

    /// Decides, inside the write transaction, what a checked item does: new, unchanged,
    /// update (what changes, field by field) or refused (and why).
    private func planItem(
        _ item: ImportItem, id: PrescriptionID, prescription: Prescription, origin: ImportOrigin,
        policy: ImportPolicy, in write: OwnerWrite
    ) throws -> ImportOutcome {
        do {
            guard try !knownToHaveNoRows(id, in: write), let latest = try store.latestVersion(of: id) else {
                return ImportOutcome(
                    position: item.position, id: id, action: .new, changes: [],
                    newAttachments: item.attachments.map(\.name), refusal: nil)
            }
            // An update builds on the newest version, as an edit does: never on a rolled-back one.
            try requireNewest(latest, of: id)
            let current = try open(latest)
            var existing: Set<String> = []
            for row in try store.attachments(of: id) { existing.insert(try openInfo(row).info.metadata.sha256) }
            var newAttachments: [String] = []
            for attachment in item.attachments {
                let hash = SHA256()
                hash.update(attachment.data)
                if existing.insert(hash.finalHex()).inserted { newAttachments.append(attachment.name) }
            }
            // Format 4: the incoming patient as the vault would link it (found, not created), so a
            // file that names the patient only by name compares equal to what is stored.
            let incoming = try linkPatient(
                PrescriptionRecord(id: id, version: latest.version, recorded: "", prescription: prescription),
                createPatients: false, in: write
            ).prescription
            let differs = current.prescription != incoming
            var changes = differs ? incoming.changes(since: current.prescription) : []
            if differs && changes.isEmpty {
                changes = [FieldChange(field: "content", before: nil, after: nil, isText: true)]
            }
            let action: ImportOutcome.Action
            var refusal: ImportOutcome.Refusal?
            if !differs && newAttachments.isEmpty {
                action = .unchanged
            } else if !policy.update {
                (action, refusal) = (.refused, .needsUpdate)
            } else if origin != .thisVault && !policy.unverified {
                (action, refusal) = (.refused, .notBound(origin))
            } else {
                action = .update
            }
            return ImportOutcome(
                position: item.position, id: id, action: action, changes: changes,
                newAttachments: newAttachments, refusal: refusal)
        }
    }

    /// `prescriptions[3]: 3f9a2c1e exists in this vault with other content (OD sphere -2.00 → -2.25; note)`.
    static func refusalProblem(_ outcome: ImportOutcome) -> String {
        let problem =
            "\(outcome.position): \(outcome.id.short) exists in this vault with other content (\(outcome.changeSummary))"
        if case .notBound(let origin)? = outcome.refusal {
            return problem + "; this file cannot update it: \(origin.reason)"
        }
        return problem
    }

    /// `2 new, 1 updated (3f9a2c1e), 0 unchanged, 1 attachment(s); from this vault's export`.
    static func auditDetail(_ report: ImportReport) -> String {
        let updated = report.updated.isEmpty ? "" : " (\(report.updated.map(\.short).joined(separator: " ")))"
        let from =
            report.updated.isEmpty
            ? ""
            : report.origin == .thisVault ? "; from this vault's export" : "; unverified file: \(report.origin.reason)"
        return
            "\(report.added.count) new, \(report.updated.count) updated\(updated), \(report.unchanged.count) unchanged, "
            + "\(report.attachmentsAdded) attachment(s)\(from)"
            + (report.measurementCounts.map { "; measurements: \($0)" } ?? "")
            + Self.measurementUpdates(report)
    }

    /// ` (updated: 3f9a2c1e 9c1d0e2a) from this vault's export`: a measurement update overwrites
    /// the stored values (measurements have no versions), so the log names each one it changed.
    static func measurementUpdates(_ report: ImportReport) -> String {
        let updated = report.measurements.filter { $0.action == .update }.map { String($0.id.prefix(8)) }
        guard !updated.isEmpty else { return "" }
        return " (updated: \(updated.joined(separator: " ")))"
            + (report.patientsOrigin == .thisVault
                ? " from this vault's export" : " (unverified file: \(report.patientsOrigin.reason))")
    }

    /// Writes one planned import item inside the caller's transaction.
    private func importItem(
        _ item: ImportItem, id: PrescriptionID, prescription: Prescription, outcome: ImportOutcome,
        report: inout ImportReport, parser: IsolatedParser, in write: OwnerWrite
    ) throws {
        do {
            // Known before anything is written for it: a new prescription with no row has no attachment.
            let hadNoRows = try outcome.action == .new && knownToHaveNoRows(id, in: write)
            switch outcome.action {
            case .refused:
                return
            case .unchanged:
                report.unchanged.append(id)
                return
            case .update:
                // Stored now: its grants are sealed again with the new version.
                try storeUnsealedVersions(write)
                if let latest = try store.latestVersion(of: id), outcome.changes.isEmpty == false {
                    let record = PrescriptionRecord(
                        id: id, version: latest.version + 1, recorded: clock.timestamp(), prescription: prescription)
                    try storeVersion(record, in: write)
                    try resealGrants(of: id, previousVersion: latest.version, in: write)
                }
                report.updated.append(id)
            case .new:
                // A new prescription brings its earlier versions along (exports made with --versions).
                // Its rows are sealed and inserted with the batch's (`storeUnsealedVersions`), unless
                // attachments must be stored now, after them.
                let versions =
                    item.history.enumerated().map { index, earlier in
                        PrescriptionRecord(
                            id: id, version: index + 1, recorded: earlier.recorded, prescription: earlier.prescription)
                    } + [
                        PrescriptionRecord(
                            id: id, version: item.history.count + 1, recorded: clock.timestamp(),
                            prescription: prescription)
                    ]
                for version in versions { try storeVersionLater(version, in: write) }
                report.added.append(id)
                guard !item.attachments.isEmpty else { return }
                try storeUnsealedVersions(write)
            }
            // The attachments the prescription lacks (by content), each once.
            var existing: Set<String> = []
            for row in try hadNoRows ? [] : store.attachments(of: id) {
                existing.insert(try openInfo(row).info.metadata.sha256)
            }
            for attachment in item.attachments {
                let hash = SHA256()
                hash.update(attachment.data)
                // Content already there is skipped (importing again changes nothing), also when
                // one import carries the same file twice.
                guard existing.insert(hash.finalHex()).inserted else { continue }
                let source = ByteSource(attachment.data)
                do {
                    // Stored as the file carries it (an rxvault export carries what was stored), so
                    // importing the same file again finds every attachment already there.
                    _ = try storeAttachment(
                        to: id, name: attachment.name, allowDuplicate: true, keepMetadata: true, parser: parser,
                        in: write
                    ) {
                        try source.read(into: &$0)
                    }
                } catch let error as AttachmentRefusal {
                    throw ImportError(problems: [
                        "\(item.position) attachment \(attachment.name): refused: \(error.message)"
                    ])
                } catch VaultError.attachmentRefused(let refusal) {
                    throw ImportError(problems: [
                        "\(item.position) attachment \(attachment.name): refused: \(refusal.message)"
                    ])
                }
                report.attachmentsAdded += 1
            }
        }
    }

    struct DryRunRollback: Error {}

    /// "2026-11-21T21:14:22Z": the only form a recorded time is stored in (also what the API's
    /// `_lastUpdated` takes).
    public static func isTimestamp(_ text: String) -> Bool {
        let b = Array(text.utf8)
        guard b.count == 20, b[4] == 0x2D, b[7] == 0x2D, b[10] == 0x54, b[13] == 0x3A, b[16] == 0x3A, b[19] == 0x5A
        else { return false }
        return [0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18].allSatisfy { b[$0] >= 0x30 && b[$0] <= 0x39 }
            && CalendarDate(iso: String(text.prefix(10))) != nil
    }

    /// An id from the content, for imported prescriptions that bring none (foreign FHIR): the
    /// same record imported twice gets the same id, so it is not duplicated.
    static func derivedID(_ prescription: Prescription) -> PrescriptionID {
        let json = (try? JSONEncoderSorted.encode(prescription)).map(Array.init) ?? []
        let digest = SHA256.hash(Array("rxvault/v1 imported".utf8) + json)
        return PrescriptionID(hex: digest.prefix(16).map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined())!
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
