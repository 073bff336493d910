import Foundation
import RxModel

/// Whether a name typed for a patient the vault does not hold looks like a slip for one it does
/// (docs/guide.md, "Patients"): `add --patient "Sam Rivra"` when "Sam Rivera" exists would
/// otherwise quietly start a second record for one person, and their prescriptions would be
/// split between the two.
///
/// The names are compared folded: case, accents ("Rivéra"), width and punctuation ("Mary-Ann",
/// "O'Neil") do not count. A near miss is then the same words in another order ("Rivera Sam"),
/// or a few typed characters apart (insertions, deletions, substitutions, swapped neighbours):
/// none under 6 characters, where one letter makes another name ("Sam", "Pam"); one under 12;
/// two under 20; three beyond. A name equal to an existing one (by `PatientName.key`, the rule
/// that links it) is never a near miss: it is that patient. Two birth dates that differ mean two
/// people, whatever the names; so do different numbers in them ("Baby 1", "Baby 2": twins, or
/// numbered records), and a name rxvault would refuse anyway (`TextField.name`) is left to that
/// refusal.
public enum PatientNearMiss {
    /// Whether `typed` is a near miss of the record named `existing`.
    public static func isNearMiss(
        _ typed: String, birthDate: CalendarDate? = nil, of existing: String, born: CalendarDate? = nil
    ) -> Bool {
        Probe(typed, birthDate: birthDate).isNearMiss(of: existing, born: born)
    }

    /// A typed name made ready once for comparing with every record's (`add` compares it with all
    /// of them): its key, digits and folded words.
    struct Probe {
        let name: String
        let birthDate: CalendarDate?
        let key: String
        let digits: String
        let words: [String]
        /// False for a name rxvault refuses anyway (`TextField.name`): left to that refusal.
        let comparable: Bool

        init(_ name: String, birthDate: CalendarDate?) {
            self.name = name
            self.birthDate = birthDate
            key = PatientName.key(name)
            digits = name.filter(\.isNumber)
            words = PatientNearMiss.words(name)
            comparable = TextField.name.problem(with: name) == nil && !words.isEmpty
        }

        func isNearMiss(of existing: String, born: CalendarDate?) -> Bool {
            guard comparable else { return false }
            if let birthDate, let born, birthDate != born { return false }
            // Folding changes a name's length little; one far longer or shorter is another name,
            // and is not folded at all.
            guard abs(existing.count - name.count) <= 12 else { return false }
            if PatientName.key(existing) == key { return false }
            if existing.filter(\.isNumber) != digits { return false }
            let other = PatientNearMiss.words(existing)
            guard !other.isEmpty else { return false }
            if words == other || words.sorted() == other.sorted() { return true }
            for (x, y) in [(words, other), (words.sorted(), other.sorted())] {
                let s = Array(x.joined(separator: " "))
                let t = Array(y.joined(separator: " "))
                if within(s, t, edits: allowedEdits(max(s.count, t.count))) { return true }
            }
            return false
        }
    }

    /// The edits a name of `length` characters may be away from another to be a near miss.
    static func allowedEdits(_ length: Int) -> Int {
        switch length {
        case ..<6: return 0
        case ..<12: return 1
        case ..<20: return 2
        default: return 3
        }
    }

    /// The name's words, folded: lower case, without accents or width, split at anything that is
    /// not a letter or digit.
    static func words(_ name: String) -> [String] {
        name.folding(options: [.caseInsensitive, .diacriticInsensitive, .widthInsensitive], locale: nil)
            .lowercased()
            .split(whereSeparator: { !$0.isLetter && !$0.isNumber }).map(String.init)
    }

    /// Whether `s` and `t` are at most `edits` apart (optimal string alignment: insertions,
    /// deletions, substitutions and swaps of neighbours). Only the band of `edits` cells either
    /// side of the diagonal is computed, so comparing one name with every record stays cheap.
    static func within(_ s: [Character], _ t: [Character], edits: Int) -> Bool {
        guard abs(s.count - t.count) <= edits else { return false }
        if edits == 0 { return s == t }
        let big = edits + 1
        let width = t.count + 1
        var before = [Int](repeating: big, count: width) // row i-2
        var previous = (0..<width).map { min($0, big) } // row i-1
        for i in 1...max(s.count, 1) where !s.isEmpty {
            var current = [Int](repeating: big, count: width)
            current[0] = min(i, big)
            var best = current[0]
            let low = max(1, i - edits)
            let high = min(t.count, i + edits)
            if low <= high {
                for j in low...high {
                    let cost = s[i - 1] == t[j - 1] ? 0 : 1
                    var value = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
                    if i > 1, j > 1, s[i - 1] == t[j - 2], s[i - 2] == t[j - 1] {
                        value = min(value, before[j - 2] + 1)
                    }
                    current[j] = min(value, big)
                    best = min(best, current[j])
                }
            }
            if best > edits { return false }
            before = previous
            previous = current
        }
        return previous[t.count] <= edits
    }
}

extension PatientDirectory {
    /// The records `patient` (typed as free text, matching none by `matching`) is a near miss of,
    /// by name order. Empty when some record matches it: then it is that patient.
    func nearMisses(_ patient: Patient) -> [PatientSummary] {
        guard matching(patient).isEmpty else { return [] }
        let probe = PatientNearMiss.Probe(patient.name, birthDate: patient.birthDate)
        guard probe.comparable else { return [] }
        return Self.ordered(records.values.filter { probe.isNearMiss(of: $0.name, born: $0.birthDate) })
    }
}
