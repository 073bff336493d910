import RxCrypto
import RxModel
import RxStore

/// The encrypted search index (DESIGN.md, "Search index"): the fields queries filter on, for
/// every prescription, so a query decrypts a few hundred small blobs instead of every record.
///
/// Entries live in 256 buckets (by the first byte of the id), each one AEAD blob under the index
/// sub-key bound to (vault, bucket). A write re-encrypts only the buckets it touches, once per
/// command. Only the owner has the index key; clients query their few grants directly.
struct SearchIndex {
    static let bucketCount = 256

    /// One prescription in the index, as read for filtering: fixed-size numbers only, no text
    /// (names and brands are read from the bucket when a filter asks for them).
    struct Row {
        var idHigh: UInt64
        var idLow: UInt64
        var version: Int32
        var kind: UInt8
        var issued: Int32
        var expires: Int32
        var birthDate: Int32
        /// Bit 0: OD present, bit 1: OS present; bits 2-3: the FHIR status (`statusCodes` order,
        /// 0 active). Earlier rxvaults read only bits 0 and 1, so an entry with a status still
        /// reads there, and one they wrote reads here as active (their index had no status).
        var eyes: UInt8
        /// Sphere, cylinder, add for OD, OS: as written, in the cylinder form of the record
        /// (the axis, with the text, belongs with them). Never transposed.
        var powers: (Int32, Int32, Int32, Int32, Int32, Int32)
        var bucket: Int32
        var textStart: Int32 // patient, prescriber, OD brand, OS brand
        var restStart: Int32
        var restLength: Int32
    }

    static let absent = Int32.min
    /// The statuses as bits 2-3 of an entry's `eyes` byte encode them.
    static let statusCodes: [RecordStatus] = [.active, .cancelled, .draft, .enteredInError]

    static func status(_ row: Row) -> RecordStatus { statusCodes[Int(row.eyes >> 2 & 3)] }
    /// Bit 4 of `eyes`: the entry carries its status. An entry written by an earlier rxvault
    /// (which never sets it) may belong to a withdrawn prescription whatever bits 2-3 say, so
    /// the snapshot takes such an entry's status from its record (`resolveUnknownStatuses`).
    static let statusKnown: UInt8 = 1 << 4
    static func withStatus(_ eyes: UInt8, _ status: RecordStatus) -> UInt8 {
        eyes & (3 | inConflict) | UInt8(statusCodes.firstIndex(of: status)!) << 2 | statusKnown
    }
    /// Bit 5 of `eyes` (format 8): the newest version is a merge's that chose between two copies'
    /// edits (`PrescriptionRecord.conflict`), so every listing marks it without opening the record.
    static let inConflict: UInt8 = 1 << 5

    /// A record as its index entry holds it: every field but the kept FHIR elements, of which
    /// only the status (a modifier every validity filter reads). `check` compares an entry with
    /// this form of its record; comparing with the whole record called every imported FHIR
    /// prescription with kept elements damaged.
    static func entryForm(_ record: PrescriptionRecord) -> PrescriptionRecord {
        var rx = record.prescription
        let status = rx.recordStatus
        rx.fhir = nil
        rx.recordStatus = status
        var form = PrescriptionRecord(
            id: record.id, version: record.version, recorded: record.recorded, prescription: rx)
        form.change = record.change
        return form
    }
    /// Bytes of the fixed part of an entry.
    static let fixedLength = 16 + 4 + 1 + 4 + 4 + 4 + 1 + 24 + 4 + 4

    static func bucket(of id: String) -> Int { Int(id.prefix(2), radix: 16) ?? 0 }

    static func associatedData(vaultID: [UInt8], bucket: Int) -> [UInt8] {
        AssociatedData.build(.searchIndex, [.bytes(vaultID), .int(bucket)])
    }

    /// Decrypts and decodes one bucket: its rows and its plaintext (where their text and records are).
    static func open(bucket: Int, sealed: [UInt8], key: SecretBytes, vaultID: [UInt8]) throws(VaultError) -> (
        [Row], [UInt8]
    ) {
        let plain: SecretBytes
        do {
            plain = try AEAD.open(sealed, key: key, associatedData: associatedData(vaultID: vaultID, bucket: bucket))
        } catch {
            throw .integrity("search index bucket \(bucket) failed authentication")
        }
        let bytes = plain.withUnsafeBytes { Array($0) }
        guard let rows = rows(bytes, bucket: bucket) else {
            throw .integrity("search index bucket \(bucket) does not decode")
        }
        return (rows, bytes)
    }

    // MARK: - Encoding: fixed part, text lengths and bytes, then the rest of the record.

    /// One index entry. It is held in the write's pending entries until the next flush (50,000
    /// of them in a large import), so its array is sized exactly: grown by doubling, the entries
    /// of an import of 100,000 held 35 MiB where 20 is needed.
    static func encode(_ record: PrescriptionRecord) -> [UInt8] {
        let rx = record.prescription
        var text = RecordCodec.Writer()
        text.text(rx.patient.name)
        text.text(rx.prescriber.name)
        text.text(rx.right?.brand)
        text.text(rx.left?.brand)
        for eye in Eye.allCases { text.int(rx[eye]?.axis) }
        var rest = RecordCodec.Writer()
        RecordCodec.encode(record, into: &rest)
        var w = RecordCodec.Writer()
        w.bytes.reserveCapacity(fixedLength + text.bytes.count + rest.bytes.count)
        w.bytes += hexBytes(record.id.hex)
        w.i32(record.version)
        w.u8(rx.kind == .glasses ? 0 : 1)
        w.date(rx.issued)
        w.date(rx.expires)
        w.date(rx.patient.birthDate)
        w.u8(
            withStatus(
                (rx.right != nil ? 1 : 0) | (rx.left != nil ? 2 : 0) | (record.conflict != nil ? inConflict : 0),
                rx.recordStatus))
        for eye in Eye.allCases {
            w.value(rx[eye]?.sphere)
            w.value(rx[eye]?.cylinder)
            w.value(rx[eye]?.add)
        }
        w.i32(text.bytes.count)
        w.i32(rest.bytes.count)
        assert(w.bytes.count == fixedLength)
        w.bytes += text.bytes
        w.bytes += rest.bytes
        return w.bytes
    }

    static func rows(_ plaintext: [UInt8], bucket: Int) -> [Row]? {
        plaintext.withUnsafeBytes { b -> [Row]? in
            var rows: [Row] = []
            var p = 0
            func u64(_ at: Int) -> UInt64 { (0..<8).reduce(0) { $0 << 8 | UInt64(b[at + $1]) } }
            func i32(_ at: Int) -> Int32 {
                Int32(
                    bitPattern: UInt32(b[at]) | UInt32(b[at + 1]) << 8 | UInt32(b[at + 2]) << 16 | UInt32(b[at + 3])
                        << 24)
            }
            while p < b.count {
                guard p + fixedLength <= b.count else { return nil }
                let textLength = Int(i32(p + fixedLength - 8))
                let restLength = Int(i32(p + fixedLength - 4))
                guard textLength >= 0, restLength >= 0, p + fixedLength + textLength + restLength <= b.count else {
                    return nil
                }
                rows.append(
                    Row(
                        idHigh: u64(p), idLow: u64(p + 8), version: i32(p + 16), kind: b[p + 20], issued: i32(p + 21),
                        expires: i32(p + 25), birthDate: i32(p + 29), eyes: b[p + 33],
                        powers: (i32(p + 34), i32(p + 38), i32(p + 42), i32(p + 46), i32(p + 50), i32(p + 54)),
                        bucket: Int32(bucket), textStart: Int32(p + fixedLength),
                        restStart: Int32(p + fixedLength + textLength),
                        restLength: Int32(restLength)))
                p += fixedLength + textLength + restLength
            }
            return rows
        }
    }

    static func hexBytes(_ hex: String) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(16)
        var high: UInt8?
        for c in hex.utf8 {
            // Wrapping: an id is hex once it is read (the store checks), and a stray byte must not trap.
            let v: UInt8 = c >= 97 ? c &- 87 : c &- 48
            if let h = high {
                out.append(h << 4 | v)
                high = nil
            } else {
                high = v
            }
        }
        return out
    }

    static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)

    static func id(_ row: Row) -> PrescriptionID {
        var out = [UInt8](repeating: 0, count: 32)
        for i in 0..<16 {
            let byte = UInt8(
                truncatingIfNeeded: (i < 8 ? row.idHigh >> (8 * UInt64(7 - i)) : row.idLow >> (8 * UInt64(15 - i))))
            out[2 * i] = hexDigits[Int(byte >> 4)]
            out[2 * i + 1] = hexDigits[Int(byte & 15)]
        }
        return PrescriptionID(hex: String(decoding: out, as: UTF8.self))!
    }

    /// Decoded buckets: the rows, and the plaintexts their text and records are read from.
    final class Snapshot: @unchecked Sendable {
        var rows: [Row] = []
        var plaintexts: [Int: [UInt8]] = [:]

        func texts(_ row: Row) -> (patient: String, prescriber: String, brands: (String?, String?), axes: (Int?, Int?))
        {
            plaintexts[Int(row.bucket)]!.withUnsafeBytes { all in
                var r = RecordCodec.Reader(bytes: all, p: Int(row.textStart))
                let patient = (try? r.text()) ?? nil
                let prescriber = (try? r.text()) ?? nil
                let od = (try? r.text()) ?? nil
                let os = (try? r.text()) ?? nil
                let axisOD = (try? r.int()) ?? nil
                let axisOS = (try? r.int()) ?? nil
                return (patient ?? "", prescriber ?? "", (od, os), (axisOD, axisOS))
            }
        }

        /// The whole record of a row, exactly as it was stored: `list` and `query` show it, and
        /// `flushIndex` re-encodes the untouched entries of a bucket from it.
        func record(_ row: Row) throws -> PrescriptionRecord {
            let subject = IndexSubject(row: row, snapshot: self)
            let t = texts(row)
            var rx = Prescription(
                kind: subject.kind, patient: Patient(name: t.patient, birthDate: subject.birthDate),
                prescriber: Prescriber(name: t.prescriber), issued: subject.issued, expires: subject.expires)
            for (index, eye) in Eye.allCases.enumerated() where row.eyes & (1 << index) != 0 {
                let written = subject.writtenPowers(index)
                rx[eye] = LensSpecification(
                    sphere: written.sphere, cylinder: written.cylinder, axis: index == 0 ? t.axes.0 : t.axes.1,
                    add: written.add, brand: index == 0 ? t.brands.0 : t.brands.1)
            }
            rx.recordStatus = SearchIndex.status(row)
            return try plaintexts[Int(row.bucket)]!.withUnsafeBytes { all in
                var rest = RecordCodec.Reader(
                    bytes: UnsafeRawBufferPointer(
                        rebasing: all[Int(row.restStart)..<Int(row.restStart + row.restLength)]), p: 0)
                var record = try RecordCodec.decode(
                    &rest, id: subject.subjectID, version: Int(row.version), summary: rx)
                // In conflict: the competing versions' identities are the record's, not the index's.
                if row.eyes & SearchIndex.inConflict != 0 { record.conflict = [] }
                return record
            }
        }
    }
}

/// A row as the filter sees it: numbers at once, text only when asked for.
struct IndexSubject: FilterSubject {
    let row: SearchIndex.Row
    let snapshot: SearchIndex.Snapshot

    static func date(_ day: Int32) -> CalendarDate? {
        day == SearchIndex.absent ? nil : CalendarDate(dayNumber: Int(day))
    }
    static func value(_ v: Int32) -> Hundredths? { v == SearchIndex.absent ? nil : Hundredths(raw: Int(v)) }

    var subjectID: PrescriptionID { SearchIndex.id(row) }
    var kind: PrescriptionKind { row.kind == 0 ? .glasses : .contacts }
    var recordStatus: RecordStatus { SearchIndex.status(row) }
    var issued: CalendarDate { CalendarDate(dayNumber: Int(row.issued)) }
    var expires: CalendarDate? { Self.date(row.expires) }
    /// Read from the rest of the record (tag 5), only when a filter asks for it: a prescription
    /// with no expiry written, under a validity filter.
    var assumedExpiry: CalendarDate? {
        guard row.expires == SearchIndex.absent else { return nil }
        return (try? snapshot.record(row))?.prescription.assumedExpiry
    }
    var birthDate: CalendarDate? { Self.date(row.birthDate) }
    var patientName: String { snapshot.texts(row).patient }
    var prescriberName: String { snapshot.texts(row).prescriber }
    var brands: [String] {
        let b = snapshot.texts(row).brands
        return [b.0, b.1].compactMap { $0 }
    }

    /// One eye's powers as stored: as written, for rebuilding the record (with the stored axis).
    func writtenPowers(_ eye: Int) -> (sphere: Hundredths, cylinder: Hundredths?, add: Hundredths?) {
        let p = row.powers
        let values = eye == 0 ? (p.0, p.1, p.2) : (p.3, p.4, p.5)
        return (Self.value(values.0) ?? .zero, Self.value(values.1), Self.value(values.2))
    }

    var minusCylinderPowers: [MinusCylinderPowers] {
        (0..<2).filter { row.eyes & (1 << $0) != 0 }.map { eye in
            let written = writtenPowers(eye)
            return MinusCylinderPowers(writtenSphere: written.sphere, cylinder: written.cylinder, add: written.add)
        }
    }
}

extension Vault {
    func indexAAD(_ bucket: Int) -> [UInt8] { SearchIndex.associatedData(vaultID: header.vaultID, bucket: bucket) }

    /// Opens one bucket into `snapshot`, after checking it is the one the owner wrote last
    /// (format 2: its hash is in `state`, the verified root; nil for format 1).
    func readIndexBucket(_ bucket: Int, sealed: [UInt8], into snapshot: SearchIndex.Snapshot, state: VaultState?)
        throws
    {
        if let state { try verifyIndexBucket(bucket, sealed: sealed, state: state) }
        let (rows, plaintext) = try SearchIndex.open(
            bucket: bucket, sealed: sealed, key: indexKey, vaultID: header.vaultID)
        snapshot.rows += rows
        snapshot.plaintexts[bucket] = plaintext
    }

    /// Every index entry, newest versions, outside any owner write. Rebuilt from the records if
    /// the index is missing.
    ///
    /// The buckets and the root they are checked against are read in one snapshot (one verified
    /// read): a write committed between two reads (the server's audit entries, another command)
    /// is not tampering. The buckets are decrypted after it ends.
    ///
    /// `keep`: keep the snapshot on the vault for the next read under the same root (`query`,
    /// whose caller asks `supersession` next). Not by default: an export or import that reads
    /// the index once would hold its 26 MB at 100,000 prescriptions through all its work.
    func indexSnapshot(keep: Bool = false) throws -> SearchIndex.Snapshot {
        // A snapshot verified under the same state root (the same stamp: the root's counter and
        // MAC) is the same index.
        let cacheable = header.formatVersion >= 2
        let (buckets, missing, stamp, kept) = try reading {
            read throws -> ([(Int, [UInt8])], Bool, StateStamp?, SearchIndex.Snapshot?) in
            let stamp = cacheable ? try storedStateStamp(in: read) : nil
            if let stamp, let indexCache, indexCache.stamp == stamp { return ([], false, stamp, indexCache.snapshot) }
            let (buckets, missing) = try verifiedIndexBuckets(in: read)
            return (buckets, missing, stamp, nil)
        }
        if let kept { return kept }
        if missing {
            try perform { write in try rebuildIndex(write) }
            return try indexSnapshot(keep: keep)
        }
        let snapshot = try openIndexBuckets(buckets)
        try reading { read in try resolveUnknownStatuses(snapshot, in: read) }
        if keep, let stamp { indexCache = (stamp, snapshot) }
        return snapshot
    }

    /// Every index entry in an owner write, as the write has stored them so far (its pending
    /// entries are in the buckets once it has flushed them, `flushIndex`); never kept, since the
    /// write changes them. A missing index is rebuilt in the write.
    func indexSnapshot(in write: OwnerWrite) throws -> SearchIndex.Snapshot {
        var (buckets, missing) = try verifiedIndexBuckets(in: write)
        if missing {
            try rebuildIndex(write)
            buckets = try verifiedIndexBuckets(in: write).buckets
        }
        let snapshot = try openIndexBuckets(buckets)
        try resolveUnknownStatuses(snapshot, in: write)
        return snapshot
    }

    /// The sealed buckets, each, present or not, checked against the root as `access` sees it;
    /// `missing`: there are none but there are prescriptions (the index must be rebuilt).
    private func verifiedIndexBuckets(in access: any StateAccess) throws -> (
        buckets: [(Int, [UInt8])], missing: Bool
    ) {
        let buckets = try store.indexBuckets()
        if let state = try verifiedState(in: access) {
            // Every bucket, present or not, must be the owner's last: 256 hashes against the
            // root (format 5: digests of 40 bytes each; before, of each whole bucket).
            var present: [Int: [UInt8]] = [:]
            for (bucket, sealed) in buckets { present[bucket] = sealed }
            for bucket in 0..<SearchIndex.bucketCount {
                try verifyIndexBucket(bucket, sealed: present[bucket], state: state)
            }
        }
        return (buckets, try buckets.isEmpty && store.prescriptionCount() > 0)
    }

    /// Decrypts and decodes the buckets on all cores: this is most of a query's work.
    private func openIndexBuckets(_ buckets: [(Int, [UInt8])]) throws -> SearchIndex.Snapshot {
        let key = indexKey
        let vaultID = header.vaultID
        let results = buckets.concurrentMap { bucket, sealed in
            Result { () throws(VaultError) in
                try SearchIndex.open(bucket: bucket, sealed: sealed, key: key, vaultID: vaultID)
            }
        }
        let snapshot = SearchIndex.Snapshot()
        snapshot.rows.reserveCapacity(buckets.count * 64)
        for (i, result) in results.enumerated() {
            let (rows, plaintext) = try result.get()
            snapshot.rows += rows
            snapshot.plaintexts[buckets[i].0] = plaintext
        }
        return snapshot
    }

    /// Gives every entry written by an earlier rxvault (no `statusKnown` bit) the status of its
    /// record, so that a withdrawn prescription imported then is never filtered or listed as
    /// valid. One record is opened per such entry; the owner's next write to its bucket stores
    /// the status with it, and `check --repair-index` rewrites them all.
    func resolveUnknownStatuses(_ snapshot: SearchIndex.Snapshot, in access: any StateAccess) throws {
        for i in snapshot.rows.indices where snapshot.rows[i].eyes & SearchIndex.statusKnown == 0 {
            let id = SearchIndex.id(snapshot.rows[i])
            // The newest version's status, even if a write came between: never the bits' "active".
            guard let row = try store.latestVersion(of: id) else { continue }
            let status = try open(row, in: access).prescription.recordStatus
            snapshot.rows[i].eyes = SearchIndex.withStatus(snapshot.rows[i].eyes, status)
        }
    }

    /// Records that the newest version of `record` is what the index should hold (or, with nil,
    /// that the prescription is gone). Applied to the buckets at the end of the transaction.
    func indexChanged(_ id: PrescriptionID, _ record: PrescriptionRecord?, in write: OwnerWrite) throws {
        try indexChanged(id, encoded: record.map { SearchIndex.encode($0) }, in: write)
    }

    /// `indexChanged` with the entry already encoded (`SearchIndex.encode`), nil when it is gone.
    func indexChanged(_ id: PrescriptionID, encoded entry: [UInt8]?, in write: OwnerWrite) throws {
        write.pendingIndex[id.hex] = .some(entry)
    }

    /// Writes the buckets the transaction touched (called inside it, by `perform`; and by a
    /// large import every few thousand prescriptions, so its pending entries stay few).
    func flushIndex(_ write: OwnerWrite) throws {
        guard !write.pendingIndex.isEmpty else { return }
        var byBucket: [Int: [String: [UInt8]?]] = [:]
        for (id, record) in write.pendingIndex { byBucket[SearchIndex.bucket(of: id), default: [:]][id] = record }
        write.pendingIndex = [:]
        for bucket in byBucket.keys.sorted() {
            let updates = byBucket.removeValue(forKey: bucket)!
            let snapshot = SearchIndex.Snapshot()
            if let sealed = try store.indexBucket(bucket) {
                try readIndexBucket(bucket, sealed: sealed, into: snapshot, state: write.state)
            } else if let state = write.state {
                // A bucket the root pins and the file lacks: rewriting it with only this write's
                // entries would pin the loss (the query would omit its other prescriptions).
                try verifyIndexBucket(bucket, sealed: nil, state: state)
            }
            // Entries left as they are keep their bytes: only the changed ones are encoded.
            var plain: [UInt8] = []
            if let old = snapshot.plaintexts[bucket] {
                plain.reserveCapacity(old.count)
                let replaced = Set(
                    updates.keys.map { id in
                        SearchIndex.hexBytes(id).enumerated().reduce(into: [UInt64](repeating: 0, count: 2)) {
                            $0[$1.offset / 8] = $0[$1.offset / 8] << 8 | UInt64($1.element)
                        }
                    })
                for row in snapshot.rows where !replaced.contains([row.idHigh, row.idLow]) {
                    plain += old[Int(row.textStart) - SearchIndex.fixedLength..<Int(row.restStart + row.restLength)]
                }
            }
            for case let entry? in updates.values { plain += entry }
            let sealed = try AEAD.seal(plain, key: indexKey, associatedData: indexAAD(bucket))
            try store.setIndexBucket(bucket, to: sealed)
            if let state = write.state { write.state?.indexHashes[bucket] = state.indexHash(sealed) }
        }
    }

    /// Recomputes the whole index from the records (inside a write transaction).
    func rebuildIndex(_ write: OwnerWrite) throws {
        try store.clearIndex()
        write.state?.indexHashes = Array(
            repeating: VaultState.absentBucket, count: SearchIndex.bucketCount)
        for row in try store.latestVersions() {
            let record = try open(row, in: write)
            try indexChanged(record.id, record, in: write)
        }
        try flushIndex(write)
    }
}

extension Vault {
    /// Refuses a newest version older than the one the (authenticated) search index names: the
    /// rows of the real newest version were deleted from the file, rolling the prescription back.
    /// Each row carries its own MAC, so only this cross-check sees a missing one.
    func requireNewest(_ row: PrescriptionVersionRecord, of id: PrescriptionID, in access: any StateAccess) throws {
        // Format 2: the manifest pins every row of the prescription, not only its newest version.
        if try verifiedState(in: access) != nil { return try verifyCurrent(id.hex, in: access) }
        let bucket = SearchIndex.bucket(of: id.hex)
        guard let sealed = try store.indexBucket(bucket) else { return }
        let snapshot = SearchIndex.Snapshot()
        try readIndexBucket(bucket, sealed: sealed, into: snapshot, state: nil)
        guard let indexed = snapshot.rows.first(where: { SearchIndex.id($0) == id }) else {
            throw VaultError.integrity("prescription \(id.short) has no search-index entry: its rows were altered")
        }
        if Int(indexed.version) != row.version {
            throw VaultError.integrity(
                "prescription \(id.short): the newest stored version is \(row.version) but version \(indexed.version) was written; the file was altered (rolled back)"
            )
        }
    }
}
