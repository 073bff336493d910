import Foundation
import Testing

/// Shrinks a failing random life to the few steps that matter: takes steps away (halves, then
/// quarters, ... then single steps) while the life still fails, within `seconds`. `failedAt`
/// says how many steps had run when a failure came (the steps after it never ran, and go
/// first); `outcome` runs a candidate, nil when it holds. Returns the smallest failing steps
/// and their failure. (`WholeLifeTests`, `DeviceLivesTests`.)
func shrinking<Step, Failure>(
    _ steps: [Step], _ failure: Failure, within seconds: Double, failedAt: (Failure) -> Int,
    outcome: ([Step]) -> Failure?
) -> ([Step], Failure) {
    let deadline = Date().addingTimeInterval(seconds)
    var best = Array(steps.prefix(failedAt(failure)))
    var last = failure
    var chunk = max(1, best.count / 2)
    while chunk >= 1 && Date() < deadline {
        var index = 0
        var removedAny = false
        while index < best.count && Date() < deadline {
            var candidate = best
            candidate.removeSubrange(index..<min(index + chunk, candidate.count))
            if let again = outcome(candidate) {
                best = Array(candidate.prefix(failedAt(again)))
                last = again
                removedAny = true
            } else {
                index += chunk
            }
        }
        if !removedAny || chunk > 1 { chunk /= 2 }
    }
    return (best, last)
}

@Suite struct ShrinkingTests {
    /// A life that fails only when it holds steps 3 and 17 (the failure coming at the step after
    /// the later of them) shrinks to exactly those two.
    @Test func aFailingLifeShrinksToTheStepsThatMakeItFail() {
        func outcome(_ steps: [Int]) -> Int? {
            guard let three = steps.firstIndex(of: 3), let later = steps.firstIndex(of: 17), three < later else {
                return nil
            }
            return later + 1
        }
        let steps = Array(0..<40)
        let (shrunk, failedAt) = shrinking(steps, outcome(steps)!, within: 30, failedAt: { $0 }, outcome: outcome)
        #expect(shrunk == [3, 17] && failedAt == 2)
    }
}
