import Foundation
import RxModel
import Testing

@testable import RxVault

/// The near-miss measure itself (`PatientNearMiss`): the banded edit distance agrees with the
/// full one, and the rule's cases (CLITests/PatientNearMissTests has them through the binary).
@Suite struct PatientNearMissMeasureTests {
    /// Optimal string alignment distance, the whole table: what the band must agree with.
    static func distance(_ s: [Character], _ t: [Character]) -> Int {
        var d = [[Int]](repeating: [Int](repeating: 0, count: t.count + 1), count: s.count + 1)
        for i in 0...s.count { d[i][0] = i }
        for j in 0...t.count { d[0][j] = j }
        for i in stride(from: 1, through: s.count, by: 1) {
            for j in stride(from: 1, through: t.count, by: 1) {
                let cost = s[i - 1] == t[j - 1] ? 0 : 1
                d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost)
                if i > 1, j > 1, s[i - 1] == t[j - 2], s[i - 2] == t[j - 1] {
                    d[i][j] = min(d[i][j], d[i - 2][j - 2] + 1)
                }
            }
        }
        return d[s.count][t.count]
    }

    @Test func theBandAgreesWithTheWholeTable() {
        var generator = SystemRandomNumberGenerator()
        let letters = Array("abc ")
        for _ in 0..<3000 {
            let s = (0..<Int.random(in: 0...9, using: &generator)).map { _ in letters.randomElement()! }
            let t = (0..<Int.random(in: 0...9, using: &generator)).map { _ in letters.randomElement()! }
            let full = Self.distance(s, t)
            for edits in 0...3 {
                #expect(PatientNearMiss.within(s, t, edits: edits) == (full <= edits), "\(s) \(t) \(edits)")
            }
        }
    }

    /// `PatientName.key`'s ASCII path gives what the Unicode path gives, for every ASCII byte
    /// (control characters, every kind of white space, runs of it, at either end), and leaves
    /// every other name to the Unicode path.
    @Test func theASCIIKeyIsTheUnicodeKey() {
        var generator = SystemRandomNumberGenerator()
        let ascii = (0..<128).map { Character(Unicode.Scalar(UInt8($0))) }
        let likely = Array("aZ zQ-'.\t\n\r\u{0B}\u{0C}\u{1C}\u{1F}")
        for _ in 0..<5000 {
            let name = String(
                (0..<Int.random(in: 0...12, using: &generator)).map { _ in
                    Bool.random(using: &generator) ? ascii.randomElement()! : likely.randomElement()!
                })
            let unicode = name.split(whereSeparator: \.isWhitespace).joined(separator: " ").lowercased()
            #expect(PatientName.asciiKey(name) == unicode, "\(Array(name.utf8))")
        }
        #expect(PatientName.asciiKey("Zoë Ångström") == nil)
        #expect(PatientName.key(" Zoë\u{00A0} ÅNGSTRÖM ") == "zoë ångström")
        #expect(PatientName.key("\r\n  Ana \t LIMA\r\n") == "ana lima")
    }

    @Test func theRule() {
        let near: [(String, String)] = [
            ("Sam Rivra", "Sam Rivera"), ("Rivera Sam", "Sam Rivera"), ("sam rivéra", "Sam Rivera"),
            ("Sam-Rivera", "Sam Rivera"), ("Sam Rievra", "Sam Rivera"), ("Quintesa Marlowe", "Quintessa Marlowe"),
            ("Mary Ann O'Neil", "Mary-Ann ONeil")
        ]
        for (typed, existing) in near {
            #expect(PatientNearMiss.isNearMiss(typed, of: existing), "\(typed) / \(existing)")
        }
        let apart: [(String, String)] = [
            ("Sam Rivera", "Sam Rivera"), ("sam  RIVERA", "Sam Rivera"), ("Pam", "Sam"), ("Mia Chen", "Max Chen"),
            ("Sara Rivera", "Sam Rivera"), ("Baby 1", "Baby 2"), ("Patient Number 12", "Patient Number 13"),
            ("Ana Lima", "Ana Luna Lima Costa")
        ]
        for (typed, existing) in apart {
            #expect(!PatientNearMiss.isNearMiss(typed, of: existing), "\(typed) / \(existing)")
        }
        let day = CalendarDate(iso: "1984-05-12")!
        let other = CalendarDate(iso: "1990-01-01")!
        #expect(!PatientNearMiss.isNearMiss("Sam Rivra", birthDate: other, of: "Sam Rivera", born: day))
        #expect(PatientNearMiss.isNearMiss("Sam Rivra", birthDate: day, of: "Sam Rivera", born: day))
        #expect(PatientNearMiss.isNearMiss("Sam Rivra", birthDate: nil, of: "Sam Rivera", born: day))
        // A name is compared as it would be stored, trimmed (a file's patient record, a line).
        #expect(PatientNearMiss.isNearMiss("Sam Rivra\n", of: "Sam Rivera"))
        #expect(PatientNearMiss.isNearMiss("  Sam Rivra ", of: "Sam Rivera"))
        #expect(!PatientNearMiss.isNearMiss("Sam Rivera\n", of: "Sam Rivera"))
    }
}
