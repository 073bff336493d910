import CSodium

/// libsodium must be initialised once per process before any other call; `sodium_init` is
/// itself thread-safe and idempotent, so a lazily evaluated global is enough.
enum Sodium {
    private static let initialised: Bool = sodium_init() >= 0

    static func ready() throws(CryptoError) {
        guard initialised else { throw CryptoError.libraryUnavailable }
    }
}

/// Fills a new array with `count` bytes from the operating system's CSPRNG (not secret: salts, nonces, ids).
public func randomBytes(_ count: Int) -> [UInt8] {
    var out = [UInt8](repeating: 0, count: count)
    _ = try? Sodium.ready()
    out.withUnsafeMutableBytes { randombytes_buf($0.baseAddress!, count) }
    return out
}

/// Compares in constant time, so that checking a MAC or tag leaks nothing through timing.
public func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
    guard a.count == b.count else { return false }
    if a.isEmpty { return true }
    return a.withUnsafeBytes { pa in
        b.withUnsafeBytes { pb in sodium_memcmp(pa.baseAddress!, pb.baseAddress!, a.count) == 0 }
    }
}
