import RxCrypto
import Testing

@testable import RxVault

/// The recovery code's text form: what is shown reads back to the same secret, and a typing
/// mistake is caught by its group's check character before any key is tried.
@Suite struct RecoveryCodeTests {
    func secret(_ code: RecoveryCode) -> [UInt8] { code.secret.withUnsafeBytes { Array($0) } }

    func typed(_ text: String) -> SecretBytes {
        var bytes = Array(text.utf8)
        return SecretBytes(consuming: &bytes)
    }

    @Test func whatIsShownReadsBackToTheSameSecret() throws {
        for _ in 0..<200 {
            let code = RecoveryCode.generate()
            let text = code.text
            #expect(
                text.count == 47 && text.split(separator: "-").count == 8
                    && text.split(separator: "-").allSatisfy { $0.count == 5 })
            #expect(secret(try RecoveryCode.parse(typed(text))) == secret(code))
            // Lower case, spaces, no dashes, O for 0 and I or L for 1 read the same.
            let sloppy = text.lowercased().replacingOccurrences(of: "-", with: " ").replacingOccurrences(
                of: "0", with: "o"
            )
            .replacingOccurrences(of: "1", with: "l")
            #expect(secret(try RecoveryCode.parse(typed(sloppy))) == secret(code))
        }
    }

    @Test func everySingleMistypedCharacterIsCaughtAndItsGroupNamed() throws {
        let text = Array(RecoveryCode.generate().text)
        for position in text.indices where text[position] != "-" {
            let group = position / 6 + 1
            for replacement in RecoveryCode.alphabet where replacement != text[position] {
                var wrong = text
                wrong[position] = replacement
                #expect(
                    throws: RecoveryCode.Mistake(
                        description:
                            "group \(group) of the recovery code is mistyped (its check character does not match)")
                ) {
                    try RecoveryCode.parse(typed(String(wrong)))
                }
            }
        }
    }

    @Test func aGroupTypedAtAnotherGroupsPlaceIsCaught() throws {
        let groups = RecoveryCode.generate().text.split(separator: "-").map(String.init)
        for a in 0..<8 {
            for b in 0..<8 where a != b && groups[a] != groups[b] {
                var swapped = groups
                swapped.swapAt(a, b)
                #expect(throws: RecoveryCode.Mistake.self) {
                    try RecoveryCode.parse(typed(swapped.joined(separator: "-")))
                }
            }
        }
    }

    @Test func lengthAndAlphabetMistakesSayWhatIsWrong() {
        #expect(
            throws: RecoveryCode.Mistake(
                description: "a recovery code is 8 groups of 5 characters (40 in all); this one has 5")
        ) {
            try RecoveryCode.parse(typed("ABCDE"))
        }
        #expect(
            throws: RecoveryCode.Mistake(
                description: "'U' in group 2 is not a recovery-code character (digits and letters except U)")
        ) {
            try RecoveryCode.parse(typed("00000-U"))
        }
    }

    /// The check value is the documented formula (docs/format.md, SECURITY.md): a fixed vector.
    @Test func theCheckCharacterIsTheDocumentedFormula() throws {
        // Group 0 with data 1, 2, 3, 4: 3 + 10 + 21 + 36 + 0 + 1 = 71 = 7 mod 32 -> "7".
        #expect(RecoveryCode.checkValue(group: 0, data: [1, 2, 3, 4]) == 7)
        // Group 5 with data 31, 0, 0, 0: 93 + 85 + 1 = 179 = 19 mod 32.
        #expect(RecoveryCode.checkValue(group: 5, data: [31, 0, 0, 0]) == 19)
    }
}
