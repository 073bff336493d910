/// Which write made a record (issue 48): the replica that wrote it and that replica's clock for
/// the write, sealed inside the record (format 8). A merge asks one question of it: has the other
/// copy seen this write (`isSeen(by:)`)? A record one copy lacks was then removed there, not
/// yet written there, which is how a revocation or removal on one side is never undone by a
/// merge (CareKit's knowledge vectors answer the same question the same way).
///
/// Written as `REPLICAHEX:CLOCK` in the sealed JSON of each record kind.
public struct WriteStamp: Hashable, Comparable, Sendable, CustomStringConvertible {
    public let replica: ReplicaID
    public let clock: UInt64

    public init(replica: ReplicaID, clock: UInt64) {
        self.replica = replica
        self.clock = clock
    }

    public init?(text: String) {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, let replica = ReplicaID(hex: String(parts[0])), let clock = UInt64(parts[1]),
            clock > 0
        else { return nil }
        self.init(replica: replica, clock: clock)
    }

    public var text: String { "\(replica.hex):\(clock)" }
    public var description: String { "\(replica.short):\(clock)" }

    /// Whether a state with `knowledge` holds this write.
    public func isSeen(by knowledge: KnowledgeVector) -> Bool { knowledge[replica] >= clock }

    public static func < (a: WriteStamp, b: WriteStamp) -> Bool {
        a.replica == b.replica ? a.clock < b.clock : a.replica < b.replica
    }
}
