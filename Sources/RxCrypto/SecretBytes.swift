import CSodium

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A buffer of secret bytes (a key, a passphrase) that is zeroed when released.
///
/// Keys never live in `[UInt8]` or `String`, whose storage Swift may copy and free without
/// clearing. The bytes are reachable only inside `withUnsafeBytes`; there is no `description`
/// that could print them, and equality is constant-time. Every secret is on locked memory as
/// far as RLIMIT_MEMLOCK allows (`SecretMemory`: never in swap, never in a core dump);
/// `init(lockedCount:)` gives one pages of its own, for a key that stays in memory for long
/// (the agent's) and is wiped and unlocked alone.
public final class SecretBytes: @unchecked Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible {
    private let buffer: UnsafeMutableRawBufferPointer
    public let count: Int
    /// Whether the bytes are locked in RAM (mlock) and left out of core dumps (MADV_DONTDUMP).
    public let isLocked: Bool
    /// The `SecretMemory` slot size the bytes are in; nil when they have pages of their own.
    private let sizeClass: Int?

    /// `count` zero bytes, to be filled in place: a slot of `SecretMemory` (locked), else,
    /// for more than a slot holds, pages of their own, locked as `init(lockedCount:)` does.
    public convenience init(zeroedCount count: Int) {
        if let (slot, sizeClass) = SecretMemory.allocate(max(count, 1)) {
            self.init(slot: slot, sizeClass: sizeClass, count: count)
        } else {
            self.init(lockedCount: count)
        }
    }

    private init(slot: UnsafeMutableRawBufferPointer, sizeClass: Int, count: Int) {
        self.count = count
        buffer = slot
        self.sizeClass = sizeClass
        isLocked = true
    }

    /// `count` zero bytes on pages of their own, locked in RAM so they never reach swap, and
    /// excluded from core dumps. Locking fails when RLIMIT_MEMLOCK is exhausted: the bytes are
    /// then ordinary (still zeroed on release) and `isLocked` says so, for the caller to warn.
    /// Whole pages, because mlock works on pages and munlock of a page shared with another
    /// locked secret would unlock that one too.
    public init(lockedCount count: Int) {
        self.count = count
        let page = max(Int(sysconf(Int32(_SC_PAGESIZE))), 4096)
        let size = (max(count, 1) + page - 1) / page * page
        buffer = .allocate(byteCount: size, alignment: page)
        buffer.initializeMemory(as: UInt8.self, repeating: 0)
        sizeClass = nil
        _ = try? Sodium.ready()
        // sodium_mlock also sets MADV_DONTDUMP; its result is mlock's.
        isLocked = sodium_mlock(buffer.baseAddress!, buffer.count) == 0
        if !isLocked { SecretMemory.lockRefused() }
    }

    /// `count` random bytes from the CSPRNG: a new key.
    public convenience init(randomCount count: Int) {
        self.init(zeroedCount: count)
        _ = try? Sodium.ready()
        if count > 0 { randombytes_buf(buffer.baseAddress!, count) }
    }

    /// Copies `bytes` in. The caller should clear its own copy; prefer filling in place.
    public convenience init(copying bytes: UnsafeRawBufferPointer) {
        self.init(zeroedCount: bytes.count)
        if bytes.count > 0 { buffer.baseAddress!.copyMemory(from: bytes.baseAddress!, byteCount: bytes.count) }
    }

    /// Copies from an array and zeroes the array.
    public convenience init(consuming bytes: inout [UInt8]) {
        self.init(zeroedCount: bytes.count)
        bytes.withUnsafeMutableBytes { source in
            if source.count > 0 {
                buffer.baseAddress!.copyMemory(from: source.baseAddress!, byteCount: source.count)
                sodium_memzero(source.baseAddress!, source.count)
            }
        }
    }

    deinit {
        if let sizeClass {
            SecretMemory.release(buffer, sizeClass: sizeClass)
            return
        }
        // sodium_munlock zeroes before it unlocks.
        if isLocked {
            sodium_munlock(buffer.baseAddress!, buffer.count)
        } else {
            sodium_memzero(buffer.baseAddress!, buffer.count)
        }
        buffer.deallocate()
    }

    /// Zeroes the bytes now, before release (a key that must be gone the moment a lock is asked).
    public func wipe() {
        sodium_memzero(buffer.baseAddress!, buffer.count)
    }

    public func withUnsafeBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        try body(UnsafeRawBufferPointer(start: buffer.baseAddress, count: count))
    }

    public func withUnsafeMutableBytes<R, E: Error>(_ body: (UnsafeMutableRawBufferPointer) throws(E) -> R) throws(E)
        -> R
    {
        try body(UnsafeMutableRawBufferPointer(start: buffer.baseAddress, count: count))
    }

    /// A copy on locked pages of its own (`init(lockedCount:)`): for a second holder of a key
    /// that wipes its copy when it chooses (an agent beside the server that keeps its own).
    public func lockedCopy() -> SecretBytes {
        let copy = SecretBytes(lockedCount: count)
        copy.withUnsafeMutableBytes { target in withUnsafeBytes { source in target.copyMemory(from: source) } }
        return copy
    }

    /// A new secret holding the first `length` bytes (for trimming a passphrase read into a larger buffer).
    public func prefix(_ length: Int) -> SecretBytes {
        let n = min(length, count)
        return withUnsafeBytes { SecretBytes(copying: UnsafeRawBufferPointer(rebasing: $0[0..<n])) }
    }

    public static func == (a: SecretBytes, b: SecretBytes) -> Bool {
        guard a.count == b.count else { return false }
        if a.count == 0 { return true }
        return sodium_memcmp(a.buffer.baseAddress!, b.buffer.baseAddress!, a.count) == 0
    }

    public var description: String { "SecretBytes(\(count) bytes, redacted)" }
    public var debugDescription: String { description }
}
