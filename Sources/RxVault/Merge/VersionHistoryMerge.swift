import RxModel

/// One prescription's versions in two copies of the vault, joined (issue 48; docs/format.md,
/// "Merge rules"). Pure: it decides, `Vault.merge` writes.
///
/// Every version either copy wrote is kept, named by its `identity` (its write's stamp, or its
/// number for a version written before format 8, when no copy could diverge yet). The history is
/// the versions in an order in which each comes after its parents (`PrescriptionRecord.parents`,
/// else the version before it), ties broken by when they were recorded and then by identity, so
/// every copy that holds the same versions orders them the same way. When each copy wrote a
/// version the other has not seen, the history has two heads; a merge version then joins them,
/// its content the one edit if only one copy edited (a re-key only seals the same content
/// again), else the newest edit (the newest withdrawing one, when an edit withdrew it: `chosen`),
/// and the prescription is **in conflict** until resolved.
struct VersionHistoryMerge {
    /// The joined history, oldest first, numbered as it will be stored.
    var versions: [PrescriptionRecord]
    /// How many of `ours` keep their place (and their rows): the rest are written again.
    var keptPrefix: Int
    /// A version to write on top (nil when one head already stands): it joins the heads.
    var mergeVersion: PrescriptionRecord?
    /// Identities of the competing edits when both copies edited (empty: no conflict).
    var conflict: [String]
    /// How many versions the other copy brings that this one lacked.
    var broughtIn: Int

    /// Nil when `theirs` holds nothing `ours` lacks.
    init?(ours: [PrescriptionRecord], theirs: [PrescriptionRecord], recorded: String) {
        let ourIDs = Set(ours.map(\.identity))
        let newFromThem = theirs.filter { !ourIDs.contains($0.identity) }
        guard !newFromThem.isEmpty else { return nil }
        broughtIn = newFromThem.count
        var byIdentity: [String: PrescriptionRecord] = [:]
        var parents: [String: [String]] = [:]
        for side in [theirs, ours] {
            for (i, record) in side.enumerated() {
                byIdentity[record.identity] = record
                parents[record.identity] = record.parents ?? (i > 0 ? [side[i - 1].identity] : [])
            }
        }
        let order = Self.ordered(byIdentity, parents: parents)
        let referenced = Set(parents.values.flatMap { $0 })
        let heads = order.filter { !referenced.contains($0.identity) }
        var versions = order
        keptPrefix = zip(ours, order).prefix { $0.identity == $1.identity }.count
        conflict = []
        mergeVersion = nil
        if heads.count > 1, Set(heads.map(\.prescription.fingerprint)).count > 1 {
            // A head whose content some version both copies hold already had is a re-key (or no
            // change): only the others are edits.
            let theirIDs = Set(theirs.map(\.identity))
            let before = Set(
                order.filter { ourIDs.contains($0.identity) && theirIDs.contains($0.identity) }
                    .map(\.prescription.fingerprint))
            let edits = heads.filter { !before.contains($0.prescription.fingerprint) }
            let candidates = edits.isEmpty ? heads : edits
            let chosen = Self.chosen(candidates)
            if Set(edits.map(\.prescription.fingerprint)).count > 1 { conflict = edits.map(\.identity).sorted() }
            var joined = PrescriptionRecord(
                id: chosen.id, version: order.count + 1, recorded: recorded, prescription: chosen.prescription)
            joined.change =
                conflict.isEmpty
                ? "merged"
                : chosen.identity == Self.newest(candidates).identity
                    ? "merged: both copies changed it"
                    : "merged: both copies changed it; the \(chosen.prescription.recordStatus.rawValue) status kept"
            joined.parents = heads.map(\.identity).sorted()
            // The content of a head still in conflict (a merge's, or its re-key) is taken with
            // its conflict: only `resolve` ends one, whatever order the copies merge in.
            joined.conflict = conflict.isEmpty ? chosen.conflict : conflict
            mergeVersion = joined
        }
        for i in versions.indices where i >= keptPrefix {
            versions[i] = versions[i].renumbered(i + 1, parents: parents[versions[i].identity] ?? [])
        }
        self.versions = versions
    }

    /// Kahn's order: each version after its parents, the earliest recorded first among those ready.
    static func ordered(_ records: [String: PrescriptionRecord], parents: [String: [String]]) -> [PrescriptionRecord] {
        var waiting = parents.mapValues { Set($0.filter { records[$0] != nil }) }
        var children: [String: [String]] = [:]
        for (child, its) in waiting { for parent in its { children[parent, default: []].append(child) } }
        var ready = waiting.filter(\.value.isEmpty).map(\.key)
        var out: [PrescriptionRecord] = []
        while !ready.isEmpty {
            ready.sort { sortKey(records[$0]!) > sortKey(records[$1]!) }
            let next = ready.removeLast()
            out.append(records[next]!)
            for child in children[next] ?? [] {
                waiting[child]?.remove(next)
                if waiting[child]?.isEmpty == true { ready.append(child) }
            }
            waiting[next] = nil
        }
        // A cycle (parents no copy could have written) leaves versions waiting: after the rest.
        out += waiting.keys.sorted().compactMap { records[$0] }
        return out
    }

    static func sortKey(_ record: PrescriptionRecord) -> (String, String) { (record.recorded, record.identity) }

    static func newest(_ records: [PrescriptionRecord]) -> PrescriptionRecord {
        records.max { sortKey($0) < sortKey($1) }!
    }

    /// The edit a merge version reads as: the newest, unless an edit withdrew the prescription
    /// (cancelled, draft, entered in error), when the newest of those. A withdrawal is a
    /// protection, as a revocation is: an edit made concurrently on another copy must not make
    /// the prescription valid again. The other edits stay in the history, and the prescription
    /// in conflict.
    static func chosen(_ records: [PrescriptionRecord]) -> PrescriptionRecord {
        let withdrawn = records.filter { $0.prescription.recordStatus.isWithdrawn }
        return newest(withdrawn.isEmpty ? records : withdrawn)
    }
}

extension PrescriptionRecord {
    /// The same version at another place in the history; its parents said outright, since the
    /// version before it by number may no longer be its parent.
    func renumbered(_ number: Int, parents: [String]) -> PrescriptionRecord {
        var copy = PrescriptionRecord(id: id, version: number, recorded: recorded, prescription: prescription)
        (copy.change, copy.by, copy.parents, copy.conflict) = (change, by, parents, conflict)
        return copy
    }
}

extension Prescription {
    /// What a merge compares of two versions' content: the prescription as sealed (its patient
    /// by record id only, since each copy fills in the patient from its own records).
    var fingerprint: [UInt8] {
        var bare = self
        bare.patient = Patient(name: "", id: patient.id)
        var w = JSONWriter(style: .compact, capacity: 512, escapeSlashes: true)
        do { try bare.writeJSON(to: &w) } catch { return [] }
        return w.bytes
    }
}
