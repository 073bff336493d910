import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A vault snapshot cut into the fixed-size pieces a folder remote stores (`RemoteHead`), with
/// each piece's name: what a push uploads (the pieces the remote lacks), and what a pull takes
/// from here instead of the remote (the pieces another device's snapshot shares with this one).
///
/// Fixed pieces of a page-for-page copy (`StoreEngine.snapshotKeepingPages`): SQLite changes a
/// file's pages in place, so a write changes the pieces holding the pages it touched and no
/// other. (Content-defined chunking would not help a compacted copy either: its page headers
/// shift with every row moved.)
struct LocalChunks {
    /// 16 KiB: four SQLite pages. Smaller pieces move fewer unchanged bytes per write and make
    /// more files; a write of one prescription touches some ten pages across the file.
    static let chunkSize = 16 * 1024

    let path: String
    let length: UInt64
    let ids: [ChunkID]
    private let offsets: [ChunkID: Int]

    init(file path: String, keys: SyncKeys) throws(VaultError) {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw .cannotWrite("cannot read the snapshot at \(path)")
        }
        let bytes = [UInt8](data)
        var ids: [ChunkID] = []
        var offsets: [ChunkID: Int] = [:]
        var at = 0
        while at < bytes.count {
            let end = min(at + Self.chunkSize, bytes.count)
            let id = try keys.chunkID(of: Array(bytes[at..<end]))
            ids.append(id)
            if offsets[id] == nil { offsets[id] = at }
            at = end
        }
        self.path = path
        self.length = UInt64(bytes.count)
        self.ids = ids
        self.offsets = offsets
    }

    func has(_ id: ChunkID) -> Bool { offsets[id] != nil }

    /// The piece named `id`, read from the snapshot.
    func chunk(_ id: ChunkID) -> [UInt8]? {
        guard let offset = offsets[id], let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        guard (try? handle.seek(toOffset: UInt64(offset))) != nil,
            let data = try? handle.read(upToCount: Self.chunkSize)
        else { return nil }
        return [UInt8](data)
    }
}
