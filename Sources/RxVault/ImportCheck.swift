import RxCrypto
import RxModel
import RxStore

/// One item of an import checked on any thread: what the rules of `add` say of it, whether its
/// attachments match their hashes, its earlier versions as the rules normalise them, and the
/// patient records its name is a near miss of. An import checks a batch of items on all cores
/// this way (`Vault.importItems`), then takes the verdicts in file order on the write's thread,
/// where what depends on the items before (an id seen twice, a name already reported) is decided.
struct ImportCheck: Sendable {
    enum Verdict: Sendable {
        /// The rules refuse the prescription: their violations, each a line.
        case invalid([String])
        /// The rules accept it. `problems`: attachments whose hash does not match, earlier versions
        /// the rules refuse (the item is refused if there are any). `untimed`: earlier versions
        /// whose recorded time is not one rxvault stores (they get the import's time).
        case checked(
            ImportItem, PrescriptionID, Prescription, advisories: [String], problems: [String], untimed: [Int])
    }

    let verdict: Verdict
    /// The records (as they were before the import) the item's patient is a near miss of; nil when
    /// the item names a record of this vault by id, the rules refuse it, or no near-miss check was
    /// asked for.
    let nearMisses: [PatientSummary]?

    /// Checks `item` by the rules as of `today`; with `directory`, also finds the near misses of
    /// its patient's name among the records it holds (`index` is that directory's).
    init(
        _ item: ImportItem, today: CalendarDate, directory: PatientDirectory?,
        index: PatientNearMiss.Index?
    ) {
        let result: CheckedPrescription
        do {
            result = try PrescriptionRules.check(item.prescription, today: today)
        } catch {
            verdict = .invalid(error.violations.map { "\(item.position): \($0)" })
            nearMisses = nil
            return
        }
        // The name as the rules normalise it (trimmed): as it will be stored and compared.
        if let directory, let index {
            nearMisses = Vault.nearMissCandidates(result.prescription.patient, in: directory, index: index)
        } else {
            nearMisses = nil
        }
        var problems: [String] = []
        for (k, attachment) in item.attachments.enumerated() {
            guard let claimed = attachment.sha256 else { continue }
            let actual = SHA256()
            actual.update(attachment.data)
            if actual.finalHex() != claimed {
                problems.append(
                    "\(item.position) attachment \(k) (\(attachment.name)): its SHA-256 does not match its data")
            }
        }
        var item = item
        var untimed: [Int] = []
        for (index, earlier) in item.history.enumerated() {
            do {
                // Earlier versions are stored as the rules normalise them.
                let normalised = try PrescriptionRules.check(earlier.prescription, today: today).prescription
                item.history[index] = (earlier.recorded, normalised)
                if !Vault.isTimestamp(earlier.recorded) { untimed.append(index) }
            } catch {
                problems += error.violations.map { "\(item.position).history[\(index)]: \($0)" }
            }
        }
        verdict = .checked(
            item, item.id ?? Vault.derivedID(result.prescription), result.prescription,
            advisories: result.advisories, problems: problems, untimed: untimed)
    }
}

extension Vault {
    /// Prescriptions an import checks on all cores at a time (`ImportCheck`), and whose new
    /// versions it seals together (`storeUnsealedVersions`); a large import's file is read a
    /// batch ahead of what it has written, so memory stays bounded by this and the items' size.
    static let importBatchSize = 256

    /// The item `check` found acceptable, with the checks that depend on the items before it
    /// made here in file order: an id seen before refuses it ("appears twice"). Nil, with its
    /// problems added to `problems`, when it is refused.
    func checkedItem(
        _ check: ImportCheck, seen: inout Set<String>, problems: inout [String], advisories: inout [String]
    ) -> (ImportItem, PrescriptionID, Prescription)? {
        switch check.verdict {
        case .invalid(let violations):
            problems += violations
            return nil
        case .checked(var item, let id, let prescription, let itemAdvisories, let itemProblems, let untimed):
            guard seen.insert(id.hex).inserted else {
                problems.append("\(item.position): the same prescription appears twice")
                return nil
            }
            problems += itemProblems
            // An earlier version without a well-formed time is stored at the import's time.
            for index in untimed { item.history[index].recorded = clock.timestamp() }
            advisories = itemAdvisories
            return itemProblems.isEmpty ? (item, id, prescription) : nil
        }
    }
}
