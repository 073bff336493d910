import RxModel
import RxStore

/// One merge's work inside the owner write (`Vault.merge`): the two copies read, each record kind
/// decided by the rules in docs/format.md ("Merge rules"), the result written through the same
/// paths as every owner write (versions sealed afresh and indexed, grants sealed to the merged
/// keys), so the vault after a merge is checked like any other.
struct CopyMerge {
    let vault: Vault
    let source: Vault
    let write: OwnerWrite
    /// The two copies' knowledge as the merge began.
    let ours: KnowledgeVector
    let theirs: KnowledgeVector
    /// Both copies hold a write made in format 8: every record without a stamp was in the state
    /// they share, so one that a copy lacks was removed there. Without it (a copy from before
    /// format 8) nothing unstamped is taken for removed, and no unstamped grant or client is
    /// brought in (a protection that cannot be shown current is not put back).
    let shareFormatEight: Bool
    var report = MergeReport()
    var theirAuditHead = "none"
    /// Prescriptions whose grants to a client removed in the other copy were deleted.
    var rekeyUnlessChanged: Set<PrescriptionID> = []

    init(vault: Vault, source: Vault, write: OwnerWrite, ours: KnowledgeVector, theirs: KnowledgeVector) throws {
        (self.vault, self.source, self.write, self.ours, self.theirs) = (vault, source, write, ours, theirs)
        shareFormatEight = ours.clocks.contains { theirs[$0.key] > 0 }
    }

    /// Whether the copy with `knowledge` has seen the write that made a record.
    func seen(_ stamp: WriteStamp?, by knowledge: KnowledgeVector) -> Bool {
        stamp.map { $0.isSeen(by: knowledge) } ?? shareFormatEight
    }

    mutating func run() throws {
        let theirSide = try source.reading { read in try CopySnapshot(of: source, in: read) }
        if let head = theirSide.auditHead { theirAuditHead = "\(head.sequence) \(Hex.encode(head.hash).prefix(16))" }
        let ourSide = try CopySnapshot(of: vault, in: write)
        try mergePatients(ourSide, theirSide)
        let clients = try mergeClients(ourSide, theirSide)
        var changed = try mergePrescriptions(ourSide, theirSide)
        // A prescription a removed client held keys to needs a version under a new key. One
        // the merge wrote a version of has it (every stored version has a key of its own): a
        // re-key there too would be a version the other copy lacks, and the two would never
        // settle. Only the others are re-keyed here.
        for id in rekeyUnlessChanged.sorted(by: { $0.hex < $1.hex }) where !changed.contains(id) {
            guard try vault.store.latestVersion(of: id) != nil else { continue }
            try vault.rekey(prescriptionID: id, reason: "re-keyed: a client was removed", in: write)
        }
        // A prescription whose attachments changed has its grants sealed again too (with the keys
        // of the attachments it now has).
        changed.formUnion(try mergeAttachments(ourSide, theirSide))
        try mergeGrants(ourSide, theirSide, clients: clients, changed: changed)
        var ring = try mergeKeySlots(ourSide, theirSide)
        try mergeSettings(ourSide, theirSide, into: &ring)
        write.ringHistory = ring
        let theirLog = try source.reading { read in try source.namedAuditEvents(in: read) }
        report.auditEntriesJoined = try vault.joinAuditLog(theirLog, in: write)
    }

    // MARK: - Patients

    private mutating func mergePatients(_ ourSide: CopySnapshot, _ theirSide: CopySnapshot) throws {
        var updated: Set<String> = []
        for (id, their) in theirSide.patients.records.sorted(by: { $0.key < $1.key }) {
            guard let mine = ourSide.patients.records[id] else {
                if let survivor = ourSide.patients.aliases[id], let kept = ourSide.patients.records[survivor],
                    their.merged.contains(survivor)
                {
                    try joinCrossMerged(ours: kept, theirs: their, updated: &updated)
                    continue
                }
                // Merged away here (an alias of another record), or removed here after it was seen.
                if ourSide.patients.aliases[id] != nil || seen(their.changed, by: ours) { continue }
                try vault.writePatient(their, keepingStamp: true, in: write)
                report.patientsAdded += 1
                continue
            }
            guard mine != their else { continue }
            let theyKnowMine = seen(mine.changed, by: theirs)
            let iKnowTheirs = seen(their.changed, by: ours)
            var kept: PatientSummary
            var theirsAsTheyAre = false
            if theyKnowMine && !iKnowTheirs {
                kept = their
                theirsAsTheyAre = true
            } else if iKnowTheirs && !theyKnowMine {
                continue
            } else {
                // Both changed it: the later write's name and dates, everything both recorded.
                kept = (mine.changed ?? .zero) > (their.changed ?? .zero) ? mine : their
                if mine.name != their.name || mine.birthDate != their.birthDate {
                    report.patientConflicts.append(id)
                }
                let other = kept == mine ? their : mine
                kept.merged = Array(Set(kept.merged + other.merged)).sorted()
                for measurement in other.measurements where !kept.measurements.contains(measurement) {
                    kept.measurements.append(measurement)
                }
            }
            guard kept != mine else { continue }
            try vault.writePatient(kept, keepingStamp: theirsAsTheyAre, in: write)
            updated.insert(id)
            report.patientsUpdated += 1
        }
        // Their prescriptions' index entries and grants name each patient as it now is.
        if !updated.isEmpty { try vault.refreshPrescriptions(of: updated, in: write) }
    }

    /// Two records merged each into the other, one on each copy (`patient merge A B` here,
    /// `patient merge B A` there): every copy keeps the one with the smaller id, with its name
    /// and stamp, both records' merged ids, the measurements of both, a birth date if either
    /// has one. Built from the two records alone, so both copies build the same.
    private mutating func joinCrossMerged(ours: PatientSummary, theirs: PatientSummary, updated: inout Set<String>)
        throws
    {
        let oursWins = ours.id.hex < theirs.id.hex
        var kept = oursWins ? ours : theirs
        let other = oursWins ? theirs : ours
        kept.merged = Set(ours.merged + theirs.merged + [ours.id.hex, theirs.id.hex]).subtracting([kept.id.hex])
            .sorted()
        for measurement in other.measurements where !kept.measurements.contains(measurement) {
            kept.measurements.append(measurement)
        }
        kept.measurements = Vault.ordered(kept.measurements)
        kept.birthDate = kept.birthDate ?? other.birthDate
        if oursWins {
            guard kept != ours else { return }
        } else {
            try vault.deletePatientRow(ours.id, in: write)
        }
        try vault.writePatient(kept, keepingStamp: true, in: write)
        updated.formUnion([ours.id.hex, theirs.id.hex])
        report.patientsUpdated += 1
    }

    // MARK: - Clients

    /// The clients after the merge, by id.
    private mutating func mergeClients(_ ourSide: CopySnapshot, _ theirSide: CopySnapshot) throws -> [ClientID:
        ClientSummary]
    {
        var result = Dictionary(uniqueKeysWithValues: ourSide.clients.map { ($0.id, $0) })
        let theirIDs = Set(theirSide.clients.map(\.id))
        for mine in ourSide.clients where !theirIDs.contains(mine.id) && seen(mine.stamp, by: theirs) {
            // Removed in the other copy: its grants go with it (the prescriptions are re-keyed
            // below, when their grants are written again without it).
            for grant in try vault.storedGrants(clientID: mine.id, prescriptionID: nil) {
                try vault.touch(grant.prescriptionID.hex, in: write)
                try vault.store.deleteGrant(grant.row.id)
                rekeyUnlessChanged.insert(grant.prescriptionID)
                report.grantsRemoved += 1
            }
            try vault.store.deleteClient(mine.id)
            result[mine.id] = nil
            report.clientsRemoved.append(mine.name)
        }
        for their in theirSide.clients
        where result[their.id] == nil && !ourSide.clients.contains(where: { $0.id == their.id }) {
            guard their.stamp != nil, !seen(their.stamp, by: ours) else { continue }
            if let same = result.values.first(where: { $0.recipient == their.recipient }) {
                report.notes.append(
                    "client '\(their.name)' of the other copy has the key of client '\(same.name)' here: not brought in, nor its grants"
                )
                continue
            }
            var name = their.name
            if result.values.contains(where: { $0.name.lowercased() == name.lowercased() }) {
                name = "\(their.name)-\(their.id.short)"
                report.notes.append("client '\(their.name)' of the other copy is '\(name)' here (the name was taken)")
            }
            try vault.store.insert(
                try vault.clientRow(
                    id: their.id, recipient: their.recipient,
                    info: ClientInfo(schema: 1, name: name, added: their.added, by: their.stamp?.text)))
            result[their.id] = ClientSummary(
                id: their.id, name: name, recipient: their.recipient, added: their.added, stamp: their.stamp)
            report.clientsAdded.append(name)
        }
        return result
    }

    // MARK: - Prescriptions

    /// Joins every prescription's history; returns the prescriptions whose versions changed.
    private mutating func mergePrescriptions(_ ourSide: CopySnapshot, _ theirSide: CopySnapshot) throws -> Set<
        PrescriptionID
    > {
        var changed: Set<PrescriptionID> = []
        let now = vault.clock.timestamp()
        for (id, theirHead) in theirSide.heads.sorted(by: { $0.key < $1.key }) {
            if let ourHead = ourSide.heads[id] {
                guard ourHead != theirHead else { continue }
                let mine = try vault.history(id, in: write)
                let their = try source.reading { read in try source.history(id, in: read) }
                guard let joined = VersionHistoryMerge(ours: mine, theirs: their, recorded: now) else { continue }
                // Verified against the manifest before its rows change (the entry is rewritten at the end).
                try vault.touch(id.hex, in: write)
                _ = try vault.store.deleteVersions(of: id, from: joined.keptPrefix + 1)
                for version in joined.versions.dropFirst(joined.keptPrefix) {
                    try vault.storeVersion(version, in: write)
                }
                if let mergeVersion = joined.mergeVersion { try vault.storeVersion(mergeVersion, in: write) }
                if !joined.conflict.isEmpty { report.conflicts.append(id) }
                report.versionsAdded += joined.broughtIn
                report.prescriptionsUpdated.append(id)
                changed.insert(id)
            } else {
                let their = try source.reading { read in try source.history(id, in: read) }
                // Removed here after every version of it was seen: it stays removed.
                guard !their.allSatisfy({ seen($0.by, by: ours) }) else { continue }
                for version in their { try vault.storeVersion(version, in: write) }
                report.versionsAdded += their.count
                report.prescriptionsAdded.append(id)
                changed.insert(id)
            }
        }
        for id in ourSide.heads.keys.sorted() where theirSide.heads[id] == nil {
            let mine = try vault.history(id, in: write)
            try vault.touch(id.hex, in: write)
            // Kept when this copy wrote a version the other has not seen (nothing is lost).
            guard mine.allSatisfy({ seen($0.by, by: theirs) }) else { continue }
            _ = try vault.deletePrescription(id, in: write)
            report.prescriptionsRemoved.append(id)
        }
        return changed
    }

    // MARK: - Attachments

    /// Returns the prescriptions whose attachments changed.
    private mutating func mergeAttachments(_ ourSide: CopySnapshot, _ theirSide: CopySnapshot) throws -> Set<
        PrescriptionID
    > {
        var changed: Set<PrescriptionID> = []
        let removed = Set(report.prescriptionsRemoved)
        for id in Set(ourSide.heads.keys).union(theirSide.heads.keys).sorted() where !removed.contains(id) {
            guard try vault.store.latestVersion(of: id) != nil else { continue }
            let mine = try vault.store.attachments(of: id)
            let their = try source.reading { _ in try source.store.attachments(of: id) }
            let mineIDs = Set(mine.map(\.id))
            let theirIDs = Set(their.map(\.id))
            for row in mine where !theirIDs.contains(row.id) && theirSide.heads[id] != nil {
                guard seen(try vault.openInfo(row).info.stamp, by: theirs) else { continue }
                try vault.touch(id.hex, in: write)
                _ = try vault.store.deleteAttachment(row.id)
                report.attachmentsRemoved += 1
                changed.insert(id)
            }
            for row in their where !mineIDs.contains(row.id) {
                guard !seen(try source.openInfo(row).info.stamp, by: ours) || ourSide.heads[id] == nil else { continue }
                try vault.touch(id.hex, in: write)
                try vault.store.insert(row)
                try source.reading { _ in
                    try source.store.forEachChunk(ofAttachment: row.id) { sequence, data in
                        try vault.store.insertChunk(attachmentID: row.id, sequence: sequence, data: data)
                    }
                }
                report.attachmentsAdded += 1
                changed.insert(id)
            }
        }
        return changed
    }

    // MARK: - Grants

    private mutating func mergeGrants(
        _ ourSide: CopySnapshot, _ theirSide: CopySnapshot, clients: [ClientID: ClientSummary],
        changed: Set<PrescriptionID>
    ) throws {
        struct Key: Hashable {
            let client: ClientID
            let prescription: PrescriptionID
        }
        let mineByID = Dictionary(uniqueKeysWithValues: ourSide.grants.map { ($0.id, $0) })
        let theirByID = Dictionary(uniqueKeysWithValues: theirSide.grants.map { ($0.id, $0) })
        var kept: [Key: GrantSummary] = [:]
        // Terms that are neither copy's (the narrower of two made side by side) are this
        // merge's write, so a copy that merges the result later takes it over its own.
        let write = self.write
        let stamp = { [vault] in try vault.stamp(write) }
        func keep(_ grant: GrantSummary) throws {
            let key = Key(client: grant.client.id, prescription: grant.prescriptionID)
            guard let other = kept[key] else {
                kept[key] = grant
                return
            }
            kept[key] = try Self.narrower(other, grant, stamp: stamp)
        }
        for grant in ourSide.grants {
            if let their = theirByID[grant.id] {
                if Self.sameTerms(grant, their) || seen(their.termsSetBy, by: ours) {
                    // Their terms are ours, or ours were set after this copy saw theirs.
                    try keep(grant)
                } else if seen(grant.termsSetBy, by: theirs) {
                    // Theirs were set after they saw ours: a widening counts as much as a narrowing.
                    try keep(their)
                } else {
                    // Both changed the terms, neither seeing the other: the narrower of each term.
                    try keep(Self.narrower(grant, their, stamp: stamp))
                }
            } else if !seen(grant.stamp, by: theirs) {
                try keep(grant)
            }
        }
        for grant in theirSide.grants where mineByID[grant.id] == nil {
            // A grant this copy has seen and lacks was revoked, expired or removed here (even
            // when the other copy changed its terms meanwhile: the revocation wins).
            guard grant.stamp != nil, !seen(grant.stamp, by: ours) else { continue }
            try keep(grant)
        }
        let alive = try Set(vault.store.allPrescriptionIDs())
        let final = kept.filter { clients[$0.key.client] != nil && alive.contains($0.key.prescription) }
        let finalIDs = Set(final.values.map(\.id))
        for grant in try vault.storedGrants(clientID: nil, prescriptionID: nil) where !finalIDs.contains(grant.row.id) {
            try vault.touch(grant.prescriptionID.hex, in: write)
            try vault.store.deleteGrant(grant.row.id)
            report.grantsRemoved += 1
        }
        for (key, grant) in final.sorted(by: { $0.value.id < $1.value.id }) {
            let before = mineByID[grant.id]
            let termsChanged = before.map { !Self.sameTerms($0, grant) } ?? true
            guard termsChanged || changed.contains(key.prescription) else { continue }
            if before == nil { report.grantsAdded += 1 } else if termsChanged { report.grantsNarrowed += 1 }
            try vault.writeGrant(
                id: grant.id, client: clients[key.client]!, prescriptionID: key.prescription,
                info: GrantInfo(keeping: grant), in: write)
        }
        // Grants on prescriptions whose versions changed and that kept their terms were sealed
        // above; any other grant of a changed prescription (none should remain) is sealed again.
    }

    /// The narrower of two grants of one client to one prescription: the earlier end, attachments
    /// and measurements only if both give them; the smaller id and its stamp, so every copy picks
    /// the same. Terms that are neither grant's own are `stamp`'s (this merge's write, taken
    /// only then: a merge that narrows nothing counts no write for it).
    static func narrower(_ a: GrantSummary, _ b: GrantSummary, stamp: () throws -> WriteStamp?) rethrows
        -> GrantSummary
    {
        let first = a.id < b.id ? a : b
        let expires: CalendarDate? =
            switch (a.expires, b.expires) {
            case (nil, let e), (let e, nil): e
            case (let x?, let y?): min(x, y)
            }
        var out = GrantSummary(
            id: first.id, client: first.client, prescriptionID: first.prescriptionID, granted: first.granted,
            expires: expires, includesAttachments: a.includesAttachments && b.includesAttachments,
            includesMeasurements: a.includesMeasurements && b.includesMeasurements, lastRead: nil)
        out.stamp = first.stamp
        out.termsStamp =
            sameTerms(out, a) ? a.termsSetBy : sameTerms(out, b) ? b.termsSetBy : try stamp()
        if out.termsStamp == out.stamp { out.termsStamp = nil }
        return out
    }

    static func sameTerms(_ a: GrantSummary, _ b: GrantSummary) -> Bool {
        a.expires == b.expires && a.includesAttachments == b.includesAttachments
            && a.includesMeasurements == b.includesMeasurements
    }
}

extension WriteStamp {
    /// Below every stamp: what a record written before format 8 compares as.
    static let zero = WriteStamp(replica: ReplicaID(bytes: [UInt8](repeating: 0, count: 16))!, clock: 0)
}

extension AttachmentInfo {
    /// The write that attached it (format 8).
    var stamp: WriteStamp? { metadata.by.flatMap(WriteStamp.init(text:)) }
}
