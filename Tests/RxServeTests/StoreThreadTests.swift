import Foundation
import Testing

@testable import RxServe

/// The actors that call the store run their turns on threads of their own (`StoreThread`), so
/// that a call blocked in SQLite's busy handler or on a PostgreSQL round trip holds no thread of
/// Swift's cooperative pool.
///
/// What is checked is where the turns run, not how long the pool takes to run something else:
/// the suites beside this one block pool threads themselves (waiting for processes), so a timing
/// would measure them.
@Suite struct StoreThreadTests {
    /// An actor on a `StoreThread` that counts turns in progress.
    actor Probe {
        private nonisolated let thread = StoreThread(name: "probe")
        nonisolated var unownedExecutor: UnownedSerialExecutor { thread.asUnownedSerialExecutor() }

        private var inTurn = 0
        private(set) var overlapped = false

        var runsOnItsThread: Bool { thread.isCurrent }

        /// A turn that blocks its thread a moment, as a store call does.
        func block() -> Bool {
            inTurn += 1
            if inTurn > 1 { overlapped = true }
            Thread.sleep(forTimeInterval: 0.002)
            inTurn -= 1
            return thread.isCurrent
        }
    }

    /// Every turn runs on the actor's thread, never the pool's, and one at a time.
    @Test func turnsRunOnTheActorsThreadOneAtATime() async {
        let probe = Probe()
        let onItsThread = await withTaskGroup(of: Bool.self) { group in
            for _ in 0..<40 { group.addTask { await probe.block() } }
            return await group.reduce(true) { $0 && $1 }
        }
        #expect(onItsThread)
        #expect(await !probe.overlapped)
        #expect(await probe.runsOnItsThread)
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
