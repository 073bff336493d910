import RxModel

/// Which prescriptions a newer one replaces (the `superseded` status; docs/format.md).
///
/// A prescription is superseded when another of the same kind for the same patient, not
/// withdrawn, was issued on a later day. Same patient is the patient's name as `add` compares
/// it (case and runs of white space ignored) with the same birth date, the rule `--latest`
/// groups by: in a format-4 vault every prescription of a patient record carries that
/// record's name and birth date, so it is the vault's patient. Two issued on the same day both
/// stand (distance and reading glasses are often written together): neither replaces the other.
///
/// Derived on every read from the set the reader can see, never stored: a client app sees a
/// prescription superseded only by one it was also granted, so the status tells it nothing of
/// prescriptions it cannot read.
public enum Supersession {
    /// For each of `targets` that one of `all` supersedes: the newest that does (by issue date,
    /// then id). Withdrawn targets are left out: withdrawn says more than superseded.
    ///
    /// Kind, birth date and issue date are compared first (numbers on an index row), so the
    /// names of only the few candidates left are read.
    public static func superseding<T: FilterSubject, S: FilterSubject>(_ targets: [T], among all: some Sequence<S>)
        -> [PrescriptionID: PrescriptionID]
    {
        // Loops, not `filter`: a query's targets are whole records, thousands of them, and
        // copying them into filtered arrays was a quarter of this function's time.
        var earliest: CalendarDate?
        var wanted = Set<Numbers>()
        for target in targets where !target.recordStatus.isWithdrawn {
            earliest = min(earliest ?? target.issued, target.issued)
            wanted.insert(Numbers(kind: target.kind, birthDate: target.birthDate))
        }
        guard let earliest else { return [:] }
        var newest: [Group: (issued: CalendarDate, id: PrescriptionID)] = [:]
        for item in all
        where item.issued > earliest && !item.recordStatus.isWithdrawn
            && wanted.contains(Numbers(kind: item.kind, birthDate: item.birthDate))
        {
            let group = Group(item)
            let candidate = (item.issued, item.subjectID)
            if let other = newest[group], (other.issued, other.id) >= (candidate.0, candidate.1) { continue }
            newest[group] = candidate
        }
        guard !newest.isEmpty else { return [:] }
        var result: [PrescriptionID: PrescriptionID] = [:]
        for target in targets where !target.recordStatus.isWithdrawn {
            guard let newer = newest[Group(target)], newer.issued > target.issued else { continue }
            result[target.subjectID] = newer.id
        }
        return result
    }

    /// What `superseding` compares before reading a name.
    private struct Numbers: Hashable {
        let kind: PrescriptionKind
        let birthDate: CalendarDate?
    }

    /// One patient's prescriptions of one kind.
    private struct Group: Hashable {
        let name: String
        let birthDate: CalendarDate?
        let kind: PrescriptionKind

        init(_ item: some FilterSubject) {
            name = PatientName.key(item.patientName)
            birthDate = item.birthDate
            kind = item.kind
        }
    }
}

extension Vault {
    /// Which of `records` a newer prescription in the vault supersedes (`Supersession`), read
    /// from the search index: nothing else is decrypted.
    public func supersession(of records: [PrescriptionRecord]) throws(VaultError) -> [PrescriptionID: PrescriptionID] {
        guard !records.isEmpty else { return [:] }
        do {
            let snapshot = try indexSnapshot()
            let all = snapshot.rows.lazy.map { IndexSubject(row: $0, snapshot: snapshot) }
            return Supersession.superseding(records, among: all)
        } catch let error as VaultError {
            throw error
        } catch {
            throw VaultError.wrap(error)
        }
    }
}

extension ClientVault {
    /// Which of `records` a newer prescription granted to this client supersedes. Not logged as
    /// a read: it shows nothing of them, only which of those already read is replaced.
    public func supersession(of records: [PrescriptionRecord]) throws(VaultError) -> [PrescriptionID: PrescriptionID] {
        guard !records.isEmpty else { return [:] }
        var all: [PrescriptionRecord] = []
        for id in granted.keys.sorted() { all.append(try record(id)) }
        return Supersession.superseding(records, among: all)
    }
}
