import Testing

@testable import RxVault

/// An export hands its batch over early once the attachments read reach a budget
/// (`Vault.batchAttachmentBytes`, 16 MiB), so a batch of phone photos is never held whole.
@Suite struct ExportHandOverTests {
    /// What `handOver` did: the runs it handed over, and how many elements had been made when
    /// each run was handed over (an element is made only after the run before it went).
    final class Trace {
        var runs: [[Int]] = []
        var madeAtHandOver: [Int] = []
        var made = 0
    }

    func handOver(_ weights: [Int], budget: Int, limit: Int = .max) throws -> Trace {
        let trace = Trace()
        try Vault.handOver(
            weights.indices,
            making: { index in
                trace.made += 1
                return index
            }, weight: { weights[$0] }, budget: budget, limit: limit,
            to: { run in
                trace.runs.append(run)
                trace.madeAtHandOver.append(trace.made)
            })
        return trace
    }

    @Test func aRunEndsAsSoonAsItsWeightReachesTheBudget() throws {
        let trace = try handOver([0, 6, 4, 0, 9, 12, 1, 0], budget: 10)
        #expect(trace.runs == [[0, 1, 2], [3, 4, 5], [6, 7]])
        // Nothing after a full run is made before it is handed over.
        #expect(trace.madeAtHandOver == [3, 6, 8])
    }

    @Test func oneHeavyElementEndsItsRun() throws {
        let trace = try handOver([1, 40, 1], budget: 10)
        #expect(trace.runs == [[0, 1], [2]])
        #expect(try handOver([40], budget: 10).runs == [[0]])
    }

    /// An import's decoding: at most `limit` entries, fewer when they are large.
    @Test func aRunEndsAtTheLimitOrTheBudgetWhicheverComesFirst() throws {
        #expect(try handOver(Array(repeating: 1, count: 7), budget: 100, limit: 3).runs == [[0, 1, 2], [3, 4, 5], [6]])
        #expect(try handOver([1, 1, 50, 1, 1, 1, 1], budget: 50, limit: 3).runs == [[0, 1, 2], [3, 4, 5], [6]])
        #expect(try handOver([60, 1, 1, 1], budget: 50, limit: 3).runs == [[0], [1, 2, 3]])
    }

    @Test func weightlessElementsGoTogetherAndNothingIsAnEmptyRun() throws {
        #expect(try handOver(Array(repeating: 0, count: 5), budget: 10).runs == [[0, 1, 2, 3, 4]])
        #expect(try handOver([], budget: 10).runs.isEmpty)
        #expect(try handOver([10, 10], budget: 10).runs == [[0], [1]])
    }
}
