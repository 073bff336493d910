import Foundation
import Testing

@testable import RxServe

/// The actors that call the store run their turns on threads of their own (`StoreThread`), so
/// that a call blocked in SQLite's busy handler or on a PostgreSQL round trip holds no thread of
/// Swift's cooperative pool.
@Suite struct StoreThreadTests {
    /// An actor on a `StoreThread`, whose turn blocks until it is let go.
    actor Blocker {
        private nonisolated let thread: StoreThread
        nonisolated var unownedExecutor: UnownedSerialExecutor { thread.asUnownedSerialExecutor() }

        init(name: String) { thread = StoreThread(name: name) }

        var runsOnItsThread: Bool { thread.isCurrent }

        func block(until gate: DispatchSemaphore) {
            gate.wait()
            gate.signal()
        }
    }

    /// More actors blocked at once than the pool has threads: the pool still runs tasks. On the
    /// default executor each blocked turn would hold a pool thread, and nothing would run on the
    /// pool until the gate opens (after 20 s, from a Dispatch timer: a failure fails, not hangs;
    /// the margin is for a machine busy with the other suites).
    @Test func blockedTurnsLeaveThePoolFree() async throws {
        let gate = DispatchSemaphore(value: 0)
        DispatchQueue.global().asyncAfter(deadline: .now() + 20) { gate.signal() }
        let start = ContinuousClock.now
        let blockers = (0...ProcessInfo.processInfo.activeProcessorCount).map { Blocker(name: "blocker-\($0)") }
        for blocker in blockers { Task { await blocker.block(until: gate) } }
        try await Task.sleep(for: .milliseconds(100))
        await Task.detached {}.value
        let waited = ContinuousClock.now - start
        #expect(waited < .seconds(15), "the pool waited \(waited) for actors blocked on their own threads")
        gate.signal()
        #expect(await blockers[0].runsOnItsThread)
    }

    /// The gateway and the audit writer are such actors.
    @Test func theGatewayAndTheWriterRunOnThreadsOfTheirOwn() async throws {
        let vault = try ServedVault()
        try await vault.serve { api in
            #expect(await api.api.gateway.runsOnItsThread)
            #expect(await api.api.writer.runsOnItsThread)
        }
    }
}
