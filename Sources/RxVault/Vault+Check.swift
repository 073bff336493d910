import RxCrypto
import RxModel
import RxStore

/// `rxvault check`: a staged integrity check of the live vault, like `restic check`.
extension Vault {
    public struct CheckReport: Sendable {
        public struct Stage: Sendable {
            public let name: String
            public let checked: Int
            public let errors: [String]
            public let notes: [String]

            public init(name: String, checked: Int, errors: [String], notes: [String]) {
                self.name = name
                self.checked = checked
                self.errors = errors
                self.notes = notes
            }
        }
        public var stages: [Stage] = []

        public init(stages: [Stage] = []) { self.stages = stages }
        public var isClean: Bool { stages.allSatisfy { $0.errors.isEmpty } }
    }

    /// Checks everything that can be checked with the passphrase. With `readData`, also decrypts
    /// every attachment chunk (slower: reads the whole file).
    public func check(readData: Bool) throws(VaultError) -> CheckReport {
        var report = CheckReport()
        try reading { read in
            if let history = historyStage() { report.stages.append(history) }
            report.stages.append(try checkDatabase())
            report.stages.append(try guarded("prescription versions") { try checkPrescriptions(in: read) })
            report.stages.append(
                try guarded(Self.attachmentStage(readData)) { try checkAttachments(readData: readData) })
            report.stages.append(try guarded("search index") { try checkIndex(in: read) })
            report.stages.append(try guarded("clients and grants") { try checkGrants() })
            report.stages.append(try guarded("state root and manifest") { try checkState() })
            report.stages.append(try guarded("audit log chain") { try checkAudit() })
        }
        return report
    }

    /// The file against what this computer has seen of the vault (the rollback anchor and,
    /// from format 8, its knowledge): a rollback or a fork is an error (exit 76), as damage is;
    /// nil when this computer keeps no anchor.
    private func historyStage() -> CheckReport.Stage? {
        guard anchor != nil else { return nil }
        return stage(
            "line of history", 1, rollback.map { [Self.historyWarning($0, refused: "changes are refused")] } ?? [])
    }

    private func stage(_ name: String, _ checked: Int, _ errors: [String], _ notes: [String] = []) -> CheckReport.Stage
    {
        CheckReport.Stage(name: name, checked: checked, errors: errors, notes: notes)
    }

    /// Runs one stage; a row it cannot read at all (a value out of range, of another type, NULL:
    /// `StoreError.corrupt`) or cannot authenticate ends that stage with it as its finding, and
    /// the next stage runs, so `check` reports everything it can.
    private func guarded(_ name: String, _ body: () throws -> CheckReport.Stage) throws -> CheckReport.Stage {
        do { return try body() } catch { return stage(name, 0, [try Self.finding(error)]) }
    }

    /// What `check` reports for an error met while checking: an error of the vault (as it always
    /// reported them), or of a stored row that does not read or authenticate. Anything else (the
    /// vault busy, a failing disk) ends `check`.
    static func finding(_ error: any Error) throws -> String {
        if let error = error as? VaultError { return error.description }
        let wrapped = VaultError.wrap(error)
        guard case .integrity = wrapped else { throw wrapped }
        return wrapped.description
    }

    static func attachmentStage(_ readData: Bool) -> String {
        readData ? "attachments (metadata and every chunk)" : "attachments (metadata; --read-data for content)"
    }

    /// The engine's own check of its storage (SQLite: `integrity_check`, `foreign_key_check`).
    private func checkDatabase() throws -> CheckReport.Stage {
        stage("database structure", 1, try store.checkStructure())
    }

    private func checkPrescriptions(in read: VaultRead) throws -> CheckReport.Stage {
        var errors: [String] = []
        var count = 0
        for id in try store.prescriptionIDs(withPrefix: "", limit: Int.max) {
            let versions: [PrescriptionVersionRecord]
            do { versions = try store.versions(of: id) } catch {
                errors.append(try Self.finding(error))
                continue
            }
            if versions.isEmpty { errors.append("prescription \(id.short) has no versions") }
            for (index, row) in versions.enumerated() {
                count += 1
                if row.version != index + 1 {
                    errors.append("prescription \(id.short) is missing version \(index + 1)")
                }
                do { _ = try open(row, in: read) } catch { errors.append(error.description) }
            }
        }
        return stage("prescription versions", count, errors)
    }

    private func checkAttachments(readData: Bool) throws -> CheckReport.Stage {
        var errors: [String] = []
        var count = 0
        for id in try store.prescriptionIDs(withPrefix: "", limit: Int.max) {
            let rows: [AttachmentRecord]
            do { rows = try store.attachments(of: id) } catch {
                errors.append(try Self.finding(error))
                continue
            }
            for row in rows {
                count += 1
                do {
                    let (info, keys) = try openInfo(row)
                    if readData { try sealing.readStream(row, info: info, keys: keys, store: store) { _ in } }
                } catch {
                    errors.append(try Self.finding(error))
                }
            }
        }
        return stage(Self.attachmentStage(readData), count, errors)
    }

    private func checkIndex(in read: VaultRead) throws -> CheckReport.Stage {
        var errors: [String] = []
        var indexed: [PrescriptionID: PrescriptionRecord] = [:]
        var withoutStatus: Set<PrescriptionID> = []
        for (bucket, sealed) in try store.indexBuckets() {
            do {
                let snapshot = SearchIndex.Snapshot()
                try readIndexBucket(bucket, sealed: sealed, into: snapshot, state: try verifiedState(in: read))
                for row in snapshot.rows {
                    let id = SearchIndex.id(row)
                    if row.eyes & SearchIndex.statusKnown == 0 { withoutStatus.insert(id) }
                    if SearchIndex.bucket(of: id.hex) != bucket {
                        errors.append("search index: \(id.short) is in the wrong bucket")
                    }
                    indexed[id] = try snapshot.record(row)
                }
            } catch let error as VaultError {
                errors.append(error.description)
            } catch let error as StoreError {
                errors.append(try Self.finding(error))
            } catch {
                errors.append("search index bucket \(bucket) does not decode")
            }
        }
        let rows = try store.latestVersions()
        for row in rows {
            guard let record = try? open(row, in: read) else { continue } // reported by the versions stage
            let stored = indexed.removeValue(forKey: row.prescriptionID)
            switch IndexEntryState(
                stored: stored, record: record, statusKnown: !withoutStatus.contains(row.prescriptionID))
            {
            case .current: break
            case .damagedContent(let fields):
                errors.append(
                    "search index: prescription \(row.prescriptionID.short)'s entry differs from its record at the same version in \(fields.joined(separator: ", ")) (the index is derived from the authenticated record); 'rxvault check --repair-index' rewrites it from the record"
                )
            case .missingOrStale:
                errors.append("search index: prescription \(row.prescriptionID.short) is missing or stale")
            }
        }
        for id in indexed.keys.sorted() { errors.append("search index: \(id.short) is indexed but not stored") }
        // Entries an earlier rxvault wrote hold no status: every read opens their records for it
        // (correct, slower). Not an error: the owner's writes and --repair-index store it.
        let notes =
            withoutStatus.isEmpty
            ? []
            : [
                "\(withoutStatus.count) index entr\(withoutStatus.count == 1 ? "y was" : "ies were") written by an earlier rxvault without the prescription's status (reads take it from the record); 'rxvault check --repair-index' stores it"
            ]
        return stage("search index", rows.count, errors, notes)
    }

    private func checkGrants() throws -> CheckReport.Stage {
        var errors: [String] = []
        var clients: [ClientID: ClientSummary] = [:]
        let clientRows = try store.clients()
        for row in clientRows {
            do { clients[row.id] = try openClient(row) } catch { errors.append(try Self.finding(error)) }
        }
        let grants = try store.grants(clientID: nil, references: nil)
        for row in grants {
            guard let client = clients[row.clientID] else {
                errors.append("grant \(row.id.short) names no valid client")
                continue
            }
            do {
                // One row at a time, so that one bad row is reported and the others still checked.
                let named = header.formatVersion >= 3 ? try grantInfo(row).prescription ?? "" : row.reference
                guard let prescription = PrescriptionID(hex: named),
                    try grantReference(clientID: row.clientID, prescriptionID: prescription) == row.reference
                else {
                    throw VaultError.integrity(
                        "grant \(row.id.short)'s reference is not its client's and prescription's (altered, or moved from another row)"
                    )
                }
                _ = try openGrant(StoredGrant(row: row, prescriptionID: prescription), client: client)
            } catch { errors.append(try Self.finding(error)) }
        }
        return stage("clients and grants", clientRows.count + grants.count, errors)
    }

    private func checkAudit() throws -> CheckReport.Stage {
        let (checked, errors, notes) = try auditFindings()
        return stage("audit log chain", checked, errors, notes)
    }
}

/// How an index entry compares with the newest stored version of its prescription.
enum IndexEntryState {
    case current
    /// Same version and time, other content (the fields named): the entry was encoded wrongly
    /// (rxvault 0.1.0 rebuilt a plus-cylinder lens from its minus-cylinder filter values; an
    /// index written before the status was indexed reads a withdrawn prescription as active).
    /// Derived data that the authenticated record can restore.
    case damagedContent([String])
    /// No entry, or one naming another version: rows were deleted or put back; never repaired
    /// silently, as that would accept a rollback.
    case missingOrStale

    /// `statusKnown`: the entry holds a status (bit 4). One an earlier rxvault wrote does not, and
    /// reads take its status from the record, so it is not compared.
    init(stored: PrescriptionRecord?, record: PrescriptionRecord, statusKnown: Bool = true) {
        guard var stored, stored.version == record.version, stored.recorded == record.recorded else {
            self = .missingOrStale
            return
        }
        if !statusKnown {
            var rx = stored.prescription
            rx.recordStatus = record.prescription.recordStatus
            var same = PrescriptionRecord(
                id: stored.id, version: stored.version, recorded: stored.recorded, prescription: rx)
            same.change = stored.change
            same.conflict = stored.conflict
            stored = same
        }
        let expected = SearchIndex.entryForm(record)
        let fields =
            Self.differences(stored.prescription, expected.prescription)
            + (stored.change == expected.change ? [] : ["the change note"])
            + (stored.isInConflict == record.isInConflict ? [] : ["the conflict mark"])
        self = fields.isEmpty ? .current : .damagedContent(fields)
    }

    /// The fields in which an entry differs from its record, named as `show` names them.
    static func differences(_ a: Prescription, _ b: Prescription) -> [String] {
        var fields: [String] = []
        func compare<T: Equatable>(_ name: String, _ x: T, _ y: T) { if x != y { fields.append(name) } }
        compare("kind", a.kind, b.kind)
        compare("status", a.recordStatus, b.recordStatus)
        compare("patient", a.patient, b.patient)
        compare("prescriber", a.prescriber, b.prescriber)
        compare("issue date", a.issued, b.issued)
        compare("expiry date", a.expires, b.expires)
        compare("assumed expiry date", a.assumedExpiry, b.assumedExpiry)
        compare("note", a.note, b.note)
        compare("PD", a.pupillaryDistance, b.pupillaryDistance)
        compare("lens type", a.contactLensType, b.contactLensType)
        for eye in Eye.allCases { compare("\(eye.label) lens", a[eye], b[eye]) }
        if fields.isEmpty && a != b { fields.append("other fields") }
        return fields
    }
}

extension Vault {
    /// Rewrites index entries that differ from their record at the same version (`check`'s
    /// "differs from its record"), and those an earlier rxvault wrote without the status, in one
    /// write transaction. Refuses (integrity) if any entry is
    /// missing or names another version: that is a sign of rows deleted or put back, and
    /// rewriting the index from the rows would accept it. Returns the prescriptions repaired.
    public func repairIndex() throws(VaultError) -> [PrescriptionID] {
        try perform { (write: OwnerWrite) throws -> [PrescriptionID] in
            var indexed: [PrescriptionID: PrescriptionRecord] = [:]
            var withoutStatus: Set<PrescriptionID> = []
            for (bucket, sealed) in try store.indexBuckets() {
                let snapshot = SearchIndex.Snapshot()
                try readIndexBucket(bucket, sealed: sealed, into: snapshot, state: write.state)
                for row in snapshot.rows {
                    indexed[SearchIndex.id(row)] = try snapshot.record(row)
                    if row.eyes & SearchIndex.statusKnown == 0 { withoutStatus.insert(SearchIndex.id(row)) }
                }
            }
            var repaired: [PrescriptionID] = []
            for row in try store.latestVersions() {
                let record = try open(row, in: write)
                switch IndexEntryState(
                    stored: indexed[row.prescriptionID], record: record,
                    statusKnown: !withoutStatus.contains(row.prescriptionID))
                {
                case .current:
                    // Written by an earlier rxvault: the status is stored with it now.
                    if withoutStatus.contains(row.prescriptionID) { try indexChanged(record.id, record, in: write) }
                    continue
                case .missingOrStale:
                    throw VaultError.integrity(
                        "search index: prescription \(record.id.short) is missing or stale; the file was altered, so the index is not rewritten"
                    )
                case .damagedContent:
                    try indexChanged(record.id, record, in: write)
                    repaired.append(record.id)
                }
            }
            return repaired
        }
    }
}
