extension RandomAccessCollection where Index == Int {
    /// The elements in consecutive slices of `size` (the last may be shorter), in order: the
    /// batches a bulk read or write works through, so what it holds at once stays bounded.
    public func chunks(of size: Int) -> [SubSequence] {
        precondition(size > 0, "a chunk holds at least one element")
        return stride(from: startIndex, to: endIndex, by: size).map { self[$0..<Swift.min($0 + size, endIndex)] }
    }
}
