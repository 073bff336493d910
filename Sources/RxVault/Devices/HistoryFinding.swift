/// A vault file that is not a later state of what this computer saw of the vault (issue 48):
/// an older copy (`earlier`) or another line of history (`forked`), with what it lacks.
public struct HistoryFinding: Sendable, Equatable {
    /// `.earlier` or `.forked` (never `.same` or `.later`: those are no finding).
    public let relation: KnowledgeVector.Relation
    /// Writes this computer saw (made here or opened here) that the file lacks, per replica.
    public let missing: [ReplicaID: ClosedRange<UInt64>]
    /// Writes the file holds that this computer never saw (a fork's other side), per replica.
    public let unseen: [ReplicaID: ClosedRange<UInt64>]
    /// This computer's replicas, now and before (`DeviceKnowledge.own`).
    public let own: Set<ReplicaID>
    /// Short ids of the prescriptions that this computer's missing writes touched, as far as it
    /// remembers them (`DeviceKnowledge.written`).
    public var prescriptions: [String] = []

    init(found: KnowledgeVector, seen: KnowledgeVector, own: Set<ReplicaID>) {
        relation = found.relation(to: seen)
        missing = found.lacking(from: seen)
        unseen = seen.lacking(from: found)
        self.own = own
    }

    /// `vector` (a copy's, as it says) holds every write the file lacks.
    public func isHeld(by vector: KnowledgeVector) -> Bool {
        missing.allSatisfy { vector[$0.key] >= $0.value.upperBound }
    }

    /// How many of the missing writes were made on this computer, and by others.
    public var missingHere: UInt64 { count(missing.filter { own.contains($0.key) }) }
    public var missingElsewhere: UInt64 { count(missing.filter { !own.contains($0.key) }) }
    public var unseenCount: UInt64 { count(unseen) }

    private func count(_ ranges: [ReplicaID: ClosedRange<UInt64>]) -> UInt64 {
        ranges.values.reduce(0) { $0 + $1.upperBound - $1.lowerBound + 1 }
    }

    /// "3 writes made on this computer and 1 made elsewhere and seen here".
    public var missingText: String {
        var parts: [String] = []
        if missingHere > 0 {
            let named = prescriptions.prefix(10).joined(separator: ", ")
            let more = prescriptions.count > 10 ? " and \(prescriptions.count - 10) more" : ""
            parts.append(
                "\(Self.writes(missingHere)) made on this computer"
                    + (prescriptions.isEmpty
                        ? "" : " (prescription\(prescriptions.count == 1 ? "" : "s") \(named)\(more))"))
        }
        if missingElsewhere > 0 { parts.append("\(Self.writes(missingElsewhere)) made elsewhere and seen here") }
        return parts.joined(separator: " and ")
    }

    static func writes(_ n: UInt64) -> String { n == 1 ? "1 write" : "\(n) writes" }
}
