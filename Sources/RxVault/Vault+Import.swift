import Foundation
import RxCrypto
import RxModel
import RxStore
import RxValidate

/// Taking in what comes: an import, all of a file or nothing, inside one owner write.
extension Vault {
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
                    try header.formatVersion >= 4 && !policy.newPatients ? patientDirectory(in: write) : nil
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
            try requireNewest(latest, of: id, in: write)
            let current = try open(latest, in: write)
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
