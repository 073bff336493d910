import RxCrypto

/// One device's line of writes to one vault (issue 48; DESIGN.md, "Several devices").
///
/// Each computer that writes a vault does so as a replica: 16 random bytes, kept outside the
/// vault beside the rollback anchor (`DeviceKnowledge`), never secret. A replica's writes are
/// numbered 1, 2, 3... by its clock, and every state of the vault holds a prefix of them: a
/// device only writes on a state that holds all it wrote before (any other is a rollback or a
/// fork, and refused). When the owner accepts a state that lacks some of a replica's writes
/// (`check --accept-fork`, `restore`), the device takes a new replica id, so the writes left
/// out keep their numbers in the copies that hold them and a merge can still bring them back;
/// a restore on a new machine starts a new replica for the same reason.
public struct ReplicaID: Hashable, Comparable, Sendable, CustomStringConvertible {
    public static let byteCount = 16
    public let bytes: [UInt8]

    public init?(bytes: [UInt8]) {
        guard bytes.count == Self.byteCount else { return nil }
        self.bytes = bytes
    }

    public init?(hex: String) {
        guard let bytes = Hex.decode(hex) else { return nil }
        self.init(bytes: bytes)
    }

    /// A new replica id (libsodium's randombytes).
    public static func random() -> ReplicaID { ReplicaID(bytes: randomBytes(byteCount))! }

    public var hex: String { Hex.encode(bytes) }
    /// The first eight hex digits, as ids are shown.
    public var short: String { String(hex.prefix(8)) }
    public var description: String { short }

    public static func < (a: ReplicaID, b: ReplicaID) -> Bool { a.bytes.lexicographicallyPrecedes(b.bytes) }
}
