import Foundation
import RxCrypto
import RxModel
import RxStore

/// The id of a patient record: 128 random bits, like a prescription's.

/// A patient record as the owner sees it (format 4; DESIGN.md, "Patients").
public struct PatientSummary: Sendable, Hashable {
    public let id: PatientID
    public var name: String
    public var birthDate: CalendarDate?
    /// Ids of the patient records merged into this one: older versions of their prescriptions
    /// still name them, and read as this patient.
    public var merged: [String]
    /// The family and given names, when the source that made the record said which is which
    /// (`Patient.family`, `.given`); cleared when the record is renamed.
    public var family: String?
    public var given: [String]?
    /// The patient's myopia-management measurements (axial length, visual acuity), oldest first:
    /// kept in the patient's sealed record, so the state root covers them with it (DESIGN.md,
    /// "Measurements").
    public var measurements: [EyeMeasurement]
    /// Format 8: the write that last wrote the record (`WriteStamp`); nil for records last
    /// written before. A merge keeps the side whose write the other has not seen.
    public var changed: WriteStamp? = nil

    public init(
        id: PatientID, name: String, birthDate: CalendarDate?, merged: [String], family: String? = nil,
        given: [String]? = nil, measurements: [EyeMeasurement] = []
    ) {
        self.id = id
        self.name = name
        self.birthDate = birthDate
        self.merged = merged
        self.family = family
        self.given = given
        self.measurements = measurements
    }

    /// Records are equal by what they say, whatever write last wrote them (`changed`).
    public static func == (a: PatientSummary, b: PatientSummary) -> Bool {
        a.id == b.id && a.name == b.name && a.birthDate == b.birthDate && a.merged == b.merged
            && a.family == b.family && a.given == b.given && a.measurements == b.measurements
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(id)
        hasher.combine(name)
        hasher.combine(birthDate)
    }

    /// The patient as a prescription shows it.
    public var patient: Patient {
        Patient(name: name, birthDate: birthDate, id: id.hex, family: family, given: given)
    }
    /// `3f9a2c1e Ana Lima (born 1980-04-02)`: how a message lists a candidate.
    public var line: String { "\(id.short) \(name)" + (birthDate.map { " (born \($0))" } ?? "") }
}

/// The sealed `patient.info` (owner-info sub-key; docs/format.md, "Format 4: patients").
struct PatientInfo: Codable {
    var schema: Int
    var name: String
    var birthDate: CalendarDate?
    var merged: [String]?
    /// Added without a format change: absent from records written before, which read as before.
    var family: String?
    var given: [String]?
    /// Added without a format change (docs/format.md, "Measurements"): absent when the patient
    /// has none, so records without them are written byte for byte as before.
    var measurements: [StoredMeasurement]?
    /// Format 8: the write that last wrote the record (`PatientSummary.changed`).
    var by: String? = nil
}

extension PatientInfo {
    /// The bytes JSONEncoder with sorted keys made of it (compact, `/` escaped as `\/`), written
    /// directly: an import seals a patient record for nearly every prescription, and the
    /// encoder was a twentieth of its time. Tests compare the two.
    func sealedJSON() -> [UInt8] {
        var w = JSONWriter(style: .compact, capacity: 96, escapeSlashes: true)
        w.beginObject()
        if let birthDate {
            w.key("birthDate")
            w.string(birthDate.description)
        }
        if let by {
            w.key("by")
            w.string(by)
        }
        w.nameParts(family: family, given: given)
        if let measurements {
            w.key("measurements")
            w.beginArray()
            for m in measurements {
                w.element()
                m.write(to: &w)
            }
            w.endArray()
        }
        if let merged {
            w.key("merged")
            w.beginArray()
            for id in merged {
                w.element()
                w.string(id)
            }
            w.endArray()
        }
        w.key("name")
        w.string(name)
        w.key("schema")
        w.int(schema)
        w.endObject()
        return w.bytes
    }

    /// What the `Codable` decoding reads, read with `JSONTree`: every command that shows a
    /// prescription opens every patient record, and JSONDecoder made 9,000 of them a tenth of an
    /// export. Tests compare the two.
    init(json bytes: UnsafeRawBufferPointer) throws {
        let c = try JSONValueReader(try JSONTree(parsing: bytes)).object()
        schema = try c.required("schema").int()
        name = try c.required("name").string()
        birthDate = try c.optional("birthDate")?.date()
        by = try c.optional("by")?.string()
        merged = try c.optional("merged")?.array().map { v throws(DecodingError) in try v.string() }
        family = try c.optional("family")?.string()
        given = try c.optional("given")?.array().map { v throws(DecodingError) in try v.string() }
        measurements = try c.optional("measurements")?.array().map { v throws(DecodingError) in
            try StoredMeasurement(v.object())
        }
    }
}

/// The patient records of one verified read, by id, by the ids merged into them, and by name
/// (an import links every prescription by name: a scan of every record each time made an import
/// of 10,000 prescriptions over 9,000 patients take minutes).
struct PatientDirectory: Sendable {
    var records: [String: PatientSummary] = [:]
    var aliases: [String: String] = [:]
    /// `PatientName.key` of each record's name -> the ids of the records with that name.
    private var byName: [String: Set<String>] = [:]

    func summary(_ id: String) -> PatientSummary? { records[id] ?? aliases[id].flatMap { records[$0] } }

    mutating func insert(_ summary: PatientSummary) {
        let id = summary.id.hex
        if let old = records[id] { forget(name: old.name, id: id) }
        records[id] = summary
        byName[PatientName.key(summary.name), default: []].insert(id)
        for merged in summary.merged { aliases[merged] = id }
    }

    mutating func remove(_ id: String) {
        guard let old = records.removeValue(forKey: id) else { return }
        forget(name: old.name, id: id)
    }

    private mutating func forget(name: String, id: String) {
        let key = PatientName.key(name)
        byName[key]?.remove(id)
        if byName[key]?.isEmpty == true { byName[key] = nil }
    }

    /// By name (case-folded), then id.
    var all: [PatientSummary] { Self.ordered(Array(records.values)) }

    static func ordered(_ summaries: [PatientSummary]) -> [PatientSummary] {
        summaries.map { (key: PatientName.key($0.name), summary: $0) }
            .sorted { ($0.key, $0.summary.id.hex) < ($1.key, $1.summary.id.hex) }
            .map(\.summary)
    }

    /// The records a patient written as free text is (the rule of `add --patient`): the same name
    /// ignoring case and runs of white space, and no birth date that differs (a record without one,
    /// or a patient given without one, matches on the name alone).
    func matching(_ patient: Patient) -> [PatientSummary] {
        guard let ids = byName[PatientName.key(patient.name)] else { return [] }
        return Self.ordered(
            ids.compactMap { records[$0] }.filter { s in
                s.birthDate == nil || patient.birthDate == nil || s.birthDate == patient.birthDate
            })
    }
}

/// The patient rows one read has checked against the state root at `stamp` (`Vault.patientSummary`):
/// bucket by bucket as they are asked for, against the owner's bucket hashes; or, without bucket
/// hashes for the root's patients hash, every row at once (`whole`).
struct PatientRows {
    var stamp: StateStamp
    var buckets: PatientBuckets?
    var checked: [Int: [(id: PatientID, mac: [UInt8])]] = [:]
    var whole: [(id: PatientID, mac: [UInt8])]?
    var opened: [String: PatientSummary] = [:]

    init(stamp: StateStamp, buckets: PatientBuckets?) {
        self.stamp = stamp
        self.buckets = buckets
    }
}

/// How patient names are compared.
public enum PatientName {
    /// Lower case, white space trimmed and each run of it one space: "  ana   LIMA" is "ana lima".
    public static func key(_ name: String) -> String {
        asciiKey(name) ?? name.split(whereSeparator: \.isWhitespace).joined(separator: " ").lowercased()
    }

    /// `key` of an ASCII name, from its bytes; nil for any other. The same words, lower-cased,
    /// without a Unicode property lookup per character: `query` computes a key for every
    /// prescription it reads (superseded status, patient filters), and at 100,000 the lookups
    /// were a tenth of its instructions. ASCII white space (Unicode's White_Space below 0x80) is
    /// tab, line feed, vertical tab, form feed, carriage return and space.
    static func asciiKey(_ name: String) -> String? {
        var out: [UInt8] = []
        out.reserveCapacity(name.utf8.count)
        var space = false
        for byte in name.utf8 {
            guard byte < 0x80 else { return nil }
            if byte == 0x20 || (0x09...0x0D).contains(byte) {
                space = !out.isEmpty
                continue
            }
            if space {
                out.append(0x20)
                space = false
            }
            out.append((0x41...0x5A).contains(byte) ? byte | 0x20 : byte)
        }
        return String(decoding: out, as: UTF8.self)
    }
}

extension Vault {
    // MARK: - Reading

    /// The patient records, verified: every row's MAC, and the set of rows against the state
    /// root's patients hash (so a deleted patient, or a renamed one put back from an older copy,
    /// is refused). Before format 4 there are none. In an owner write, the records as the write
    /// has left them so far; in a read, as the root the read verified pins them (kept on the
    /// vault with that root's stamp, for the next read under the same root).
    func patientDirectory(in access: any StateAccess) throws -> PatientDirectory {
        guard header.formatVersion >= 4 else { return PatientDirectory() }
        switch access.transaction {
        case .write(let write):
            if let patients = write.patients { return patients }
            try refreshPatientsHash(write)
            let directory = try loadPatients(expected: try write.root().patientsHash)
            write.patients = directory
            return directory
        case .read(let read):
            return try patientDirectoryRead(read)
        }
    }

    /// `patientDirectory` in a read: the stamp, the root and the rows in one snapshot (the
    /// read's), so a write committed in between is never taken for tampering.
    private func patientDirectoryRead(_ read: VaultRead) throws -> PatientDirectory {
        guard let stamp = try storedStateStamp(in: read) else {
            throw VaultError.integrity("the vault's state root is missing")
        }
        if let patientCache, patientCache.stamp == stamp { return patientCache.directory }
        guard let state = try verifiedState(in: read) else { return PatientDirectory() }
        let directory = try loadPatients(expected: state.patientsHash)
        patientCache = (stamp, directory)
        return directory
    }

    /// One patient record, for reading a prescription: its bucket of rows (`PatientBuckets`: the
    /// rows whose id starts with the same byte, a few hundred at 100,000 patients) checked by ids
    /// and MACs against the owner's bucket hash, that hash against the root's patients hash, then
    /// only this row opened (its MAC, its sealed info). Checking every row's id and MAC made `show`
    /// on a vault of 100,000 patients take 2.6 times as long as on one of 100. Without bucket hashes
    /// for the root's patients hash (a vault an older rxvault changed patients in last) the whole
    /// set is checked, as the root alone pins it. Inside a write, with the whole directory already
    /// read, for an id merged into another record, or when a check fails (the directory's error),
    /// the whole directory answers. The stamp, the root, the bucket hashes and the rows are read in
    /// one snapshot (the read's): read one statement at a time, a write committed in between (the
    /// server's audit entries every second) paired the old root with the new audit head, and a
    /// prescription failed to read.
    func patientSummary(_ id: String, in access: any StateAccess) throws -> PatientSummary? {
        guard header.formatVersion >= 4, case .read(let read) = access.transaction else {
            return try patientDirectory(in: access).summary(id)
        }
        return try patientSummaryInOneSnapshot(id, in: read)
    }

    private func patientSummaryInOneSnapshot(_ id: String, in read: VaultRead) throws -> PatientSummary? {
        guard let stamp = try storedStateStamp(in: read) else {
            throw VaultError.integrity("the vault's state root is missing")
        }
        if let patientCache, patientCache.stamp == stamp { return patientCache.directory.summary(id) }
        if patientRows?.stamp != stamp {
            guard let state = try verifiedState(in: read) else { return nil }
            guard let expected = state.patientsHash else { return try patientDirectory(in: read).summary(id) }
            var rows = PatientRows(stamp: stamp, buckets: try currentPatientBuckets(patientsHash: expected))
            if rows.buckets == nil {
                let macs = try store.patientMACs()
                guard VaultState.patientsHash(macs) == expected else {
                    return try patientDirectory(in: read).summary(id)
                }
                rows.whole = macs
            }
            patientRows = rows
        }
        if let opened = patientRows?.opened[id] { return opened }
        guard let covering = try checkedPatientRows(covering: id) else {
            patientRows = nil
            return try patientDirectory(in: read).summary(id)
        }
        // The rows are in id order: find this one's MAC as the check covered it.
        var low = 0
        var high = covering.count
        while low < high {
            let mid = (low + high) / 2
            if covering[mid].id.hex < id { low = mid + 1 } else { high = mid }
        }
        guard low < covering.count, covering[low].id.hex == id else {
            return try patientDirectory(in: read).summary(id)
        }
        // A row that is not the one the check covered (tampering): the whole directory decides,
        // with its integrity error.
        guard let row = try store.patient(id: covering[low].id), row.mac == covering[low].mac else {
            patientRows = nil
            return try patientDirectory(in: read).summary(id)
        }
        let summary = try patientSealing.open(row)
        patientRows?.opened[id] = summary
        return summary
    }

    /// The checked rows among which `id`'s row is, if it exists: the whole set when that was
    /// checked, else `id`'s bucket, read and checked against its hash (once per root). Nil when
    /// the bucket's rows are not the ones the owner wrote last (or `id` is in no bucket).
    private func checkedPatientRows(covering id: String) throws -> [(id: PatientID, mac: [UInt8])]? {
        guard let rows = patientRows else { return nil }
        if let whole = rows.whole { return whole }
        guard let buckets = rows.buckets, let bucket = PatientBuckets.bucket(ofRowID: id) else { return nil }
        if let checked = rows.checked[bucket] { return checked }
        let macs = try store.patientMACs(withPrefix: PatientBuckets.prefix(bucket))
        guard PatientBuckets.hash(bucket: bucket, rows: macs) == buckets.hashes[bucket] else { return nil }
        patientRows?.checked[bucket] = macs
        return macs
    }

    /// The owner's patient bucket hashes for the set of rows the root pins (`patientsHash`); nil
    /// when the file holds none for it: none yet (a vault no rxvault with them has written since
    /// it was made or upgraded), or ones computed for another set (an older rxvault changed
    /// patients since, or the row was put back from an older copy): the whole set is checked then.
    /// A row whose MAC does not verify is refused: no rxvault writes one.
    func currentPatientBuckets(patientsHash: [UInt8]) throws -> PatientBuckets? {
        guard let record = try store.patientBuckets() else { return nil }
        guard let buckets = PatientBuckets.decode(record.content),
            MAC.verify(record.mac, buckets.macMessage(vaultID: header.vaultID), key: stateMACKey)
        else {
            throw VaultError.integrity(
                "the patient bucket hashes are forged or altered (their MAC does not verify); run 'rxvault check'")
        }
        return buckets.patientsHash == patientsHash ? buckets : nil
    }

    func loadPatients(expected: [UInt8]?) throws -> PatientDirectory {
        let rows = try store.patients()
        guard let expected else {
            throw VaultError.integrity("the state root does not cover the patient records (a format-4 root must)")
        }
        guard VaultState.patientsHash(rows) == expected else {
            throw VaultError.integrity(
                "the patient records are not the ones the owner wrote last (a patient deleted, or put back from an older copy)"
            )
        }
        // Opened on all cores (at 100,000 patients this is most of reading the directory), a
        // few thousand at a time so the opened records are not held twice.
        let sealing = patientSealing
        var directory = PatientDirectory()
        for chunk in rows.chunks(of: 4096) {
            for summary in Array(chunk).concurrentMap({ row in Result { try sealing.open(row) } }) {
                directory.insert(try summary.get())
            }
        }
        return directory
    }

    /// The owner's sealing of patient rows, as a value several threads may use at once.
    var patientSealing: PatientSealing {
        PatientSealing(vaultID: header.vaultID, ownerInfoKey: ownerInfoKey, recordMACKey: recordMACKey)
    }

    /// A stored record with its patient filled in from the patient's record (format-4 content
    /// names its patient by id only). A record written before format 4 is returned as it is.
    func withPatient(_ record: PrescriptionRecord, in access: any StateAccess) throws(VaultError) -> PrescriptionRecord
    {
        guard let patientID = record.prescription.patient.id else { return record }
        let summary: PatientSummary?
        do { summary = try patientSummary(patientID, in: access) } catch { throw VaultError.wrap(error) }
        guard let summary else {
            throw .integrity(
                "prescription \(record.id.short) version \(record.version) names patient \(patientID.prefix(8)), which the vault does not hold"
            )
        }
        var rx = record.prescription
        rx.patient = summary.patient
        // A copy: the version's stamp, parents and conflict go with it.
        var resolved = record
        resolved.prescription = rx
        return resolved
    }

    // MARK: - Writing (inside an owner write)

    /// Seals and stores a patient row, keeping the transaction's directory and patients hash current.
    /// `keepingStamp`: a merge writing the other copy's record as it is (its last write stays the
    /// one that made it, so the copies agree on it and the next merge finds nothing to do).
    func writePatient(_ summary: PatientSummary, keepingStamp: Bool = false, in write: OwnerWrite) throws {
        var summary = summary
        if !keepingStamp { summary.changed = try stamp(write) ?? summary.changed }
        let row = try patientSealing.seal(summary)
        try changePatients(writing: { try store.upsert(row) }, change: { $0.insert(summary) }, in: write)
    }

    func deletePatientRow(_ id: PatientID, in write: OwnerWrite) throws {
        try changePatients(writing: { _ = try store.deletePatient(id) }, change: { $0.remove(id.hex) }, in: write)
    }

    /// Writes a patient row (`writeRow`) and applies `change` to the write's directory in place. The
    /// directory is read (and verified) before the row changes, then taken out of the write's
    /// `patients`, so the change does not copy every record (an import links thousands of patients).
    private func changePatients(
        writing writeRow: () throws -> Void, change: (inout PatientDirectory) -> Void, in write: OwnerWrite
    ) throws {
        var directory = try patientDirectory(in: write)
        write.patients = nil
        try writeRow()
        change(&directory)
        write.patients = directory
        write.patientsChanged = true
    }

    /// The state root's patients hash brought up to the rows as written. Computed once per write
    /// (hashing every row after each change was quadratic in an import): before the root is
    /// sealed, and before the rows are read back against it (`patientDirectory`, the only reader
    /// of the hash inside a write).
    func refreshPatientsHash(_ write: OwnerWrite) throws {
        guard write.patientsChanged, write.state != nil else { return }
        let rows = try store.patientMACs()
        let hash = VaultState.patientsHash(rows)
        write.state?.patientsHash = hash
        // The bucket hashes from the same rows (`storePatientBuckets` writes them with the root).
        write.freshPatientBuckets = PatientBuckets(rows: rows, patientsHash: hash)
        write.patientsChanged = false
    }

    /// At the end of every owner write (format 4, after `refreshPatientsHash`): the bucket hashes
    /// for the patients hash the new root pins. Computed with it when this write changed patients;
    /// otherwise the stored ones still hold (they are bound to the patients hash, not to a write),
    /// unless there are none for this set (the first write since the vault was made, upgraded, or
    /// had its patients changed by an older rxvault): then from the rows, once, if they are the
    /// set the root pins (if not, there are none to write: reads check the whole set and refuse).
    func storePatientBuckets(_ write: OwnerWrite) throws {
        guard header.formatVersion >= 4, let hash = write.state?.patientsHash else { return }
        var buckets = write.freshPatientBuckets
        if buckets?.patientsHash != hash {
            if case .some(.some) = try? currentPatientBuckets(patientsHash: hash) { return }
            let rows = try store.patientMACs()
            guard VaultState.patientsHash(rows) == hash else { return }
            buckets = PatientBuckets(rows: rows, patientsHash: hash)
        }
        guard let buckets else { return }
        try store.setPatientBuckets(
            PatientBucketsRecord(
                content: buckets.encoded(),
                mac: try MAC.authenticate(buckets.macMessage(vaultID: header.vaultID), key: stateMACKey)))
    }

    /// Format 4: the record with its patient linked to a patient record: the one it names, else
    /// the one its name matches (`PatientDirectory.matching`; two or more is an error listing
    /// them), else a new one (`createPatients`; noted in `patientNotes`). A record that names a
    /// patient this vault does not hold (an export of another vault) is matched by name.
    func linkPatient(_ record: PrescriptionRecord, createPatients: Bool = true, in write: OwnerWrite) throws
        -> PrescriptionRecord
    {
        guard header.formatVersion >= 4 else { return record }
        var rx = record.prescription
        let directory = try patientDirectory(in: write)
        if let id = rx.patient.id, let summary = directory.summary(id) {
            rx.patient = summary.patient
        } else {
            let named = rx.patient.id
            defer {
                if let named, let linked = rx.patient.id.flatMap(PatientID.init(hex:)) {
                    write.linkedPatients[named] = linked
                }
            }
            rx.patient.id = nil
            let matches = directory.matching(rx.patient)
            if matches.count > 1 {
                throw VaultError.ambiguousPatient("patient '\(rx.patient.name)'", candidates: matches.map(\.line))
            }
            if var match = matches.first {
                // What the record lacks and the prescription says (a birth date; family and given
                // names from FHIR, for a record of the same name) is added to the record.
                let before = match
                var said: [String] = []
                if match.birthDate == nil, let birthDate = rx.patient.birthDate {
                    match.birthDate = birthDate
                    said.append("birth date set to \(birthDate)")
                }
                if match.family == nil && match.given == nil && (rx.patient.family != nil || rx.patient.given != nil) {
                    (match.family, match.given) = (rx.patient.family, rx.patient.given)
                    said.append("family and given names kept")
                }
                if match != before, createPatients {
                    // A birth date filled in here answers to the measurements as one set by
                    // `patient rename` does: none may come before it.
                    try Self.checkBirthDate(of: match)
                    try writePatient(match, in: write)
                    // The patient changed, as by `patient rename`: its other prescriptions' index
                    // entries and grants carry the birth date from now on (they were left stale,
                    // which `check` and so `backup` refused).
                    try refreshPrescriptions(of: [match.id.hex], in: write)
                    write.patientNotes.append(
                        "patient \(match.id.short) \(match.name): \(said.joined(separator: "; "))")
                } else {
                    match = before
                }
                rx.patient = match.patient
            } else if createPatients {
                let summary = PatientSummary(
                    id: PatientID.random(), name: rx.patient.name, birthDate: rx.patient.birthDate, merged: [],
                    family: rx.patient.family, given: rx.patient.given)
                try writePatient(summary, in: write)
                write.patientNotes.append("new patient \(summary.line)")
                rx.patient = summary.patient
            }
        }
        var linked = record
        linked.prescription = rx
        return linked
    }

    /// Newest records of the prescriptions whose index entry names one of `patientIDs` (inside a write).
    func prescriptions(of patientIDs: Set<String>, in write: OwnerWrite) throws -> [PrescriptionRecord] {
        // Inside a write, the entries it made so far are pending (an import's earlier items):
        // into the buckets first, so they are found, and an index still empty is not "missing".
        try flushIndex(write)
        let snapshot = try indexSnapshot(in: write)
        return try snapshot.rows.map { try snapshot.record($0) }.filter {
            $0.prescription.patient.id.map(patientIDs.contains) ?? false
        }
    }

    /// After a patient changed: the index entries and the grants of its prescriptions carry the
    /// patient as it now is (the prescriptions' content, which names the patient by id, is unchanged).
    func refreshPrescriptions(of patientIDs: Set<String>, in write: OwnerWrite) throws {
        // An import's pending versions may be this patient's: stored first, so they are found.
        try storeUnsealedVersions(write)
        for indexed in try prescriptions(of: patientIDs, in: write) {
            guard let row = try store.latestVersion(of: indexed.id) else { continue }
            try touch(indexed.id.hex, in: write)
            try indexChanged(indexed.id, try open(row, in: write), in: write)
            try resealGrants(of: indexed.id, in: write)
        }
    }

    func requirePatientRecords() throws(VaultError) {
        guard header.formatVersion >= 4 else {
            throw .invalidInput(
                "this vault is in format \(header.formatVersion), where patients are free text; run 'rxvault upgrade' to make them records (format 4)"
            )
        }
    }

    // MARK: - Upgrade

    /// Format 4, patients (inside the upgrade's write, the header already at format 4): each
    /// prescription's patient, free text until now, becomes a record. Prescriptions whose newest
    /// versions give the same name (ignoring case and runs of white space) and the same birth
    /// date (or both none) share one record, named as in the most recently issued of them. Each
    /// prescription gets a new version naming its record (older versions keep the text they were
    /// written with), and its grants are sealed again with the patient in them.
    func upgradePatientsToFormat4(_ write: OwnerWrite) throws {
        var groups: [String: [PrescriptionRecord]] = [:]
        for row in try store.latestVersions() {
            try touch(row.prescriptionID.hex, in: write)
            let record = try open(row, in: write)
            let patient = record.prescription.patient
            groups[PatientName.key(patient.name) + "\u{0}" + (patient.birthDate?.description ?? ""), default: []]
                .append(record)
        }
        for key in groups.keys.sorted() {
            let records = groups[key]!.sorted {
                ($0.prescription.issued, $0.id.hex) < ($1.prescription.issued, $1.id.hex)
            }
            let newest = records.last!.prescription.patient
            let summary = PatientSummary(
                id: PatientID.random(), name: newest.name, birthDate: newest.birthDate, merged: [],
                family: newest.family, given: newest.given)
            try writePatient(summary, in: write)
            for record in records {
                var rx = record.prescription
                rx.patient = summary.patient
                var next = PrescriptionRecord(
                    id: record.id, version: record.version + 1, recorded: clock.timestamp(), prescription: rx)
                next.change = "format 4: the patient is a record"
                try storeVersion(next, in: write)
                try resealGrants(of: record.id, previousVersion: record.version, in: write)
            }
        }
        write.patientNotes = []
    }
}
