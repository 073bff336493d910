import CSodium

/// A buffer of secret bytes (a key, a passphrase) that is zeroed when released.
///
/// Keys never live in `[UInt8]` or `String`, whose storage Swift may copy and free without
/// clearing. The bytes are reachable only inside `withUnsafeBytes`; there is no `description`
/// that could print them, and equality is constant-time. The memory is not locked against
/// swapping (see SECURITY.md: use encrypted swap).
public final class SecretBytes: @unchecked Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible {
    private let buffer: UnsafeMutableRawBufferPointer
    public let count: Int

    /// `count` zero bytes, to be filled in place.
    public init(zeroedCount count: Int) {
        self.count = count
        buffer = .allocate(byteCount: max(count, 1), alignment: 16)
        buffer.initializeMemory(as: UInt8.self, repeating: 0)
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
        sodium_memzero(buffer.baseAddress!, buffer.count)
        buffer.deallocate()
    }

    public func withUnsafeBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        try body(UnsafeRawBufferPointer(start: buffer.baseAddress, count: count))
    }

    public func withUnsafeMutableBytes<R, E: Error>(_ body: (UnsafeMutableRawBufferPointer) throws(E) -> R) throws(E) -> R {
        try body(UnsafeMutableRawBufferPointer(start: buffer.baseAddress, count: count))
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
