import Foundation

/// A file read from its first byte after its first bytes were already looked at (to tell an
/// armored age file from a binary one, or a vault from a backup): those bytes come first, then
/// the rest of the file. `backup list` and `restore` read backups through it.
public final class PeekedFile {
    private let handle: FileHandle
    private var pending: [UInt8]
    /// Bytes taken from the file so far, the peeked ones included (progress against its size).
    public private(set) var consumed: Int

    public init(handle: FileHandle, peeked: [UInt8]) {
        self.handle = handle
        self.pending = peeked
        self.consumed = peeked.count
    }

    /// Fills the start of `buffer`; returns how many bytes, 0 at the end of the file.
    public func read(_ buffer: inout [UInt8]) throws -> Int {
        if !pending.isEmpty {
            let n = min(buffer.count, pending.count)
            for i in 0..<n { buffer[i] = pending[i] }
            pending.removeFirst(n)
            return n
        }
        guard let chunk = try handle.read(upToCount: buffer.count), !chunk.isEmpty else { return 0 }
        chunk.copyBytes(to: &buffer, count: chunk.count)
        consumed += chunk.count
        return chunk.count
    }
}
