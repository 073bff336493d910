import Foundation
import RxModel
import Testing

/// `concurrentMap` runs the transform on several threads and must give `map`'s answer: every
/// element once, in order, however the iterations are spread.
@Suite struct ConcurrentMapTests {
    @Test(arguments: [0, 1, 2, 3, 255, 256, 10_000])
    func givesMapsAnswerInOrder(count: Int) {
        let values = (0..<count).map { $0 * 7 + 3 }
        let transform: @Sendable (Int) -> String = { "\($0 % 97)-\($0)" }
        #expect(values.concurrentMap(transform) == values.map(transform))
    }

    @Test func eachElementIsTransformedOnce() {
        let calls = Counter()
        let values = Array(0..<5_000)
        let doubled = values.concurrentMap { value -> Int in
            calls.increment()
            return value * 2
        }
        #expect(doubled == values.map { $0 * 2 })
        #expect(calls.value == values.count)
    }
}

/// A counter several threads increment.
private final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    func increment() { lock.withLock { count += 1 } }
    var value: Int { lock.withLock { count } }
}
