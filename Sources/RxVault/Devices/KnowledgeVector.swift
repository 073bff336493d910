/// What one state of the vault holds of every replica's writes: replica -> the clock of the
/// newest of its writes included (all before it are included too). CareKitStore's knowledge
/// vectors, for the same reason: two states of one vault compare by it without a common
/// counter, so "a later state of what this device saw", "an older copy" and "another line of
/// history" are told apart (`Relation`), and a merge or a sync knows which writes each side
/// lacks (`lacking`).
///
/// Kept in the state root (format 8), so it is MAC'd with everything the root pins.
public struct KnowledgeVector: Hashable, Sendable {
    public private(set) var clocks: [ReplicaID: UInt64]

    public init(_ clocks: [ReplicaID: UInt64] = [:]) {
        self.clocks = clocks.filter { $0.value > 0 }
    }

    public static let empty = KnowledgeVector()

    /// The newest of `replica`'s writes this state holds (0: none).
    public subscript(replica: ReplicaID) -> UInt64 { clocks[replica] ?? 0 }

    /// How many writes of every replica this state holds.
    public var total: UInt64 { clocks.values.reduce(0, +) }

    /// Counts one more write by `replica` and returns its clock.
    @discardableResult
    public mutating func advance(_ replica: ReplicaID) -> UInt64 {
        let next = self[replica] + 1
        clocks[replica] = next
        return next
    }

    /// What both states hold together (each replica's newest of the two): the knowledge of a
    /// state merged from them.
    public func merged(with other: KnowledgeVector) -> KnowledgeVector {
        KnowledgeVector(clocks.merging(other.clocks, uniquingKeysWith: max))
    }

    /// Every write `other` holds, this holds too.
    public func includes(_ other: KnowledgeVector) -> Bool {
        other.clocks.allSatisfy { self[$0.key] >= $0.value }
    }

    /// The writes `other` holds that this lacks, per replica (first and last clock).
    public func lacking(from other: KnowledgeVector) -> [ReplicaID: ClosedRange<UInt64>] {
        var out: [ReplicaID: ClosedRange<UInt64>] = [:]
        for (replica, clock) in other.clocks where clock > self[replica] {
            out[replica] = (self[replica] + 1)...clock
        }
        return out
    }

    /// How a state found (`self`) stands to what a device last saw (`seen`).
    public enum Relation: Equatable, Sendable {
        /// The same writes.
        case same
        /// Everything seen, and more: a later state of the same line (it opens silently).
        case later
        /// Some of what was seen and nothing else: an older copy (a rollback).
        case earlier
        /// Some of what was seen is missing and there are writes never seen: another line of
        /// history (a fork: two copies written apart, or an older copy written to).
        case forked
    }

    public func relation(to seen: KnowledgeVector) -> Relation {
        switch (includes(seen), seen.includes(self)) {
        case (true, true): .same
        case (true, false): .later
        case (false, true): .earlier
        case (false, false): .forked
        }
    }

    // MARK: - Encoding

    /// `u16 n | n × (16 replica id | u64 clock)`, replicas in byte order, integers big-endian,
    /// no zero clock: one encoding per vector, so the root's MAC covers it as it is.
    public func encoded() -> [UInt8] {
        var out: [UInt8] = [UInt8(clocks.count >> 8 & 0xff), UInt8(clocks.count & 0xff)]
        for (replica, clock) in clocks.sorted(by: { $0.key < $1.key }) {
            out += replica.bytes
            for shift in stride(from: 56, through: 0, by: -8) { out.append(UInt8(clock >> UInt64(shift) & 0xff)) }
        }
        return out
    }

    /// Decodes a vector at the start of `bytes`; nil when malformed (short, unordered, a zero
    /// clock), else the vector and how many bytes it took.
    public static func decode<Bytes: RandomAccessCollection>(_ bytes: Bytes) -> (KnowledgeVector, Int)?
    where Bytes.Element == UInt8, Bytes.Index == Int {
        let data = Array(bytes)
        guard data.count >= 2 else { return nil }
        let n = Int(data[0]) << 8 | Int(data[1])
        let entry = ReplicaID.byteCount + 8
        guard data.count >= 2 + n * entry else { return nil }
        var clocks: [ReplicaID: UInt64] = [:]
        var previous: ReplicaID?
        for i in 0..<n {
            let start = 2 + i * entry
            guard let replica = ReplicaID(bytes: Array(data[start..<start + ReplicaID.byteCount])) else { return nil }
            let clock = data[(start + ReplicaID.byteCount)..<(start + entry)].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            guard clock > 0, previous.map({ $0 < replica }) ?? true else { return nil }
            clocks[replica] = clock
            previous = replica
        }
        return (KnowledgeVector(clocks), 2 + n * entry)
    }
}
