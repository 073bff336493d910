import CSodium
import Foundation

/// Locked memory for every `SecretBytes`: slots carved from 64 KiB chunks that are `mlock`ed
/// (never written to swap) and `MADV_DONTDUMP` (left out of a core dump even if one were
/// made), both by `sodium_mlock`.
///
/// One locked page per secret would cost a page, two system calls and the kernel's mmap lock
/// for every data key a command opens (thousands in an export), and munlock of a page shared by
/// two secrets would unlock both; so secrets share locked chunks instead, each chunk cut into
/// slots of one size (32 bytes to 4 KiB), and a slot released is zeroed and kept for the next
/// secret of its size. Chunks are never unlocked or returned: a process's peak of live secrets
/// is small (tens of KiB), and it all goes when the process exits.
///
/// RLIMIT_MEMLOCK bounds what an unprivileged process may lock (8 MiB on Debian 12; root and
/// CAP_IPC_LOCK are not bound). When the kernel refuses a chunk, secrets from then on live in
/// ordinary memory (still zeroed on release, and out of core dumps because the process is not
/// dumpable), and `onLockRefused` is called, once per process, for the program to say so.
public enum SecretMemory {
    /// Called the first time locking is refused; the CLI sets it at start to print a warning.
    /// Never given anything of a secret.
    public static var onLockRefused: (@Sendable () -> Void)? {
        get { arena.withLock { $0.onLockRefused } }
        set { arena.withLock { $0.onLockRefused = newValue } }
    }

    /// Whether every secret so far is on locked memory (false once the kernel refused).
    public static var isLocking: Bool { arena.withLock { !$0.refused } }

    /// The slot sizes; a secret larger than the largest gets locked pages of its own.
    static let slotSizes = [32, 64, 128, 256, 512, 1024, 2048, 4096]
    static let chunkBytes = 64 << 10

    /// A zeroed slot of at least `count` bytes and its size class, or nil when `count` is larger
    /// than any slot or the kernel refused to lock a new chunk (then ordinary memory is used).
    static func allocate(_ count: Int) -> (UnsafeMutableRawBufferPointer, sizeClass: Int)? {
        guard let sizeClass = slotSizes.firstIndex(where: { $0 >= count }) else { return nil }
        let (slot, refusedNow, notice) = arena.withLock { state in
            let slot = state.take(sizeClass)
            let refusedNow = slot == nil && !state.said
            if refusedNow { state.said = true }
            return (slot, refusedNow, state.onLockRefused)
        }
        if refusedNow { notice?() }
        guard let slot else { return nil }
        return (UnsafeMutableRawBufferPointer(start: slot, count: slotSizes[sizeClass]), sizeClass)
    }

    /// Zeroes a slot and keeps it for the next secret of its size.
    static func release(_ buffer: UnsafeMutableRawBufferPointer, sizeClass: Int) {
        sodium_memzero(buffer.baseAddress!, buffer.count)
        arena.withLock { $0.free[sizeClass].append(buffer.baseAddress!) }
    }

    /// Says the refusal (once) for a secret that asked for locked pages of its own and did not
    /// get them.
    static func lockRefused() {
        let notice = arena.withLock { state -> (@Sendable () -> Void)? in
            state.refused = true
            guard !state.said else { return nil }
            state.said = true
            return state.onLockRefused
        }
        notice?()
    }

    private static let arena = Arena()

    /// The free slots by size class, behind one lock (secrets are made on many threads at once).
    private final class Arena: @unchecked Sendable {
        struct State {
            var free: [[UnsafeMutableRawPointer]] = Array(repeating: [], count: SecretMemory.slotSizes.count)
            var refused = false
            var said = false
            var onLockRefused: (@Sendable () -> Void)?

            /// A free slot of `sizeClass`, cutting a new locked chunk when none is left; nil
            /// once the kernel has refused to lock one.
            mutating func take(_ sizeClass: Int) -> UnsafeMutableRawPointer? {
                if let slot = free[sizeClass].popLast() { return slot }
                guard !refused else { return nil }
                _ = try? Sodium.ready()
                let chunk = UnsafeMutableRawBufferPointer.allocate(
                    byteCount: SecretMemory.chunkBytes, alignment: SecretMemory.pageSize)
                chunk.initializeMemory(as: UInt8.self, repeating: 0)
                guard sodium_mlock(chunk.baseAddress!, chunk.count) == 0 else {
                    chunk.deallocate()
                    refused = true
                    return nil
                }
                let size = SecretMemory.slotSizes[sizeClass]
                free[sizeClass] = stride(from: SecretMemory.chunkBytes - size, through: 0, by: -size).map {
                    chunk.baseAddress! + $0
                }
                return free[sizeClass].popLast()
            }
        }

        private let lock = NSLock()
        private var state = State()

        func withLock<R>(_ body: (inout State) -> R) -> R {
            lock.lock()
            defer { lock.unlock() }
            return body(&state)
        }
    }

    static let pageSize = max(Int(sysconf(Int32(_SC_PAGESIZE))), 4096)
}
