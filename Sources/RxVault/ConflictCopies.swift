import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A file beside the vault file that holds another state of it: a sync tool's conflict copy, or
/// another file of the same vault (`ConflictCopyForm`).
public struct ConflictCopy: Sendable, Equatable {
    public let path: String
    public let form: ConflictCopyForm
    /// When the file last changed (its mtime): about when the side it holds was last written.
    public let modified: Date
    /// Its write counter as stored (not verified: that takes the key), when it is a vault this
    /// rxvault reads; nil when it cannot be read as one (still being copied, damaged, newer).
    public let writeCounter: Int?
    /// Its knowledge vector as stored (format 8; not verified), nil when unknown.
    public var knowledge: KnowledgeVector? = nil

    /// The last part of its path, as a person sees it in the folder.
    public var name: String { PathText.name(of: path) }

    public init(path: String, form: ConflictCopyForm, modified: Date, writeCounter: Int?) {
        self.path = path
        self.form = form
        self.modified = modified
        self.writeCounter = writeCounter
    }
}

/// Finds the files beside a vault file that hold another state of it, so that what one device
/// wrote while another wrote too is named instead of lying unseen in the folder (issue 48).
///
/// Cheap enough to run before every command: one listing of the vault's folder; a file is
/// looked into only when its name is a sync tool's form of the vault's (`ConflictCopyName`), or
/// when its size and first 16 bytes are an SQLite database's, and then only its header row and
/// write counter are read, without a lock and without making anything beside it
/// (`PeekedVault`). A folder of thousands of other files costs a stat each at most.
public enum ConflictCopies {
    /// The first 16 bytes of every SQLite database file.
    static let sqliteMagic: [UInt8] = Array("SQLite format 3".utf8) + [0]
    /// An SQLite file is whole pages, and a page is at least 512 bytes.
    static let smallestPage = 512

    /// The copies beside the vault file at `path`, newest first. `vaultID` is the vault's own
    /// (its header's), to find other files of the same vault; nil finds only the sync tools'
    /// names (a vault whose header cannot be read). A database location has none.
    public static func find(besideVaultAt path: String, vaultID: [UInt8]?) -> [ConflictCopy] {
        guard !VaultLocation.isDatabase(path) else { return [] }
        let folder = PathText.folder(of: path)
        let vaultName = PathText.name(of: path)
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else { return [] }
        var found: [ConflictCopy] = []
        for name in names where name != vaultName && !isCompanion(name) {
            let form = ConflictCopyName.form(of: name, copyOf: vaultName)
            guard form != nil || vaultID != nil else { continue }
            let candidate = PathText.join(folder, name)
            guard let copy = look(at: candidate, namedAs: form, vaultID: vaultID) else { continue }
            found.append(copy)
        }
        return found.sorted { ($0.modified, $1.name) > ($1.modified, $0.name) }
    }

    /// Files that are part of another file or of a write under way, never a copy of the vault:
    /// SQLite's -wal, -shm and -journal files, rxvault's temporary files (`.tmp-`), and
    /// Syncthing's files being received (`.syncthing.NAME.tmp`, `~syncthing~NAME.tmp`).
    static func isCompanion(_ name: String) -> Bool {
        name.hasSuffix("-wal") || name.hasSuffix("-shm") || name.hasSuffix("-journal") || name.contains(".tmp-")
            || name.hasPrefix(".syncthing.") || name.hasPrefix("~syncthing~")
    }

    /// The copy at `path`, or nil when it is none: not a regular file, cannot be read, or (named
    /// by no sync tool) not an SQLite file holding this vault. A file a sync tool named after the
    /// vault is a copy even when it cannot be read as a vault (yet), unless it is another
    /// vault's.
    static func look(at path: String, namedAs form: ConflictCopyForm?, vaultID: [UInt8]?) -> ConflictCopy? {
        var info = stat()
        guard lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return nil }
        let size = Int(info.st_size)
        guard form != nil || (size >= smallestPage && size % smallestPage == 0) else { return nil }
        guard let start = firstBytes(of: path, count: sqliteMagic.count) else { return nil }
        let modified = Date(
            timeIntervalSince1970: TimeInterval(info.st_mtim.tv_sec) + TimeInterval(info.st_mtim.tv_nsec) / 1e9)
        let peeked = start == sqliteMagic ? try? PeekedVault.peek(at: path) : nil
        if let peeked, let vaultID, peeked.header.vaultID != vaultID { return nil }
        if let form {
            var copy = ConflictCopy(path: path, form: form, modified: modified, writeCounter: peeked?.writeCounter)
            copy.knowledge = peeked?.knowledge
            return copy
        }
        guard let peeked else { return nil }
        var copy = ConflictCopy(path: path, form: .vaultCopy, modified: modified, writeCounter: peeked.writeCounter)
        copy.knowledge = peeked.knowledge
        return copy
    }

    /// Up to `count` bytes from the start of the file; nil when it cannot be opened for reading.
    static func firstBytes(of path: String, count: Int) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes = [UInt8](repeating: 0, count: count)
        let n = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress, count, 0) }
        guard n >= 0 else { return nil }
        return Array(bytes.prefix(n))
    }
}
