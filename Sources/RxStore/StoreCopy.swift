/// Copies a vault's rows from one store into another, whatever their engines (a database into a
/// file for a backup; a file into a database for `rxvault copy`), and compares two stores row by
/// row. Nothing is decrypted: the ciphertext, the MACs and the owner's state root go across as
/// they are, so the copy is the same vault (its checks pass or fail as the original's would).
public enum StoreCopy {
    /// Writes every row of `source` but its header into `target`, a store just created with the
    /// same header and an audit head at sequence 0. Run inside `target.write` (and, for a
    /// consistent copy, inside `source.read`).
    public static func copyContent(from source: any RecordStore, into target: any RecordStore) throws {
        let version = try source.schemaVersion()
        guard version == (try target.schemaVersion()) else {
            throw StoreError.unsupportedVersion(found: version, supported: try target.schemaVersion())
        }
        for slot in try source.keySlots() { try target.upsert(slot) }
        if let ring = try source.keyRing() { try target.setKeyRing(ring) }
        if let state = try source.vaultState() { try target.setVaultState(state) }
        for (bucket, content) in try source.manifestBuckets() { try target.setManifestBucket(bucket, to: content) }
        for (bucket, content) in try source.indexBuckets() { try target.setIndexBucket(bucket, to: content) }
        for patient in try source.patients() { try target.upsert(patient) }
        if let buckets = try source.patientBuckets() { try target.setPatientBuckets(buckets) }
        for client in try source.clients() { try target.insert(client) }
        for grant in try source.grants(clientID: nil, references: nil) { try target.upsert(grant) }
        for id in try source.allPrescriptionIDs() {
            for version in try source.versions(of: id) { try target.insert(version) }
            for attachment in try source.attachments(of: id) {
                try target.insert(attachment)
                try source.forEachChunk(ofAttachment: attachment.id) { sequence, data in
                    try target.insertChunk(attachmentID: attachment.id, sequence: sequence, data: data)
                }
            }
        }
        for entry in try source.auditEntries() { try target.append(entry) }
        if let head = try source.auditHead() {
            try target.setAuditHead(sequence: head.sequence, hash: head.hash, mac: head.mac)
        }
    }

    /// The first difference between the two stores' rows, table by table ("prescription
    /// 0123abcd: version 2 differs"), or nil when every row is the same. Run each inside its
    /// store's `read`.
    public static func firstDifference(between a: any RecordStore, and b: any RecordStore) throws -> String? {
        if try a.header() != b.header() { return "the vault header differs" }
        if try a.schemaVersion() != b.schemaVersion() { return "the schema version differs" }
        if try a.keySlots() != b.keySlots() { return "the key slots differ" }
        if try a.keyRing() != b.keyRing() { return "the key ring differs" }
        if try a.vaultState() != b.vaultState() { return "the state root differs" }
        if try !same(a.manifestBuckets(), b.manifestBuckets()) { return "the manifest differs" }
        if try !same(a.indexBuckets(), b.indexBuckets()) { return "the search index differs" }
        if try a.patients() != b.patients() { return "the patient rows differ" }
        if try a.patientBuckets() != b.patientBuckets() { return "the patient buckets differ" }
        if try a.clients() != b.clients() { return "the client rows differ" }
        if try a.grants(clientID: nil, references: nil) != b.grants(clientID: nil, references: nil) {
            return "the grant rows differ"
        }
        let ids = try a.allPrescriptionIDs()
        if try ids != b.allPrescriptionIDs() { return "the prescriptions differ" }
        // The ids above are any table's: a prescription row missing beside its versions counts here.
        if try a.prescriptionCount() != b.prescriptionCount() { return "the prescription rows differ" }
        for id in ids {
            if try a.versions(of: id) != b.versions(of: id) { return "prescription \(id.short): its versions differ" }
            let attachments = try a.attachments(of: id)
            if try attachments != b.attachments(of: id) { return "prescription \(id.short): its attachments differ" }
            for attachment in attachments {
                var sequence = 0
                while true {
                    let chunk = try a.chunk(ofAttachment: attachment.id, sequence: sequence)
                    if try chunk != b.chunk(ofAttachment: attachment.id, sequence: sequence) {
                        return "attachment \(attachment.id.short): chunk \(sequence) differs"
                    }
                    if chunk == nil { break }
                    sequence += 1
                }
            }
        }
        if try a.auditEntries() != b.auditEntries() { return "the audit log differs" }
        let headA = try a.auditHead()
        let headB = try b.auditHead()
        if headA?.sequence != headB?.sequence || headA?.hash != headB?.hash || headA?.mac != headB?.mac {
            return "the audit head differs"
        }
        return nil
    }

    private static func same(_ a: [(Int, [UInt8])], _ b: [(Int, [UInt8])]) -> Bool {
        a.count == b.count && zip(a, b).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
    }
}
