/// What one device last pushed to a folder remote (`rxvault sync`): the snapshot of its vault
/// as a list of chunks, with the knowledge vector of that snapshot, so another device knows
/// without reading a chunk whether the snapshot holds anything it lacks. One head per replica
/// (`heads/<replica hex>`), only ever replaced by that replica's next push: its knowledge only
/// grows, which is how a rolled-back or forked remote is caught (`RemoteMemory`).
///
/// Sealed (`SyncKeys.seal(head:replica:)`) as
/// `u8 1 | 16 vault id | 16 replica | u32 format | u64 length | u32 chunk size | knowledge |
/// i64 pushed (Unix seconds) | u32 n | n × 32 chunk id`, integers big-endian.
struct RemoteHead: Equatable {
    static let version: UInt8 = 1
    var vaultID: [UInt8]
    var replica: ReplicaID
    var formatVersion: Int
    var length: UInt64
    var chunkSize: Int
    var knowledge: KnowledgeVector
    var pushed: Int64
    var chunks: [ChunkID]

    func encoded() -> [UInt8] {
        var out: [UInt8] = [Self.version] + vaultID + replica.bytes
        out += bigEndian(UInt64(formatVersion), 4) + bigEndian(length, 8) + bigEndian(UInt64(chunkSize), 4)
        out += knowledge.encoded()
        out += bigEndian(UInt64(bitPattern: pushed), 8) + bigEndian(UInt64(chunks.count), 4)
        for chunk in chunks { out += chunk.bytes }
        return out
    }

    static func decode(_ bytes: [UInt8]) -> RemoteHead? {
        var at = 0
        func take(_ n: Int) -> ArraySlice<UInt8>? {
            guard n >= 0, at + n <= bytes.count else { return nil }
            defer { at += n }
            return bytes[at..<at + n]
        }
        func number(_ n: Int) -> UInt64? { take(n).map { $0.reduce(0) { $0 << 8 | UInt64($1) } } }
        guard take(1) == [version], let vault = take(16), let replicaBytes = take(ReplicaID.byteCount),
            let replica = ReplicaID(bytes: Array(replicaBytes)), let format = number(4), let length = number(8),
            let chunkSize = number(4), chunkSize > 0
        else { return nil }
        guard let (knowledge, used) = KnowledgeVector.decode(bytes[at...]) else { return nil }
        at += used
        // Exactly as many chunks as the length needs, each named in full.
        guard let pushed = number(8), let count = number(4), count == (length + chunkSize - 1) / chunkSize,
            count * UInt64(ChunkID.byteCount) == UInt64(bytes.count - at)
        else { return nil }
        var chunks: [ChunkID] = []
        for _ in 0..<count {
            guard let id = take(ChunkID.byteCount) else { return nil }
            chunks.append(ChunkID(bytes: Array(id)))
        }
        guard at == bytes.count else { return nil }
        return RemoteHead(
            vaultID: Array(vault), replica: replica, formatVersion: Int(format), length: length,
            chunkSize: Int(chunkSize), knowledge: knowledge, pushed: Int64(bitPattern: pushed), chunks: chunks)
    }

    private func bigEndian(_ value: UInt64, _ width: Int) -> [UInt8] {
        (0..<width).reversed().map { UInt8(truncatingIfNeeded: value >> (8 * UInt64($0))) }
    }
}
