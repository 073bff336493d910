import Dispatch

extension Array where Element: Sendable {
    /// `transform` of every element, in order, computed on all cores. For work that is
    /// independent per element and large next to a thread hop: opening a batch of sealed
    /// records, writing a batch of JSON documents. `transform` runs on several threads at once,
    /// so it must touch nothing shared that it changes; the results are gathered in order.
    public func concurrentMap<T: Sendable>(_ transform: @Sendable (Element) -> T) -> [T] {
        guard count > 1 else { return map(transform) }
        var results = [T?](repeating: nil, count: count)
        results.withUnsafeMutableBufferPointer { buffer in
            let slots = Slots(base: buffer.baseAddress!)
            self.withUnsafeBufferPointer { elements in
                let source = Source(base: elements.baseAddress!)
                // Each iteration writes only its own slot.
                DispatchQueue.concurrentPerform(iterations: count) { i in
                    slots.base[i] = transform(source.base[i])
                }
            }
        }
        return results.map { $0! }
    }
}

/// The result slots `concurrentMap` fills from several threads, one slot per iteration.
private struct Slots<T>: @unchecked Sendable {
    let base: UnsafeMutablePointer<T?>
}

/// The elements `concurrentMap` reads from several threads (never written while it runs).
private struct Source<T>: @unchecked Sendable {
    let base: UnsafePointer<T>
}
