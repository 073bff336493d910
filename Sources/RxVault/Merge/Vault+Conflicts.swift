import RxModel

/// A prescription both copies of the vault changed (issue 48): the merge version that chose
/// between the edits, and the edits it chose between.
public struct PrescriptionConflict: Sendable {
    public let id: PrescriptionID
    /// The merge's version: what the prescription reads as until resolved.
    public let current: PrescriptionRecord
    /// The competing versions (each copy's edit), oldest first.
    public let competing: [PrescriptionRecord]
}

/// How `resolve` chooses (CareKit's conflict policies, and a version by number).
public enum ConflictChoice: Sendable, Equatable {
    /// The edit this computer made (one of its replicas' versions).
    case mine
    /// The other copy's edit.
    case theirs
    /// What the merge already shows: the newest edit, or the newest that withdrew the
    /// prescription when one did (`VersionHistoryMerge.chosen`).
    case newest
    case version(Int)
}

extension Vault {
    /// Every prescription in conflict, by id: those the search index marks (`SearchIndex.inConflict`),
    /// each opened with its history; no other record is opened.
    public func conflicts() throws(VaultError) -> [PrescriptionConflict] {
        let marked: [PrescriptionID]
        do {
            marked = try indexSnapshot().rows.filter { $0.eyes & SearchIndex.inConflict != 0 }.map(SearchIndex.id)
        } catch {
            throw VaultError.wrap(error)
        }
        return try reading { read in
            var out: [PrescriptionConflict] = []
            for id in marked.sorted() {
                let head = try prescription(id, in: read)
                guard head.conflict != nil else { continue }
                out.append(try conflict(head, in: read))
            }
            return out
        }
    }

    /// How many prescriptions are in conflict, from the search index's marks (no record opened).
    public func conflictCount() throws(VaultError) -> Int {
        do {
            return try indexSnapshot().rows.reduce(0) { $0 + ($1.eyes & SearchIndex.inConflict != 0 ? 1 : 0) }
        } catch {
            throw VaultError.wrap(error)
        }
    }

    private func conflict(_ head: PrescriptionRecord, in access: any StateAccess) throws -> PrescriptionConflict {
        let names = Set(head.conflict ?? [])
        let history = try history(head.id, in: access)
        return PrescriptionConflict(
            id: head.id, current: head, competing: history.filter { names.contains($0.identity) })
    }

    /// Ends a conflict: a new version whose content is the chosen edit and whose parent is the
    /// merge's version, so every copy that merges it sees the conflict ended. Refused (65) for a
    /// prescription not in conflict, or a choice that names no competing version.
    @discardableResult
    public func resolve(_ id: PrescriptionID, keeping choice: ConflictChoice) throws(VaultError) -> PrescriptionRecord {
        let own = anchor?.knowledge(header.vaultIDHex)?.own ?? []
        return try perform { write in
            guard let row = try store.latestVersion(of: id) else { throw VaultError.notFound(id: id.short) }
            try touch(id.hex, in: write)
            let head = try open(row, in: write)
            guard head.conflict != nil else {
                throw VaultError.invalidInput("prescription \(id.short) is not in conflict")
            }
            let found = try conflict(head, in: write)
            let mine = found.competing.filter { $0.by.map { own.contains($0.replica) } ?? false }
            let kept: PrescriptionRecord?
            switch choice {
            case .newest: kept = VersionHistoryMerge.chosen(found.competing)
            case .mine: kept = mine.count == 1 ? mine[0] : nil
            case .theirs:
                let theirs = found.competing.filter { c in !mine.contains { $0.identity == c.identity } }
                kept = mine.count == 1 && theirs.count == 1 ? theirs[0] : nil
            case .version(let number): kept = found.competing.first { $0.version == number }
            }
            guard let kept else {
                let numbers = found.competing.map { String($0.version) }.joined(separator: ", ")
                throw VaultError.invalidInput(
                    "that names none of the competing versions of \(id.short) (versions \(numbers); 'mine' and 'theirs' need one edit made on this computer)"
                )
            }
            var resolved = PrescriptionRecord(
                id: id, version: head.version + 1, recorded: clock.timestamp(), prescription: kept.prescription)
            resolved.change = "resolved: kept version \(kept.version)"
            resolved.parents = [head.identity]
            let stored = try storeVersion(resolved, in: write)
            try resealGrants(of: id, previousVersion: head.version, in: write)
            return stored
        }
    }
}
