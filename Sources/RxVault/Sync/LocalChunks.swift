import Foundation

/// A vault snapshot cut into the fixed-size pieces a folder remote stores (`RemoteHead`), with
/// each piece's name: what a push uploads (the pieces the remote lacks), and what a pull takes
/// from here instead of the remote (the pieces another device's snapshot shares with this one).
///
/// Fixed pieces of a page-for-page copy (`StoreEngine.snapshotKeepingPages`): SQLite changes a
/// file's pages in place, so a write changes the pieces holding the pages it touched and no
/// other. (Content-defined chunking would not help a compacted copy either: its page headers
/// shift with every row moved.) The file is read a piece at a time, never whole: a vault with
/// large attachments is as large as they are.
final class LocalChunks {
    /// 16 KiB: four SQLite pages. Smaller pieces move fewer unchanged bytes per write and make
    /// more files; a write of one prescription touches some 18 pages in 15 pieces of a vault of
    /// 2,000 (Benchmarks/sync.sh).
    static let chunkSize = 16 * 1024

    let path: String
    let length: UInt64
    let ids: [ChunkID]
    private let offsets: [ChunkID: UInt64]
    private let handle: FileHandle

    init(file path: String, keys: SyncKeys) throws(VaultError) {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw .cannotWrite("cannot read the snapshot at \(path)")
        }
        var ids: [ChunkID] = []
        var offsets: [ChunkID: UInt64] = [:]
        var at: UInt64 = 0
        while true {
            let piece: Data
            do { piece = try handle.read(upToCount: Self.chunkSize) ?? Data() } catch {
                throw .cannotWrite("cannot read the snapshot at \(path): \(error)")
            }
            if piece.isEmpty { break }
            let id = try keys.chunkID(of: [UInt8](piece))
            ids.append(id)
            if offsets[id] == nil { offsets[id] = at }
            at += UInt64(piece.count)
        }
        self.path = path
        self.handle = handle
        self.length = at
        self.ids = ids
        self.offsets = offsets
    }

    deinit { try? handle.close() }

    func has(_ id: ChunkID) -> Bool { offsets[id] != nil }

    /// The piece named `id`, read from the snapshot.
    func chunk(_ id: ChunkID) -> [UInt8]? {
        guard let offset = offsets[id], (try? handle.seek(toOffset: offset)) != nil,
            let data = try? handle.read(upToCount: Self.chunkSize)
        else { return nil }
        return [UInt8](data)
    }
}
