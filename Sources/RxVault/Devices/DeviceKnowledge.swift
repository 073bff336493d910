import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// What this computer knows of one vault's lines of history (issue 48): the replica it writes
/// as, the replicas it wrote as before (to say "this computer wrote" of their writes), and the
/// knowledge of the newest state it wrote or opened. Kept in the rollback anchor's folder, one
/// file per vault id (`<vault id>.knowledge`), whatever path or URL the vault is opened by: two
/// spellings of one database, or a file and its copy, are one vault to the device, and a copy
/// that lacks what the device saw is a rollback or a fork wherever it sits.
///
/// Nothing here is secret (replica ids and clocks are in the file in the clear); it is a
/// safety net like the anchor: unreadable, it is as if the vault were new to this computer.
public struct DeviceKnowledge: Equatable, Sendable {
    /// The replica this computer writes as now.
    public var replica: ReplicaID
    /// Replicas this computer wrote as before it accepted a state that lacked some of their
    /// writes (each acceptance starts a new one).
    public var retired: [ReplicaID]
    /// The knowledge vector of the newest state seen: every state opened since was a later one.
    public var seen: KnowledgeVector
    /// The prescriptions this computer's recent writes touched (the newest `writtenLimit`), so a
    /// copy that lacks a write can be told by what it lacks: "prescription a492a9f1".
    public var written: [Written]

    /// One write made here: its replica and clock, and the short ids of the prescriptions it touched.
    public struct Written: Equatable, Sendable {
        public let replica: ReplicaID
        public let clock: UInt64
        public let prescriptions: [String]
    }

    static let writtenLimit = 200

    public init(
        replica: ReplicaID, retired: [ReplicaID] = [], seen: KnowledgeVector = .empty, written: [Written] = []
    ) {
        self.replica = replica
        self.retired = retired
        self.seen = seen
        self.written = written
    }

    /// Keeps what a write of this computer touched (the oldest forgotten past `writtenLimit`).
    mutating func remember(_ write: Written) {
        written.append(write)
        if written.count > Self.writtenLimit { written.removeFirst(written.count - Self.writtenLimit) }
    }

    /// The prescriptions touched by writes made here that `missing` names, in the order written.
    public func prescriptions(in missing: [ReplicaID: ClosedRange<UInt64>]) -> [String] {
        var out: [String] = []
        for write in written where missing[write.replica]?.contains(write.clock) == true {
            for id in write.prescriptions where !out.contains(id) { out.append(id) }
        }
        return out
    }

    /// Every replica that is this computer's.
    public var own: Set<ReplicaID> { Set(retired + [replica]) }

    /// Starts a new replica for the writes to come (after accepting a state that lacks some of
    /// the current one's writes): those keep their numbers in the copies that hold them.
    mutating func retire() {
        retired.append(replica)
        replica = ReplicaID.random()
    }

    static let magic = "rxvault device knowledge 1"

    /// Lines: the magic, `replica HEX`, `retired HEX...` (possibly none), `seen HEX` (the encoded
    /// vector), then one `wrote REPLICA CLOCK ID,ID...` (`-`: none) per write remembered.
    func text() -> String {
        let writes = written.map {
            "wrote \($0.replica.hex) \($0.clock) "
                + ($0.prescriptions.isEmpty ? "-" : $0.prescriptions.joined(separator: ","))
        }
        return
            ([
                Self.magic, "replica \(replica.hex)",
                (["retired"] + retired.map(\.hex)).joined(separator: " "),
                "seen \(Hex.encode(seen.encoded()))"
            ] + writes).joined(separator: "\n") + "\n"
    }

    static func parse(_ text: String) -> DeviceKnowledge? {
        let lines = text.split(separator: "\n").map { $0.split(separator: " ").map(String.init) }
        guard lines.count >= 4, lines[0].joined(separator: " ") == magic,
            lines[1].count == 2, lines[1][0] == "replica", let replica = ReplicaID(hex: lines[1][1]),
            lines[2].first == "retired", lines[3].count == 2, lines[3][0] == "seen",
            let bytes = Hex.decode(lines[3][1]), let (seen, used) = KnowledgeVector.decode(bytes), used == bytes.count
        else { return nil }
        var retired: [ReplicaID] = []
        for hex in lines[2].dropFirst() {
            guard let id = ReplicaID(hex: hex) else { return nil }
            retired.append(id)
        }
        var written: [Written] = []
        for line in lines.dropFirst(4) {
            guard line.count == 4, line[0] == "wrote", let replica = ReplicaID(hex: line[1]),
                let clock = UInt64(line[2])
            else { return nil }
            let ids = line[3] == "-" ? [] : line[3].split(separator: ",").map(String.init)
            guard ids.allSatisfy({ $0.count == 8 && Hex.decode($0) != nil }) else { return nil }
            written.append(Written(replica: replica, clock: clock, prescriptions: ids))
        }
        return DeviceKnowledge(replica: replica, retired: retired, seen: seen, written: written)
    }
}

extension RollbackAnchor {
    /// Where this computer keeps what it knows of the vault `vaultIDHex`.
    public func knowledgeFile(_ vaultIDHex: String) -> String { directory + "/" + vaultIDHex + ".knowledge" }

    /// What this computer knows of the vault (nil: nothing yet, or unreadable).
    public func knowledge(_ vaultIDHex: String) -> DeviceKnowledge? {
        guard let text = try? String(contentsOfFile: knowledgeFile(vaultIDHex), encoding: .utf8) else { return nil }
        return DeviceKnowledge.parse(text)
    }

    /// Changes what this computer knows of the vault under an exclusive lock (two commands of
    /// one computer, a server and the CLI, may finish writes together): `change` is given the
    /// stored knowledge (nil: none) and returns the new one. Returns the knowledge kept (or, when
    /// it cannot be written, the one `change` made, which then lives only as long as the process;
    /// `notKept` is told why).
    @discardableResult
    func updateKnowledge(
        _ vaultIDHex: String, _ change: (DeviceKnowledge?) -> DeviceKnowledge
    ) -> DeviceKnowledge {
        let path = knowledgeFile(vaultIDHex)
        if let problem = makeDirectory() {
            notKept(problem)
            return change(nil)
        }
        let lock = open(path + ".lock", O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
        if lock >= 0 { flock(lock, LOCK_EX) }
        defer {
            if lock >= 0 { close(lock) }
        }
        let updated = change(knowledge(vaultIDHex))
        if let problem = write(updated.text(), to: path) { notKept(problem) }
        return updated
    }
}
