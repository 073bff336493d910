import Foundation

/// Runs `body` for every element of `items`, `width` at a time, each on a thread of its own,
/// and returns the results in the order of `items` (rethrowing the first error in that order).
///
/// For sweeps of independent programs (every command with every hostile path, every mutated
/// copy of a vault): a test that runs them one after another keeps one core busy, and one
/// thread of the test pool waiting on each in turn. The threads here are not the pool's, so the
/// test's own thread just waits for them all. `body` runs off the test's task: it must not
/// record issues (`#expect`); return what it found and check it afterwards, on the test's thread.
public func concurrentMap<T: Sendable, R: Sendable>(
    _ items: [T], width: Int = 4,
    _ body: @escaping @Sendable (T) throws -> R
) throws -> [R] {
    let results = Locked([Result<R, any Error>?](repeating: nil, count: items.count))
    let next = Locked(0)
    let group = DispatchGroup()
    for _ in 0..<max(1, min(width, items.count)) {
        group.enter()
        let thread = Thread {
            while true {
                let index = next.withLock { value -> Int in
                    defer { value += 1 }
                    return value
                }
                guard index < items.count else { break }
                let result = Result { try body(items[index]) }
                results.withLock { $0[index] = result }
            }
            group.leave()
        }
        thread.stackSize = 4 << 20
        thread.start()
    }
    group.wait()
    return try results.withLock { $0 }.map { try $0!.get() }
}

/// A value behind a lock, for results gathered from several threads.
public final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value
    public init(_ value: Value) { self.value = value }
    public func withLock<T>(_ body: (inout Value) throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
