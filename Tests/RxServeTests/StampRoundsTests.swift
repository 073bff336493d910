import RxStore
import Testing

@testable import RxServe
@testable import RxVault

/// `StampRounds`: on a database, one read of the state stamp answers every request that arrived
/// while the previous read was out, and never a request that arrived after a read began (it
/// could miss a revoke committed just before the request). The source here is the test's own,
/// so that it can hold each read open and count them; the reads against a real PostgreSQL are
/// CLITests' (`PostgresVaultTests`: a revoke counts at every server's next request).
@Suite struct StampRoundsTests {
    /// Stamps 1, 2, 3... one per read, each read held until the test lets it go.
    actor HeldStamps: StateStampSource {
        private(set) var reads = 0
        private var held: [CheckedContinuation<Void, Never>] = []

        func stamp() async throws(StoreError) -> (counter: Int, mac: [UInt8])? {
            reads += 1
            let counter = reads
            await withCheckedContinuation { held.append($0) }
            return (counter, [UInt8(counter)])
        }

        var holding: Int { held.count }

        func letOneGo() { if !held.isEmpty { held.removeFirst().resume() } }
    }

    /// Waits (a bounded while) until `condition` holds.
    func eventually(_ condition: () async -> Bool) async throws {
        for _ in 0..<2_000 {
            if await condition() { return }
            try await Task.sleep(for: .milliseconds(1))
        }
        Issue.record("timed out")
    }

    @Test func requestsThatArriveDuringAReadShareTheNextOne() async throws {
        let source = HeldStamps()
        let rounds = StampRounds(reader: StateStampReader(source: source))
        let first = Task { try await rounds.stamp() }
        try await eventually { await source.holding == 1 }
        // Three more arrive while the first read is out: none may take its answer.
        let later = (0..<3).map { _ in Task { try await rounds.stamp() } }
        try await eventually { await rounds.waitingCount == 3 }
        #expect(await source.reads == 1, "a request started a read of its own instead of waiting for the next round")
        await source.letOneGo()
        let answer = try await first.value
        #expect(answer.stamp?.counter == 1 && answer.round == 1)
        // The next read begins when the first returns, for all three at once.
        try await eventually { await source.holding == 1 }
        await source.letOneGo()
        for task in later {
            let fresh = try await task.value
            #expect(fresh.stamp?.counter == 2 && fresh.round == 2, "\(fresh)")
        }
        #expect(await source.reads == 2)
    }

    @Test func aFailedReadFailsItsRoundAndTheNextOneReadsAfresh() async throws {
        actor Failing: StateStampSource {
            var reads = 0
            func stamp() async throws(StoreError) -> (counter: Int, mac: [UInt8])? {
                reads += 1
                if reads == 1 { throw StoreError.unreachable("the server is down") }
                return (reads, [])
            }
        }
        let source = Failing()
        let rounds = StampRounds(reader: StateStampReader(source: source))
        await #expect(throws: VaultError.self) { try await rounds.stamp() }
        let fresh = try await rounds.stamp()
        #expect(fresh.stamp?.counter == 2)
    }
}
