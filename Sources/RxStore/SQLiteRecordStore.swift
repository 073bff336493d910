import CSQLite

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The vault file: one SQLite database (docs/format.md).
public final class SQLiteRecordStore: RecordStore {
    public let database: Database
    private var stampStatement: Statement?
    /// A prepared statement for `sql`, this caller's alone while it holds it, kept prepared for
    /// the next caller once released (`Database.reusable`). An earlier cache that handed the
    /// same statement object to every caller let one use reset another in the middle of its
    /// rows (a download cut short; mismatched rows under concurrency).
    func statement(_ sql: String) throws(StoreError) -> Statement {
        try database.reusable(sql)
    }

    /// Opens an existing vault, checking it is one of ours and of a version we read.
    public init(openingAt path: String, busyTimeoutMilliseconds: Int32 = Database.defaultBusyTimeoutMilliseconds) throws(StoreError) {
        database = try Database(path: path, busyTimeoutMilliseconds: busyTimeoutMilliseconds)
        let applicationID = try database.integer("PRAGMA application_id") ?? 0
        guard applicationID == Int64(Schema.applicationID) else {
            throw StoreError.notAVault(path: path, reason: applicationID == 0 ? "an SQLite database of another program" : "unknown application id")
        }
        let version = Int(try statement("PRAGMA user_version").first { $0.int(0) } ?? 0)
        guard version <= Schema.currentVersion else {
            throw StoreError.unsupportedVersion(found: version, supported: Schema.currentVersion)
        }
        guard version >= 1 else { throw StoreError.corrupt("schema version \(version)") }
    }

    /// Creates a new vault file at `path` with `header` and an empty audit log whose head (sequence
    /// 0) carries `auditHeadMAC`, atomically and without ever replacing a
    /// file: the database is built in a temporary file (mode 0600) beside `path` and linked into
    /// place with link(2), which fails if `path` exists, so two `init`s cannot both win and a
    /// failed `init` leaves nothing behind.
    public static func create(at path: String, header: VaultHeaderRecord, auditHeadMAC: [UInt8],
                              state: VaultStateRecord? = nil, keyRing: KeyRingRecord? = nil) throws(StoreError) {
        guard access(path, F_OK) != 0 else { throw StoreError.cannotWrite("\(path) already exists") }
        let temporary = path + ".tmp-" + String(UInt32.random(in: .min ... .max), radix: 16)
        let fd = open(temporary, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw StoreError.cannotWrite("cannot create \(temporary): \(String(cString: strerror(errno)))") }
        close(fd)
        defer { unlink(temporary); unlink(temporary + "-wal"); unlink(temporary + "-shm") }
        do {
            let database = try Database(path: temporary)
            try database.execute("PRAGMA journal_mode = WAL")
            try database.execute("PRAGMA application_id = \(Schema.applicationID)")
            try database.writeTransaction { () throws(StoreError) in
                try database.execute(Schema.version1)
                try database.execute(Schema.version2)
                try database.execute(Schema.version3)
                try database.execute(Schema.version4Patients)
                try database.execute(Schema.version4KeySlots)
                try database.prepare("""
                    INSERT INTO vault_header (singleton, format_version, vault_id, kdf_algorithm, kdf_ops_limit,
                                              kdf_mem_limit, kdf_salt, wrapped_root_key, max_attachment_bytes,
                                              audit_public_key)
                    VALUES (1, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """).run([.integer(Int64(header.formatVersion)), .blob(header.vaultID), .text(header.kdfAlgorithm),
                              .integer(Int64(header.kdfOpsLimit)), .integer(Int64(header.kdfMemLimit)),
                              .blob(header.kdfSalt), .blob(header.wrappedRootKey), .integer(Int64(header.maxAttachmentBytes)),
                              .blob(header.auditPublicKey)])
                try database.prepare("INSERT INTO audit_head (singleton, seq, hash, mac) VALUES (1, 0, ?, ?)")
                    .run([.blob([UInt8](repeating: 0, count: 32)), .blob(auditHeadMAC)])
                if let state {
                    try database.prepare("INSERT INTO vault_state (singleton, write_counter, state, mac) VALUES (1, ?, ?, ?)")
                        .run([.integer(Int64(state.writeCounter)), .blob(state.state), .blob(state.mac)])
                }
                if let keyRing {
                    try database.prepare("INSERT INTO key_ring (singleton, write_counter, content, mac) VALUES (1, ?, ?, ?)")
                        .run([.integer(Int64(keyRing.writeCounter)), .blob(keyRing.content), .blob(keyRing.mac)])
                }
                try database.execute("PRAGMA user_version = \(Schema.currentVersion)")
            }
            database.checkpointAndTruncateWAL()
        } catch let error as StoreError {
            throw error
        } catch {
            throw StoreError.cannotWrite("\(error)")
        }
        // The connection is closed (WAL folded in) before the file is linked into place.
        guard link(temporary, path) == 0 else {
            let reason = errno == EEXIST ? "\(path) already exists" : "cannot create \(path): \(String(cString: strerror(errno)))"
            throw StoreError.cannotWrite(reason)
        }
    }

    public func header() throws(StoreError) -> VaultHeaderRecord {
        let header = try statement("""
            SELECT format_version, vault_id, kdf_algorithm, kdf_ops_limit, kdf_mem_limit, kdf_salt, wrapped_root_key,
                   max_attachment_bytes, audit_public_key
            FROM vault_header WHERE singleton = 1
            """).first { s throws(StoreError) in
            let row = s.row(of: "vault_header", keyColumns: 0)
            return VaultHeaderRecord(formatVersion: try row.integer(0, in: StoredRange.positive), vaultID: try row.blob(1, count: 16),
                                     kdfAlgorithm: try row.text(2), kdfOpsLimit: try row.unsigned(3), kdfMemLimit: try row.unsigned(4),
                                     kdfSalt: try row.blob(5), wrappedRootKey: try row.blob(6),
                                     maxAttachmentBytes: try row.integer(7, in: StoredRange.positive), auditPublicKey: try row.blob(8, count: 32))
        }
        guard let header else { throw StoreError.corrupt("the vault header is missing") }
        return header
    }

    public func replaceWrappedRootKey(_ wrapped: [UInt8]) throws(StoreError) {
        try database.prepare("UPDATE vault_header SET wrapped_root_key = ? WHERE singleton = 1").run([.blob(wrapped)])
    }

    public func prescriptionIDs(withPrefix prefix: String, limit: Int) throws(StoreError) -> [String] {
        // Ids are lower-case hex, so a range scan on the primary key finds a prefix without a table scan.
        var ids: [String] = []
        try statement("SELECT id FROM prescription WHERE id >= ? AND id < ? ORDER BY id LIMIT ?")
            .forEach([.text(prefix), .text(prefix + "g"), .integer(Int64(limit))]) { row throws(StoreError) in
                ids.append(try row.row(of: "prescription").id(0))
            }
        return ids
    }

    private static let versionColumns = "prescription_id, version, wrapped_key, content, mac"

    private func versionRecord(_ s: Statement) throws(StoreError) -> PrescriptionVersionRecord {
        let row = s.row(of: "prescription_version", keyColumns: 2)
        return PrescriptionVersionRecord(prescriptionID: try row.id(0), version: try row.integer(1, in: StoredRange.version),
                                         wrappedKey: try row.blob(2), content: try row.blob(3), mac: try row.blob(4))
    }

    public func latestVersions() throws(StoreError) -> [PrescriptionVersionRecord] {
        var records: [PrescriptionVersionRecord] = []
        try statement("""
            SELECT \(Self.versionColumns) FROM prescription_version v
            WHERE version = (SELECT max(version) FROM prescription_version WHERE prescription_id = v.prescription_id)
            ORDER BY prescription_id
            """).forEach { row throws(StoreError) in records.append(try versionRecord(row)) }
        return records
    }

    public func versions(of id: String) throws(StoreError) -> [PrescriptionVersionRecord] {
        var records: [PrescriptionVersionRecord] = []
        try statement("SELECT \(Self.versionColumns) FROM prescription_version WHERE prescription_id = ? ORDER BY version")
            .forEach([.text(id)]) { row throws(StoreError) in records.append(try versionRecord(row)) }
        return records
    }

    public func latestVersion(of id: String) throws(StoreError) -> PrescriptionVersionRecord? {
        return try statement("SELECT \(Self.versionColumns) FROM prescription_version WHERE prescription_id = ? ORDER BY version DESC LIMIT 1").first([.text(id)]) { row throws(StoreError) in try versionRecord(row) }
    }

    public func insert(_ record: PrescriptionVersionRecord) throws(StoreError) {
        if record.version == 1 {
            try statement("INSERT INTO prescription (id) VALUES (?)").run([.text(record.prescriptionID)])
        }
        try statement("INSERT INTO prescription_version (\(Self.versionColumns)) VALUES (?, ?, ?, ?, ?)")
            .run([.text(record.prescriptionID), .integer(Int64(record.version)), .blob(record.wrappedKey), .blob(record.content),
                  .blob(record.mac)])
    }

    public func deletePrescription(_ id: String) throws(StoreError) -> Bool {
        try statement("DELETE FROM prescription WHERE id = ?").run([.text(id)])
        return database.changes > 0
    }

    public func prescriptionCount() throws(StoreError) -> Int {
        Int(try database.integer("SELECT count(*) FROM prescription") ?? 0)
    }

    public func versionCount() throws(StoreError) -> Int {
        Int(try database.integer("SELECT count(*) FROM prescription_version") ?? 0)
    }

    // MARK: - Attachments

    private static let attachmentColumns = "id, prescription_id, wrapped_key, metadata, stream_header, mac"

    private func attachmentRecord(_ s: Statement) throws(StoreError) -> AttachmentRecord {
        let row = s.row(of: "attachment")
        return AttachmentRecord(id: try row.id(0), prescriptionID: try row.id(1), wrappedKey: try row.blob(2),
                                metadata: try row.blob(3), streamHeader: try row.blob(4, count: 24), mac: try row.blob(5))
    }

    public func attachments(of prescriptionID: String) throws(StoreError) -> [AttachmentRecord] {
        var records: [AttachmentRecord] = []
        try statement("SELECT \(Self.attachmentColumns) FROM attachment WHERE prescription_id = ? ORDER BY rowid")
            .forEach([.text(prescriptionID)]) { row throws(StoreError) in records.append(try attachmentRecord(row)) }
        return records
    }

    public func attachmentIDs(of prescriptionID: String, withPrefix prefix: String, limit: Int) throws(StoreError) -> [String] {
        var ids: [String] = []
        try statement("SELECT id FROM attachment WHERE prescription_id = ? AND id >= ? AND id < ? ORDER BY id LIMIT ?")
            .forEach([.text(prescriptionID), .text(prefix), .text(prefix + "g"), .integer(Int64(limit))]) { row throws(StoreError) in
                ids.append(try row.row(of: "attachment").id(0))
            }
        return ids
    }

    public func attachment(_ id: String) throws(StoreError) -> AttachmentRecord? {
        return try statement("SELECT \(Self.attachmentColumns) FROM attachment WHERE id = ?").first([.text(id)]) { row throws(StoreError) in try attachmentRecord(row) }
    }

    public func insert(_ attachment: AttachmentRecord) throws(StoreError) {
        try statement("INSERT INTO attachment (\(Self.attachmentColumns)) VALUES (?, ?, ?, ?, ?, ?)")
            .run([.text(attachment.id), .text(attachment.prescriptionID), .blob(attachment.wrappedKey),
                  .blob(attachment.metadata), .blob(attachment.streamHeader), .blob(attachment.mac)])
    }

    public func updateMetadata(ofAttachment id: String, to metadata: [UInt8], mac: [UInt8]) throws(StoreError) {
        try statement("UPDATE attachment SET metadata = ?, mac = ? WHERE id = ?").run([.blob(metadata), .blob(mac), .text(id)])
    }

    public func insertChunk(attachmentID: String, sequence: Int, data: [UInt8]) throws(StoreError) {
        try chunkInsert.run([.text(attachmentID), .integer(Int64(sequence)), .blob(data)])
    }

    /// Prepared once: a 30 MiB attachment is ~500 inserts.
    private lazy var chunkInsertStatement: Statement? = try? database.prepare(
        "INSERT INTO attachment_chunk (attachment_id, seq, data) VALUES (?, ?, ?)")
    private var chunkInsert: Statement {
        get throws(StoreError) {
            if let statement = chunkInsertStatement { return statement }
            return try statement("INSERT INTO attachment_chunk (attachment_id, seq, data) VALUES (?, ?, ?)")
        }
    }

    public func forEachChunk(ofAttachment id: String, _ body: (Int, [UInt8]) throws -> Void) throws {
        // Not from the cache: `body` may run other statements (and this one) while it streams.
        let s = try database.prepare("SELECT attachment_id, seq, data FROM attachment_chunk WHERE attachment_id = ? ORDER BY seq")
        try s.bind([.text(id)])
        while try s.step() {
            let row = s.row(of: "attachment_chunk", keyColumns: 2)
            try body(try row.integer(1, in: StoredRange.chunk), try row.blob(2))
        }
    }

    public func chunk(ofAttachment id: String, sequence: Int) throws(StoreError) -> [UInt8]? {
        try statement("SELECT attachment_id, seq, data FROM attachment_chunk WHERE attachment_id = ? AND seq = ?")
            .first([.text(id), .integer(Int64(sequence))]) { row throws(StoreError) in try row.row(of: "attachment_chunk", keyColumns: 2).blob(2) }
    }

    public func deleteAttachment(_ id: String) throws(StoreError) -> Bool {
        try statement("DELETE FROM attachment WHERE id = ?").run([.text(id)])
        return database.changes > 0
    }

    public func attachmentCountsByPrescription() throws(StoreError) -> [String: Int] {
        var counts: [String: Int] = [:]
        try statement("SELECT prescription_id, count(*) FROM attachment GROUP BY prescription_id").forEach { row throws(StoreError) in
            counts[try row.row(of: "attachment").id(0)] = Int(row.int(1))
        }
        return counts
    }

    public func attachmentCount() throws(StoreError) -> Int {
        Int(try database.integer("SELECT count(*) FROM attachment") ?? 0)
    }

    // MARK: - Clients and grants

    public func clients() throws(StoreError) -> [ClientRecord] {
        let lookup = Schema.clientLookupColumn(try schemaVersion())
        var records: [ClientRecord] = []
        try statement("SELECT id, \(lookup), info, mac FROM client ORDER BY rowid").forEach { row throws(StoreError) in
            records.append(try clientRecord(row))
        }
        return records
    }

    public func client(withLookup key: [UInt8]) throws(StoreError) -> ClientRecord? {
        let lookup = Schema.clientLookupColumn(try schemaVersion())
        return try statement("SELECT id, \(lookup), info, mac FROM client WHERE \(lookup) = ?").first([.blob(key)]) { row throws(StoreError) in
            try clientRecord(row)
        }
    }

    /// The lookup tag (format 3) and the public key before it are both 32 bytes.
    private func clientRecord(_ s: Statement) throws(StoreError) -> ClientRecord {
        let row = s.row(of: "client")
        return ClientRecord(id: try row.id(0), lookup: try row.blob(1, count: 32), info: try row.blob(2), mac: try row.blob(3))
    }

    public func insert(_ client: ClientRecord) throws(StoreError) {
        let lookup = Schema.clientLookupColumn(try schemaVersion())
        try statement("INSERT INTO client (id, \(lookup), info, mac) VALUES (?, ?, ?, ?)")
            .run([.text(client.id), .blob(client.lookup), .blob(client.info), .blob(client.mac)])
    }

    public func deleteClient(_ id: String) throws(StoreError) {
        try statement("DELETE FROM client WHERE id = ?").run([.text(id)])
    }

    public func grants(clientID: String?, references: [String]?) throws(StoreError) -> [GrantRecord] {
        if let references, references.isEmpty { return [] }
        let reference = Schema.grantReferenceColumn(try schemaVersion())
        var records: [GrantRecord] = []
        // References are few (one per client at most): bound one by one, no string-built IN list.
        let placeholders = references.map { Array(repeating: "?", count: $0.count).joined(separator: ", ") }
        let sql = """
            SELECT id, client_id, \(reference), sealed_keys, info, mac FROM access_grant
            WHERE (?1 IS NULL OR client_id = ?1)\(placeholders.map { " AND \(reference) IN (\($0))" } ?? "")
            ORDER BY rowid
            """
        var values: [Statement.Value] = [clientID.map { .text($0) } ?? .null]
        values += (references ?? []).map { .text($0) }
        try statement(sql).forEach(values) { s throws(StoreError) in
            // The reference is 32 hex digits in every format: a keyed hash's 16 bytes (3), a prescription id (1 and 2).
            let row = s.row(of: "access_grant")
            records.append(GrantRecord(id: try row.id(0), clientID: try row.id(1), reference: try row.id(2),
                                       sealedKeys: try row.blob(3), info: try row.blob(4), mac: try row.blob(5)))
        }
        return records
    }

    public func upsert(_ grant: GrantRecord) throws(StoreError) {
        let version = try schemaVersion()
        let reference = Schema.grantReferenceColumn(version)
        let unique = version >= 3 ? "reference" : "client_id, prescription_id"
        try statement("""
            INSERT INTO access_grant (id, client_id, \(reference), sealed_keys, info, mac) VALUES (?, ?, ?, ?, ?, ?)
            ON CONFLICT (\(unique)) DO UPDATE SET
                id = excluded.id, client_id = excluded.client_id, sealed_keys = excluded.sealed_keys, info = excluded.info, mac = excluded.mac
            """).run([.text(grant.id), .text(grant.clientID), .text(grant.reference), .blob(grant.sealedKeys),
                      .blob(grant.info), .blob(grant.mac)])
    }

    public func deleteGrant(_ id: String) throws(StoreError) {
        try statement("DELETE FROM access_grant WHERE id = ?").run([.text(id)])
    }

    // MARK: - Audit log

    private func auditRecord(_ s: Statement) throws(StoreError) -> AuditEntryRecord {
        let row = s.row(of: "audit_entry")
        return AuditEntryRecord(sequence: try row.integer(0, in: StoredRange.auditEntry), entry: try row.blob(1),
                                hash: try row.blob(2, count: 32), mac: try row.optionalBlob(3))
    }

    public func auditEntries() throws(StoreError) -> [AuditEntryRecord] {
        var records: [AuditEntryRecord] = []
        try statement("SELECT seq, entry, hash, mac FROM audit_entry ORDER BY seq").forEach { row throws(StoreError) in records.append(try auditRecord(row)) }
        return records
    }

    public func auditEntries(after sequence: Int) throws(StoreError) -> [AuditEntryRecord] {
        var records: [AuditEntryRecord] = []
        try statement("SELECT seq, entry, hash, mac FROM audit_entry WHERE seq > ? ORDER BY seq").forEach([.integer(Int64(sequence))]) { row throws(StoreError) in
            records.append(try auditRecord(row))
        }
        return records
    }

    public func auditEntry(_ sequence: Int) throws(StoreError) -> AuditEntryRecord? {
        try statement("SELECT seq, entry, hash, mac FROM audit_entry WHERE seq = ?").first([.integer(Int64(sequence))]) { row throws(StoreError) in
            try auditRecord(row)
        }
    }

    public func auditEntryHash(_ sequence: Int) throws(StoreError) -> [UInt8]? {
        try statement("SELECT seq, hash FROM audit_entry WHERE seq = ?").first([.integer(Int64(sequence))]) { row throws(StoreError) in
            try row.row(of: "audit_entry").blob(1, count: 32)
        }
    }

    // MARK: - Search index

    public func indexBuckets() throws(StoreError) -> [(Int, [UInt8])] {
        var buckets: [(Int, [UInt8])] = []
        try statement("SELECT bucket, content FROM search_index ORDER BY bucket").forEach { s throws(StoreError) in
            let row = s.row(of: "search_index")
            buckets.append((try row.integer(0, in: StoredRange.bucket), try row.blob(1)))
        }
        return buckets
    }

    public func indexBucket(_ bucket: Int) throws(StoreError) -> [UInt8]? {
        return try statement("SELECT bucket, content FROM search_index WHERE bucket = ?").first([.integer(Int64(bucket))]) { row throws(StoreError) in
            try row.row(of: "search_index").blob(1)
        }
    }

    public func setIndexBucket(_ bucket: Int, to sealed: [UInt8]) throws(StoreError) {
        try statement("INSERT INTO search_index (bucket, content) VALUES (?, ?) ON CONFLICT (bucket) DO UPDATE SET content = excluded.content")
            .run([.integer(Int64(bucket)), .blob(sealed)])
    }

    public func clearIndex() throws(StoreError) {
        try database.execute("DELETE FROM search_index")
    }

    public func lastAuditEntry() throws(StoreError) -> AuditEntryRecord? {
        return try statement("SELECT seq, entry, hash, mac FROM audit_entry ORDER BY seq DESC LIMIT 1").first { row throws(StoreError) in try auditRecord(row) }
    }

    public func append(_ entry: AuditEntryRecord) throws(StoreError) {
        try statement("INSERT INTO audit_entry (seq, entry, hash, mac) VALUES (?, ?, ?, ?)")
            .run([.integer(Int64(entry.sequence)), .blob(entry.entry), .blob(entry.hash), entry.mac.map { .blob($0) } ?? .null])
    }

    public func setAuditMAC(sequence: Int, mac: [UInt8]) throws(StoreError) {
        try statement("UPDATE audit_entry SET mac = ? WHERE seq = ?").run([.blob(mac), .integer(Int64(sequence))])
    }

    public func auditHead() throws(StoreError) -> (sequence: Int, hash: [UInt8], mac: [UInt8])? {
        return try statement("SELECT seq, hash, mac FROM audit_head WHERE singleton = 1").first { s throws(StoreError) in
            let row = s.row(of: "audit_head", keyColumns: 0)
            return (try row.integer(0, in: StoredRange.counter), try row.blob(1, count: 32), try row.blob(2))
        }
    }

    public func setAuditHead(sequence: Int, hash: [UInt8], mac: [UInt8]) throws(StoreError) {
        try statement("""
            INSERT INTO audit_head (singleton, seq, hash, mac) VALUES (1, ?, ?, ?)
            ON CONFLICT (singleton) DO UPDATE SET seq = excluded.seq, hash = excluded.hash, mac = excluded.mac
            """).run([.integer(Int64(sequence)), .blob(hash), .blob(mac)])
    }

    // MARK: - Format 2

    public func schemaVersion() throws(StoreError) -> Int {
        Int(try statement("PRAGMA user_version").first { $0.int(0) } ?? 0)
    }

    public func upgradeToFormat2(wrappedRootKey: [UInt8]) throws(StoreError) {
        guard try schemaVersion() == 1 else { throw StoreError.corrupt("the schema to upgrade is not version 1") }
        try database.execute(Schema.version2)
        try statement("UPDATE vault_header SET format_version = 2, wrapped_root_key = ? WHERE singleton = 1")
            .run([.blob(wrappedRootKey)])
        try database.execute("PRAGMA user_version = 2")
    }

    public func upgradeToFormat3(wrappedRootKey: [UInt8], clients: [ClientRecord], grants: [GrantRecord]) throws(StoreError) {
        guard try schemaVersion() == 2 else { throw StoreError.corrupt("the schema to upgrade is not version 2") }
        try database.execute(Schema.version3)
        try database.execute("PRAGMA user_version = 3")
        for client in clients { try insert(client) }
        for grant in grants { try upsert(grant) }
        try statement("UPDATE vault_header SET format_version = 3, wrapped_root_key = ? WHERE singleton = 1")
            .run([.blob(wrappedRootKey)])
    }

    public func createPatientTable() throws(StoreError) {
        guard try schemaVersion() == 3 else { throw StoreError.corrupt("the schema to upgrade is not version 3") }
        try database.execute(Schema.version4Patients)
    }

    // MARK: - Format 4: key slots

    public func upgradeToFormat4(wrappedRootKey: [UInt8]) throws(StoreError) {
        guard try schemaVersion() == 3 else { throw StoreError.corrupt("the schema to upgrade is not version 3") }
        try database.execute("PRAGMA user_version = 4")
        try database.prepare("UPDATE vault_header SET format_version = 4, wrapped_root_key = ? WHERE singleton = 1")
            .run([.blob(wrappedRootKey)])
    }

    public func patientMACs() throws(StoreError) -> [(id: String, mac: [UInt8])] {
        if try schemaVersion() < 4 {
            guard try tableExists("person") else { return [] }
        }
        var rows: [(id: String, mac: [UInt8])] = []
        try statement("SELECT id, mac FROM person ORDER BY id").forEach { s throws(StoreError) in
            let row = s.row(of: "person")
            rows.append((try row.id(0), try row.blob(1)))
        }
        return rows
    }

    public func patientMACs(withPrefix prefix: String) throws(StoreError) -> [(id: String, mac: [UInt8])] {
        guard let last = prefix.unicodeScalars.last, let next = Unicode.Scalar(last.value + 1) else { return [] }
        if try schemaVersion() < 4 {
            guard try tableExists("person") else { return [] }
        }
        // Every id with the prefix and nothing else: ids >= "ab" and < "ac" (SQLite compares text bytewise).
        let upper = String(prefix.unicodeScalars.dropLast()) + String(next)
        var rows: [(id: String, mac: [UInt8])] = []
        try statement("SELECT id, mac FROM person WHERE id >= ? AND id < ? ORDER BY id")
            .forEach([.text(prefix), .text(upper)]) { s throws(StoreError) in
                let row = s.row(of: "person")
                rows.append((try row.id(0), try row.blob(1)))
            }
        return rows
    }

    public func patientBuckets() throws(StoreError) -> PatientBucketsRecord? {
        guard try schemaVersion() >= 4, try tableExists("person_buckets") else { return nil }
        return try statement("SELECT content, mac FROM person_buckets WHERE singleton = 1").first { s throws(StoreError) in
            let row = s.row(of: "person_buckets", keyColumns: 0)
            return PatientBucketsRecord(content: try row.blob(0), mac: try row.blob(1))
        }
    }

    public func setPatientBuckets(_ record: PatientBucketsRecord) throws(StoreError) {
        try database.execute(Schema.version4PatientBuckets)
        try database.prepare("INSERT OR REPLACE INTO person_buckets (singleton, content, mac) VALUES (1, ?, ?)")
            .run([.blob(record.content), .blob(record.mac)])
    }

    public func patient(id: String) throws(StoreError) -> PatientRecord? {
        if try schemaVersion() < 4 {
            guard try tableExists("person") else { return nil }
        }
        return try statement("SELECT id, info, mac FROM person WHERE id = ?").first([.text(id)]) { row throws(StoreError) in
            try patientRecord(row)
        }
    }

    public func patients() throws(StoreError) -> [PatientRecord] {
        if try schemaVersion() < 4 {
            guard try tableExists("person") else { return [] }
        }
        var records: [PatientRecord] = []
        try database.prepare("SELECT id, info, mac FROM person ORDER BY id").forEach { row throws(StoreError) in
            records.append(try patientRecord(row))
        }
        return records
    }

    private func patientRecord(_ s: Statement) throws(StoreError) -> PatientRecord {
        let row = s.row(of: "person")
        return PatientRecord(id: try row.id(0), info: try row.blob(1), mac: try row.blob(2))
    }

    public func upsert(_ patient: PatientRecord) throws(StoreError) {
        try database.prepare("INSERT OR REPLACE INTO person (id, info, mac) VALUES (?, ?, ?)")
            .run([.text(patient.id), .blob(patient.info), .blob(patient.mac)])
    }

    public func deletePatient(_ id: String) throws(StoreError) -> Bool {
        try database.prepare("DELETE FROM person WHERE id = ?").run([.text(id)])
        return database.changes > 0
    }

    /// Whether the table exists (the format-4 upgrade creates it before `user_version` moves).
    private func tableExists(_ name: String) throws(StoreError) -> Bool {
        let s = try database.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?")
        try s.bind([.text(name)])
        return try s.step()
    }

    public func upgradeKeySlotsToFormat4() throws(StoreError) {
        try database.execute(Schema.version4KeySlots)
    }

    public func keySlots() throws(StoreError) -> [KeySlotRecord] {
        guard try schemaVersion() >= 4 else { return [] }
        var slots: [KeySlotRecord] = []
        try database.prepare("""
            SELECT id, kind, kdf_algorithm, kdf_ops_limit, kdf_mem_limit, kdf_salt, wrapped_root_key, info
            FROM key_slot ORDER BY id
            """).forEach { s throws(StoreError) in
            let row = s.row(of: "key_slot")
            slots.append(KeySlotRecord(id: try row.integer(0, in: StoredRange.keySlot), kind: try row.text(1), kdfAlgorithm: try row.text(2),
                                       kdfOpsLimit: try row.unsigned(3), kdfMemLimit: try row.unsigned(4),
                                       kdfSalt: try row.blob(5), wrappedRootKey: try row.blob(6), info: try row.blob(7)))
        }
        return slots
    }

    public func upsert(_ slot: KeySlotRecord) throws(StoreError) {
        try database.prepare("""
            INSERT OR REPLACE INTO key_slot (id, kind, kdf_algorithm, kdf_ops_limit, kdf_mem_limit, kdf_salt, wrapped_root_key, info)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?)
            """).run([.integer(Int64(slot.id)), .text(slot.kind), .text(slot.kdfAlgorithm), .integer(Int64(slot.kdfOpsLimit)),
                      .integer(Int64(slot.kdfMemLimit)), .blob(slot.kdfSalt), .blob(slot.wrappedRootKey), .blob(slot.info)])
    }

    public func deleteKeySlot(_ id: Int) throws(StoreError) {
        try database.prepare("DELETE FROM key_slot WHERE id = ?").run([.integer(Int64(id))])
    }

    public func replaceHeaderKey(opsLimit: UInt64, memLimit: UInt64, salt: [UInt8], wrapped: [UInt8]) throws(StoreError) {
        try database.prepare("""
            UPDATE vault_header SET kdf_ops_limit = ?, kdf_mem_limit = ?, kdf_salt = ?, wrapped_root_key = ? WHERE singleton = 1
            """).run([.integer(Int64(opsLimit)), .integer(Int64(memLimit)), .blob(salt), .blob(wrapped)])
    }

    public func setMaxAttachmentBytes(_ bytes: Int) throws(StoreError) {
        try database.prepare("UPDATE vault_header SET max_attachment_bytes = ? WHERE singleton = 1").run([.integer(Int64(bytes))])
    }

    public func keyRing() throws(StoreError) -> KeyRingRecord? {
        guard try schemaVersion() >= 4 else { return nil }
        let s = try database.prepare("SELECT write_counter, content, mac FROM key_ring WHERE singleton = 1")
        guard try s.step() else { return nil }
        let row = s.row(of: "key_ring", keyColumns: 0)
        return KeyRingRecord(writeCounter: try row.integer(0, in: StoredRange.counter), content: try row.blob(1), mac: try row.blob(2))
    }

    public func setKeyRing(_ ring: KeyRingRecord) throws(StoreError) {
        try database.prepare("""
            INSERT INTO key_ring (singleton, write_counter, content, mac) VALUES (1, ?, ?, ?)
            ON CONFLICT (singleton) DO UPDATE SET write_counter = excluded.write_counter, content = excluded.content, mac = excluded.mac
            """).run([.integer(Int64(ring.writeCounter)), .blob(ring.content), .blob(ring.mac)])
    }

    public func vaultState() throws(StoreError) -> VaultStateRecord? {
        guard try schemaVersion() >= 2 else { return nil }
        return try statement("SELECT write_counter, state, mac FROM vault_state WHERE singleton = 1").first { s throws(StoreError) in
            let row = s.row(of: "vault_state", keyColumns: 0)
            return VaultStateRecord(writeCounter: try row.integer(0, in: StoredRange.counter), state: try row.blob(1), mac: try row.blob(2))
        }
    }

    /// Prepared once (`rxvault serve` asks on every request) and reset after each use, so it
    /// never holds a read snapshot open.
    public func vaultStateStamp() throws(StoreError) -> (counter: Int, mac: [UInt8])? {
        let s: Statement
        if let stampStatement {
            s = stampStatement
        } else {
            s = try statement("SELECT write_counter, mac FROM vault_state WHERE singleton = 1")
            stampStatement = s
        }
        try s.bind([])
        defer { _ = try? s.bind([]) }
        guard try s.step() else { return nil }
        let row = s.row(of: "vault_state", keyColumns: 0)
        return (try row.integer(0, in: StoredRange.counter), try row.blob(1))
    }

    public func setVaultState(_ state: VaultStateRecord) throws(StoreError) {
        try statement("""
            INSERT INTO vault_state (singleton, write_counter, state, mac) VALUES (1, ?, ?, ?)
            ON CONFLICT (singleton) DO UPDATE SET write_counter = excluded.write_counter, state = excluded.state, mac = excluded.mac
            """).run([.integer(Int64(state.writeCounter)), .blob(state.state), .blob(state.mac)])
    }

    public func manifestBuckets() throws(StoreError) -> [(Int, [UInt8])] {
        guard try schemaVersion() >= 2 else { return [] }
        var buckets: [(Int, [UInt8])] = []
        try statement("SELECT bucket, content FROM manifest ORDER BY bucket").forEach { s throws(StoreError) in
            let row = s.row(of: "manifest")
            buckets.append((try row.integer(0, in: StoredRange.bucket), try row.blob(1)))
        }
        return buckets
    }

    public func manifestBucket(_ bucket: Int) throws(StoreError) -> [UInt8]? {
        try statement("SELECT bucket, content FROM manifest WHERE bucket = ?").first([.integer(Int64(bucket))]) { row throws(StoreError) in
            try row.row(of: "manifest").blob(1)
        }
    }

    public func setManifestBucket(_ bucket: Int, to content: [UInt8]?) throws(StoreError) {
        if let content {
            try statement("INSERT INTO manifest (bucket, content) VALUES (?, ?) ON CONFLICT (bucket) DO UPDATE SET content = excluded.content")
                .run([.integer(Int64(bucket)), .blob(content)])
        } else {
            try statement("DELETE FROM manifest WHERE bucket = ?").run([.integer(Int64(bucket))])
        }
    }

    public func allPrescriptionIDs() throws(StoreError) -> [String] {
        var ids: [String] = []
        try statement("""
            SELECT id FROM prescription UNION SELECT prescription_id FROM prescription_version
            UNION SELECT prescription_id FROM attachment\(try schemaVersion() >= 3 ? "" : " UNION SELECT prescription_id FROM access_grant") ORDER BY 1
            """).forEach { row throws(StoreError) in ids.append(try row.row(of: "prescription, prescription_version or attachment").id(0)) }
        return ids
    }

    public func write<T>(_ body: () throws -> T) throws -> T {
        try database.writeTransaction(body)
    }

    public func read<T>(_ body: () throws -> T) throws -> T {
        try database.readTransaction(body)
    }

    public func snapshot(to path: String) throws(StoreError) {
        // VACUUM INTO reads one snapshot and writes a compact new database (not WAL mode). It
        // accepts an empty file, which lets the copy be private (0600) from its first byte.
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw StoreError.cannotWrite("cannot create \(path): \(String(cString: strerror(errno)))") }
        close(fd)
        try database.prepare("VACUUM INTO ?").run([.text(path)])
    }

    public func useSmallCacheForStreaming() {
        // 256 KiB: four 64 KiB chunks. Only for this connection, which lives for one command.
        try? database.execute("PRAGMA cache_size = -256")
    }

    public func useLargeCacheForBulkWork() {
        // 24 MiB (SQLite's default is 2 MiB). More pages than fit are spilled to the WAL, which
        // an import of 100,000 prescriptions (about 45 MiB of pages) did with 64 MiB no faster
        // but 40 MiB larger. An export of as many looks each prescription up by id, five small
        // queries: with 2 MiB the b-tree's inner pages kept falling out and were read again
        // (580,000 preads). Only for this connection, which lives for one command.
        try? database.execute("PRAGMA cache_size = -24576")
    }

    @discardableResult
    public func purgeDeletedContent() -> Bool {
        database.checkpointAndTruncateWAL()
    }

    @discardableResult
    public func checkpointWithoutWaiting() -> Bool { database.checkpointWithoutWaiting() }

    public func fileHasMoved() -> Bool { database.fileHasMoved }
}
