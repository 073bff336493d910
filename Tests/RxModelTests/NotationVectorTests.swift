import Foundation
import RxModel
import Testing

/// Fixtures/notation/vectors.tsv: every way of writing a lens rxvault must read, with the
/// canonical form it prints back (which must itself read back the same), or the refusal it gives.
@Suite struct NotationVectorTests {
    static let vectorsPath = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/notation/vectors.tsv").path

    static func vectors() throws -> [(input: String, expected: String)] {
        let text = try String(contentsOfFile: vectorsPath, encoding: .utf8)
        return text.split(separator: "\n", omittingEmptySubsequences: true).compactMap { line in
            guard !line.hasPrefix("#") else { return nil }
            let parts = line.split(separator: "\t", maxSplits: 1, omittingEmptySubsequences: false)
            return parts.count == 2 ? (String(parts[0]), String(parts[1])) : nil
        }
    }

    @Test func everyVectorReadsAsExpected() throws {
        let vectors = try Self.vectors()
        #expect(vectors.count >= 40)
        for (input, expected) in vectors {
            if expected.hasPrefix("error: ") {
                let needle = String(expected.dropFirst("error: ".count))
                do {
                    let lens = try LensNotation.parse(input)
                    Issue.record(
                        "'\(input)' was read as '\(LensNotation.format(lens))', expected an error containing '\(needle)'"
                    )
                } catch {
                    #expect(error.description.contains(needle), "'\(input)': got '\(error.description)'")
                }
            } else {
                let lens = try LensNotation.parse(input)
                let canonical = LensNotation.format(lens)
                #expect(canonical == expected, "'\(input)'")
                // A zero cylinder written with an axis is read as written, for the rules to store
                // the lens as spherical (with a warning); the canonical form is that spherical lens.
                var stored = lens
                if stored.cylinder?.isZero == true {
                    stored.cylinder = nil
                    stored.axis = nil
                }
                #expect(try LensNotation.parse(canonical) == stored, "canonical form of '\(input)' reads back the same")
            }
        }
    }
}
