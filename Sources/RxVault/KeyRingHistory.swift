/// What a merge needs to know of the key ring's entries (format 8, ring schema 3; docs/format.md,
/// "Format 8: stamps, parents and merge rules"): which write made each key slot and setting as
/// it is now, and which slots were removed.
///
/// Key slots and settings have no sealed record of their own to carry a stamp (slot 1 is the
/// header's columns, the attachment limit a header column), so the owner's key ring, which
/// already commits to each of them under the state MAC key, carries their stamps too. Every owner
/// write keeps them without being told (`Vault.nextRingHistory`): a slot or setting it changed
/// takes its stamp, a slot it removed or re-wrapped leaves its hash among the removed.
///
/// The removed slots are kept by hash (`KeyRing.slotHash`: the slot's id, kind, costs, salt and
/// wrapped key; unique, as every slot has a fresh salt), not by stamp: a slot made before stamps
/// (slot 1 of `init`, any slot of an older format) is then removed by a merge as surely as a new
/// one, and a passphrase taken out on one computer because it leaked stays out of every copy.
struct KeyRingHistory: Equatable, Sendable {
    /// A setting the ring stamps.
    enum Setting: UInt8, CaseIterable, Sendable {
        case maxAttachmentSize = 64
        case assumedValidity = 65

        var name: String {
            switch self {
            case .maxAttachmentSize: "max-attachment-size"
            case .assumedValidity: "assumed-validity"
            }
        }
    }

    /// Slot id -> the write that wrote the slot as it is (absent: made before stamps).
    var slots: [Int: WriteStamp] = [:]
    /// The write that last changed each setting (absent: never changed since format 8).
    var settings: [Setting: WriteStamp] = [:]
    /// Hashes of every slot removed or re-wrapped (its passphrase changed) in this vault's history.
    var removedSlots: Set<[UInt8]> = []

    /// More removed slots than any vault reaches by hand (each is a deliberate `key remove` or
    /// `passwd`): a ring claiming more is refused as one rxvault never writes.
    static let maxRemovedSlots = 1 << 16
    static let stampLength = ReplicaID.byteCount + 8

    /// `u8 s | s × (u8 key | 16 replica | u64 clock) | u32 r | r × 32 hash`: stamps by key (1 to 8
    /// a slot, 64 max-attachment-size, 65 assumed-validity) in key order, hashes in byte order.
    func encoded() -> [UInt8] {
        var stamps: [(UInt8, WriteStamp)] = slots.map { (UInt8($0.key), $0.value) }
        stamps += settings.map { ($0.key.rawValue, $0.value) }
        stamps.sort { $0.0 < $1.0 }
        var out: [UInt8] = [UInt8(stamps.count)]
        for (key, stamp) in stamps {
            out.append(key)
            out += stamp.replica.bytes
            out += (0..<8).reversed().map { UInt8(truncatingIfNeeded: stamp.clock >> (8 * UInt64($0))) }
        }
        let n = removedSlots.count
        out += [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: n >> $0) }
        for hash in removedSlots.sorted(by: { $0.lexicographicallyPrecedes($1) }) { out += hash }
        return out
    }

    /// Decodes exactly `bytes` (nothing may follow), refusing what `encoded` never writes: keys
    /// out of order or unknown, a stamp for a slot the ring does not hold (`slotIDs`), a zero clock.
    init?(decoding bytes: ArraySlice<UInt8>, slotIDs: Set<Int>) {
        let b = Array(bytes)
        guard let count = b.first else { return nil }
        var p = 1
        var previous = -1
        for _ in 0..<Int(count) {
            guard p + 1 + Self.stampLength <= b.count else { return nil }
            let key = b[p]
            let replica = ReplicaID(bytes: Array(b[p + 1..<p + 17]))!
            let clock = b[p + 17..<p + 25].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            guard Int(key) > previous, clock > 0 else { return nil }
            previous = Int(key)
            let stamp = WriteStamp(replica: replica, clock: clock)
            if let setting = Setting(rawValue: key) {
                settings[setting] = stamp
            } else {
                guard slotIDs.contains(Int(key)) else { return nil }
                slots[Int(key)] = stamp
            }
            p += 1 + Self.stampLength
        }
        guard p + 4 <= b.count else { return nil }
        let n = b[p..<p + 4].reduce(0) { $0 << 8 | Int($1) }
        p += 4
        guard n <= Self.maxRemovedSlots, b.count == p + n * 32 else { return nil }
        for i in 0..<n { removedSlots.insert(Array(b[p + i * 32..<p + (i + 1) * 32])) }
        guard removedSlots.count == n else { return nil }
    }

    init() {}
}
