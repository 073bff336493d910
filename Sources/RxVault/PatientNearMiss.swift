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
        let histogram: [Int]
        /// The folded words' characters with the spaces between them.
        let joinedLength: Int
        /// `name.count`, counted once (a String's count walks it).
        let length: Int
        let birthDate: CalendarDate?
        let key: String
        let digits: String
        let words: [String]
        /// False for a name rxvault refuses anyway (`TextField.name`): left to that refusal.
        let comparable: Bool

        /// `name` is compared as a record would store it: trimmed, as the rules trim a name
        /// (a file's "Sam Rivra" followed by a line break is still a near miss of "Sam Rivera").
        init(_ name: String, birthDate: CalendarDate?) {
            let name = name.trimmingCharacters(in: .whitespacesAndNewlines)
            self.name = name
            self.birthDate = birthDate
            key = PatientName.key(name)
            digits = name.filter(\.isNumber)
            words = PatientNearMiss.words(name)
            histogram = PatientNearMiss.histogram(words)
            joinedLength = PatientNearMiss.joinedLength(words)
            length = name.count
            comparable = TextField.name.problem(with: name) == nil && !words.isEmpty
        }

        func isNearMiss(of existing: String, born: CalendarDate?) -> Bool {
            // Folding changes a name's length little; one far longer or shorter is another name,
            // and is not folded at all.
            guard comparable, abs(existing.count - length) <= 12 else { return false }
            return isNearMiss(of: Candidate(existing, born: born))
        }

        func isNearMiss(of existing: Candidate) -> Bool {
            guard comparable else { return false }
            if let birthDate, let born = existing.born, birthDate != born { return false }
            guard abs(existing.length - length) <= 12 else { return false }
            if existing.key == key { return false }
            if existing.digits != digits { return false }
            let other = existing.words
            guard !other.isEmpty else { return false }
            // Each edit moves a character count by at most 2 (a swap by none): a name whose
            // characters differ more is no near miss, found without aligning the two.
            let bound = 2 * allowedEdits(max(joinedLength, existing.joinedLength))
            var apart = 0
            for i in 0..<histogram.count {
                apart += abs(histogram[i] - existing.histogram[i])
                if apart > bound { return false }
            }
            if words == other || words.sorted() == other.sorted() { return true }
            for (x, y) in [(words, other), (words.sorted(), other.sorted())] {
                let s = Array(x.joined(separator: " "))
                let t = Array(y.joined(separator: " "))
                if within(s, t, edits: allowedEdits(max(s.count, t.count))) { return true }
            }
            return false
        }
    }

    /// A record's name made ready once (folded words, key, digits), so an import that compares
    /// many typed names with every record folds each record's name once, not once per name.
    struct Candidate: Sendable {
        let summary: PatientSummary?
        let histogram: [Int]
        let joinedLength: Int
        let born: CalendarDate?
        let length: Int
        let key: String
        let digits: String
        let words: [String]

        init(_ name: String, born: CalendarDate?, summary: PatientSummary? = nil) {
            self.summary = summary
            self.born = born
            length = name.count
            key = PatientName.key(name)
            digits = name.filter(\.isNumber)
            words = PatientNearMiss.words(name)
            histogram = PatientNearMiss.histogram(words)
            joinedLength = PatientNearMiss.joinedLength(words)
        }
    }

    /// `words.joined(separator: " ").count`, without making the string.
    static func joinedLength(_ words: [String]) -> Int {
        words.reduce(max(0, words.count - 1)) { $0 + $1.count }
    }

    /// How often each character occurs in the folded words with their separating spaces, in 64
    /// buckets (a character by its last scalar's value modulo 64): two names `n` edits apart have
    /// counts at most `2n` apart in all.
    static func histogram(_ words: [String]) -> [Int] {
        var counts = [Int](repeating: 0, count: 64)
        counts[Int(UnicodeScalar(" ").value % 64)] = max(0, words.count - 1)
        for word in words {
            for character in word { counts[Int((character.unicodeScalars.last?.value ?? 0) % 64)] += 1 }
        }
        return counts
    }

    /// Every record of a directory as `Candidate`s, by name length: a typed name is compared
    /// only with the records whose length is within the 12 characters `isNearMiss` allows.
    struct Index: Sendable {
        let byLength: [Int: [Candidate]]

        init(_ directory: PatientDirectory) {
            var byLength: [Int: [Candidate]] = [:]
            for summary in directory.records.values {
                let candidate = Candidate(summary.name, born: summary.birthDate, summary: summary)
                byLength[candidate.length, default: []].append(candidate)
            }
            self.byLength = byLength
        }

        /// The records `patient` is a near miss of, by name order.
        func nearMisses(_ patient: Patient) -> [PatientSummary] {
            let probe = Probe(patient.name, birthDate: patient.birthDate)
            guard probe.comparable else { return [] }
            var found: [PatientSummary] = []
            for l in max(0, probe.length - 12)...(probe.length + 12) {
                for candidate in byLength[l] ?? [] where probe.isNearMiss(of: candidate) {
                    found.append(candidate.summary!)
                }
            }
            return PatientDirectory.ordered(found)
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
        return PatientNearMiss.Index(self).nearMisses(patient)
    }

    /// As `nearMisses(_:)`, with the records indexed once by the caller (`import`).
    func nearMisses(_ patient: Patient, index: PatientNearMiss.Index) -> [PatientSummary] {
        guard matching(patient).isEmpty else { return [] }
        return index.nearMisses(patient)
    }
}
