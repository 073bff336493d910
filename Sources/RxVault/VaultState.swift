import Foundation
import RxCrypto
import RxStore

/// The owner's commitment to the current set of rows (format 2; DESIGN.md, "State root").
///
/// Per-row MACs say a row was written by the owner, not that it is the owner's *current* row:
/// a grant revoked since, an attachment detached since, a bucket of an older index all carry
/// valid MACs in an older copy of the file. The state root pins what is current: one row, MAC'd
/// under the state sub-key (9) with the vault id, holding a write counter (every owner write
/// transaction adds one), the SHA-256 of every search-index and manifest bucket, a hash of the
/// client rows and the audit head. A command verifies the root (one row) and only the buckets it
/// reads, so checking what it touches costs O(rows touched + 1 bucket).
struct VaultState: Equatable {
    static let bucketCount = SearchIndex.bucketCount
    static let absentBucket = [UInt8](repeating: 0, count: 32)
    static let schema: UInt8 = 1

    var counter: Int
    /// Per sealed search-index bucket: its seal digest (`sealDigest`, format 5, state schema 3)
    /// or, before, the SHA-256 of the whole bucket; 32 zero bytes when the bucket does not exist.
    var indexHashes: [[UInt8]]
    /// SHA-256 of each manifest bucket; 32 zero bytes when the bucket does not exist.
    var manifestHashes: [[UInt8]]
    var clientsHash: [UInt8]
    var auditSequence: Int
    var auditHash: [UInt8]
    /// Format 4: a hash of the patient rows (`patientsHash`); nil before (state schema 1).
    var patientsHash: [UInt8]? = nil
    /// Format 5 (state schema 3): `indexHashes` are seal digests. The upgrade to format 5
    /// (`Vault.upgradeToFormat5`) checks every bucket's whole hash before it sets this.
    var indexBySeal = false
    /// Format 6 (state schema 4): grants may carry their patient's measurements (issue 26). The
    /// root holds nothing new; the schema byte says the header's format is 6, so a header edited
    /// back to format 5 (which an older rxvault would take, dropping the measurement terms of
    /// grants it re-seals) is refused like any other edited format.
    var measurementGrants = false
    /// Format 7 (state schema 5): the key ring carries the `assumed-validity` setting and
    /// records may carry an assumed expiry (issue 47). As schema 4, nothing in the root changes;
    /// the byte binds the header's format, so a header edited back to format 6 (whose rxvault
    /// would drop both when it rewrites them) is refused.
    var assumedValidity = false
    /// Format 8 (state schema 6): what this state holds of every replica's writes (issue 48,
    /// `KnowledgeVector`); every owner write advances its own replica's clock. Nil before.
    var knowledge: KnowledgeVector? = nil

    static func empty(
        clientsHash: [UInt8], patientsHash: [UInt8]? = nil, indexBySeal: Bool = false, measurementGrants: Bool = false,
        assumedValidity: Bool = false, knowledge: KnowledgeVector? = nil
    ) -> VaultState {
        VaultState(
            counter: 0, indexHashes: Array(repeating: absentBucket, count: bucketCount),
            manifestHashes: Array(repeating: absentBucket, count: bucketCount), clientsHash: clientsHash,
            auditSequence: 0, auditHash: AuditLog.zeroHash, patientsHash: patientsHash, indexBySeal: indexBySeal,
            measurementGrants: measurementGrants, assumedValidity: assumedValidity, knowledge: knowledge)
    }

    static func bucketHash(_ content: [UInt8]?) -> [UInt8] { content.map { SHA256.hash($0) } ?? absentBucket }

    /// What the root pins of one sealed index bucket, as this state's schema says.
    func indexHash(_ sealed: [UInt8]?) -> [UInt8] { indexBySeal ? Self.sealDigest(sealed) : Self.bucketHash(sealed) }

    /// Format 5: SHA-256 of a label, the bucket's nonce and its tag (40 bytes) instead of the
    /// whole ~100 KB bucket, which was a quarter of a query's time over 100,000 prescriptions.
    ///
    /// It pins the bucket as well as the whole hash did, because every reader opens the bucket
    /// (XChaCha20-Poly1305 under the index key, with the vault id and bucket number as
    /// associated data) after comparing it: a bucket the owner wrote at another time has another
    /// random nonce, and other bytes under the pinned nonce and tag would be a Poly1305 forgery
    /// made without the key. A bucket compared and not opened would prove nothing; none is
    /// (SECURITY.md, "State root").
    static func sealDigest(_ sealed: [UInt8]?) -> [UInt8] {
        guard let sealed else { return absentBucket }
        // Too short to be a sealed box: a digest no sealed bucket has, so it never matches.
        guard sealed.count >= AEAD.overhead else {
            return SHA256.hash(Array("rxvault/v5 index seal: malformed".utf8) + sealed)
        }
        return SHA256.hash(
            Array("rxvault/v5 index seal".utf8) + sealed.prefix(AEAD.nonceLength) + sealed.suffix(AEAD.tagLength))
    }

    /// `u8 schema | 256 × 32 index hashes | 256 × 32 manifest hashes | 32 clients hash | u64 audit seq | 32 audit hash`,
    /// then, schema 2 (format 4), 3 (format 5), 4 (format 6) and 5 (format 7), `| 32 patients
    /// hash`. Schema 3 is schema 2 with seal digests as index hashes; schemas 4 and 5 are schema 3.
    /// Schema 6 (format 8) is schema 5, then the knowledge vector (`KnowledgeVector.encoded`).
    var schemaByte: UInt8 {
        if knowledge != nil { return Self.knowledgeSchema }
        if patientsHash == nil { return Self.schema }
        if !indexBySeal { return Self.patientsSchema }
        if assumedValidity { return Self.assumedValiditySchema }
        return measurementGrants ? Self.measurementGrantsSchema : Self.sealSchema
    }

    func encoded() -> [UInt8] {
        var out: [UInt8] = [schemaByte]
        out.reserveCapacity(1 + 2 * 32 * Self.bucketCount + 72)
        for hash in indexHashes { out += hash }
        for hash in manifestHashes { out += hash }
        out += clientsHash
        out += AuditLog.bigEndian(auditSequence)
        out += auditHash
        if let patientsHash { out += patientsHash }
        if let knowledge { out += knowledge.encoded() }
        return out
    }

    static func decode(_ bytes: [UInt8], counter: Int) -> VaultState? {
        let length = 1 + 2 * 32 * bucketCount + 72
        guard !bytes.isEmpty,
            (bytes[0] == schema && bytes.count == length)
                || ((patientsSchema...assumedValiditySchema).contains(bytes[0]) && bytes.count == length + 32)
                || (bytes[0] == knowledgeSchema && bytes.count > length + 32)
        else { return nil }
        var knowledge: KnowledgeVector?
        if bytes[0] == knowledgeSchema {
            guard let (vector, used) = KnowledgeVector.decode(bytes[(length + 32)...].map { $0 }),
                used == bytes.count - length - 32
            else { return nil }
            knowledge = vector
        }
        var p = 1
        func take(_ n: Int) -> [UInt8] {
            defer { p += n }
            return Array(bytes[p..<p + n])
        }
        let index = (0..<bucketCount).map { _ in take(32) }
        let manifest = (0..<bucketCount).map { _ in take(32) }
        let clients = take(32)
        let sequence = take(8).reduce(0) { $0 << 8 | Int($1) }
        let auditHash = take(32)
        return VaultState(
            counter: counter, indexHashes: index, manifestHashes: manifest, clientsHash: clients,
            auditSequence: sequence, auditHash: auditHash, patientsHash: bytes[0] == schema ? nil : take(32),
            indexBySeal: bytes[0] >= sealSchema, measurementGrants: bytes[0] >= measurementGrantsSchema,
            assumedValidity: bytes[0] >= assumedValiditySchema, knowledge: knowledge)
    }

    /// State schema 2 (format 4): the patients hash follows.
    static let patientsSchema: UInt8 = 2
    /// State schema 3 (format 5): as schema 2, with seal digests as index hashes.
    static let sealSchema: UInt8 = 3
    /// State schema 4 (format 6): as schema 3. Nothing in the root changes; the byte binds the
    /// header's format, in which grants may carry their patient's measurements.
    static let measurementGrantsSchema: UInt8 = 4
    /// State schema 5 (format 7): as schema 4. The byte binds the header's format, in which the
    /// key ring holds the assumed validity and records may carry an assumed expiry.
    static let assumedValiditySchema: UInt8 = 5
    /// State schema 6 (format 8): as schema 5, then the knowledge vector.
    static let knowledgeSchema: UInt8 = 6

    /// The state schema a vault of `formatVersion` keeps: the root is MAC'd, so a header whose
    /// format was edited (a format-5 vault made to look like format 4, or the reverse) is caught
    /// when its root is read, even where the key slots, which bind format 4 from format 4 on,
    /// still open.
    static func schema(forFormat formatVersion: Int) -> UInt8 {
        switch formatVersion {
        case 8...: return knowledgeSchema
        case 7: return assumedValiditySchema
        case 6: return measurementGrantsSchema
        case 5: return sealSchema
        case 4: return patientsSchema
        default: return schema
        }
    }

    /// The patient rows as the owner last wrote them: ids and MACs, in id order (format 4).
    static func patientsHash(_ rows: [PatientRecord]) -> [UInt8] {
        patientsHash(rows.map { (id: $0.id, mac: $0.mac) })
    }

    /// The same hash from ids and MACs alone (`RecordStore.patientMACs`).
    static func patientsHash(_ rows: [(id: PatientID, mac: [UInt8])]) -> [UInt8] {
        var fields: [AssociatedData.Field] = []
        fields.reserveCapacity(2 * rows.count)
        // Rows read from the store come in id order already; sorting them again was most of this.
        let ordered =
            zip(rows, rows.dropFirst()).allSatisfy({ $0.id < $1.id }) ? rows : rows.sorted(by: { $0.id < $1.id })
        for row in ordered { fields += [.text(row.id.hex), .bytes(row.mac)] }
        return SHA256.hash(AssociatedData.build(.patientSet, fields))
    }

    func macMessage(vaultID: [UInt8]) -> [UInt8] {
        AssociatedData.build(.stateRoot, [.bytes(vaultID), .int(counter), .bytes(encoded())])
    }

    /// The client rows as the owner last wrote them: ids and MACs, in id order.
    static func clientsHash(_ rows: [ClientRecord]) -> [UInt8] {
        var fields: [AssociatedData.Field] = []
        for row in rows.sorted(by: { $0.id < $1.id }) { fields += [.text(row.id.hex), .bytes(row.mac)] }
        return SHA256.hash(AssociatedData.build(.clientSet, fields))
    }
}

/// What is current for one prescription (format 2, in the manifest bucket of its id's first
/// byte): its newest version and that row's MAC, a digest of every version's MAC, and the MACs
/// of its attachments and grants. The owner compares the rows it reads with this before it
/// shows, extends or re-seals anything.
struct ManifestEntry: Equatable {
    struct GrantPin: Equatable {
        var clientID: String
        var mac: [UInt8]
    }

    var prescriptionID: String
    var newestVersion: Int
    var newestMAC: [UInt8]
    /// d_0 = 32 zero bytes, d_k = SHA-256("rxvault/v2 versions" ‖ d_{k-1} ‖ u64 k ‖ mac_k).
    var versionsDigest: [UInt8]
    var attachments: [String: [UInt8]]
    var grants: [String: GrantPin]

    static func versionsDigest(_ rows: [PrescriptionVersionRecord]) -> [UInt8] {
        rows.reduce(AuditLog.zeroHash) { digest, row in
            SHA256.hash(Array("rxvault/v2 versions".utf8) + digest + AuditLog.bigEndian(row.version) + row.mac)
        }
    }

    init(
        prescriptionID: String, versions: [PrescriptionVersionRecord], attachments: [AttachmentRecord],
        grants: [GrantRecord]
    ) {
        self.prescriptionID = prescriptionID
        newestVersion = versions.last?.version ?? 0
        newestMAC = versions.last?.mac ?? []
        versionsDigest = Self.versionsDigest(versions)
        self.attachments = Dictionary(attachments.map { ($0.id.hex, $0.mac) }, uniquingKeysWith: { a, _ in a })
        self.grants = Dictionary(
            grants.map { ($0.id.hex, GrantPin(clientID: $0.clientID.hex, mac: $0.mac)) },
            uniquingKeysWith: { a, _ in a })
    }

    init(
        prescriptionID: String, newestVersion: Int, newestMAC: [UInt8], versionsDigest: [UInt8],
        attachments: [String: [UInt8]], grants: [String: GrantPin]
    ) {
        self.prescriptionID = prescriptionID
        self.newestVersion = newestVersion
        self.newestMAC = newestMAC
        self.versionsDigest = versionsDigest
        self.attachments = attachments
        self.grants = grants
    }

    /// What differs between what the owner wrote (`expected`) and what is stored (`actual`), in words.
    static func differences(_ id: String, expected: ManifestEntry?, actual: ManifestEntry?) -> [String] {
        let p = "prescription \(id.prefix(8))"
        guard let expected else {
            return actual == nil
                ? [] : ["\(p) has rows the owner did not write as current (put back from an older copy, or forged)"]
        }
        guard let actual else { return ["\(p) was deleted from the file (all its rows are missing)"] }
        var out: [String] = []
        if actual.newestVersion != expected.newestVersion {
            out.append(
                "\(p): the newest stored version is \(actual.newestVersion) but the owner wrote version \(expected.newestVersion) (rows deleted or put back from an older copy)"
            )
        } else if actual.newestMAC != expected.newestMAC {
            out.append(
                "\(p) version \(actual.newestVersion) is not the one the owner wrote (put back from an older copy, or forged)"
            )
        } else if actual.versionsDigest != expected.versionsDigest {
            out.append(
                "\(p): its earlier versions differ from what the owner wrote (deleted, or put back from an older copy)")
        }
        for (a, mac) in expected.attachments.sorted(by: { $0.key < $1.key }) {
            if let stored = actual.attachments[a] {
                if stored != mac {
                    out.append(
                        "attachment \(a.prefix(8)) of \(p) is not the one the owner wrote (put back from an older copy, or forged)"
                    )
                }
            } else {
                out.append("attachment \(a.prefix(8)) of \(p) was deleted from the file")
            }
        }
        for a in actual.attachments.keys.sorted() where expected.attachments[a] == nil {
            out.append(
                "attachment \(a.prefix(8)) of \(p) is not one the owner holds current (a detached attachment put back from an older copy, or forged)"
            )
        }
        for (g, pin) in expected.grants.sorted(by: { $0.key < $1.key }) {
            let who = "grant \(g.prefix(8)) (client \(pin.clientID.prefix(8))) on \(p)"
            if let stored = actual.grants[g] {
                if stored != pin {
                    out.append("\(who) is not the one the owner wrote last (put back from an older copy, or forged)")
                }
            } else {
                out.append("\(who) was deleted from the file")
            }
        }
        for (g, pin) in actual.grants.sorted(by: { $0.key < $1.key }) where expected.grants[g] == nil {
            out.append(
                "grant \(g.prefix(8)) (client \(pin.clientID.prefix(8))) on \(p) is not one the owner holds current (a revoked grant put back from an older copy?)"
            )
        }
        return out.isEmpty ? ["\(p) differs from what the owner wrote"] : out
    }

    // MARK: - Encoding

    /// `16 id | u32 newest version | bytes newest MAC | bytes versions digest | u32 n | n × (16 attachment id | bytes MAC)
    /// | u32 m | m × (16 grant id | 16 client id | bytes MAC)`; bytes = u32 length then the bytes; integers big-endian.
    static func encode(_ entries: [ManifestEntry]) -> [UInt8] {
        var out: [UInt8] = []
        func u32(_ v: Int) {
            out += [
                UInt8(truncatingIfNeeded: v >> 24), UInt8(truncatingIfNeeded: v >> 16),
                UInt8(truncatingIfNeeded: v >> 8), UInt8(truncatingIfNeeded: v)
            ]
        }
        func bytes(_ b: [UInt8]) {
            u32(b.count)
            out += b
        }
        for e in entries.sorted(by: { $0.prescriptionID < $1.prescriptionID }) {
            out += SearchIndex.hexBytes(e.prescriptionID)
            u32(e.newestVersion)
            bytes(e.newestMAC)
            bytes(e.versionsDigest)
            u32(e.attachments.count)
            for (id, mac) in e.attachments.sorted(by: { $0.key < $1.key }) {
                out += SearchIndex.hexBytes(id)
                bytes(mac)
            }
            u32(e.grants.count)
            for (id, pin) in e.grants.sorted(by: { $0.key < $1.key }) {
                out += SearchIndex.hexBytes(id)
                out += SearchIndex.hexBytes(pin.clientID)
                bytes(pin.mac)
            }
        }
        return out
    }

    static func decode(_ data: [UInt8]) -> [String: ManifestEntry]? {
        var p = 0
        var entries: [String: ManifestEntry] = [:]
        func need(_ n: Int) -> Bool { n >= 0 && p + n <= data.count }
        func id() -> String? {
            guard need(16) else { return nil }
            defer { p += 16 }
            return Hex.encode(data[p..<p + 16])
        }
        func u32() -> Int? {
            guard need(4) else { return nil }
            defer { p += 4 }
            return data[p..<p + 4].reduce(0) { $0 << 8 | Int($1) }
        }
        func bytes() -> [UInt8]? {
            guard let n = u32(), need(n) else { return nil }
            defer { p += n }
            return Array(data[p..<p + n])
        }
        while p < data.count {
            guard let pid = id(), let version = u32(), let newest = bytes(), let digest = bytes(), let nA = u32() else {
                return nil
            }
            var attachments: [String: [UInt8]] = [:]
            for _ in 0..<nA {
                guard let a = id(), let mac = bytes() else { return nil }
                attachments[a] = mac
            }
            guard let nG = u32() else { return nil }
            var grants: [String: GrantPin] = [:]
            for _ in 0..<nG {
                guard let g = id(), let c = id(), let mac = bytes() else { return nil }
                grants[g] = GrantPin(clientID: c, mac: mac)
            }
            entries[pid] = ManifestEntry(
                prescriptionID: pid, newestVersion: version, newestMAC: newest, versionsDigest: digest,
                attachments: attachments, grants: grants)
        }
        return entries
    }
}
