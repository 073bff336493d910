import RxVault

#if canImport(Glibc)
    import Glibc
#endif

/// Which file an agent unlocked, and what its header said: the agent hands its key only for
/// the same file (device and inode) with the same key wrapping (`VaultHeader.keyWrappingDigest`).
/// A restore or a copy moved into place is another inode; `passwd`, `key add`, `key remove` or
/// an upgrade changes the wrapping; another vault at the path has another id. Writing prescriptions changes none of these.
public struct VaultFileIdentity: Codable, Equatable, Sendable {
    public let vaultID: String
    public let device: UInt64
    public let inode: UInt64
    public let keyWrapping: String

    public init(vaultID: String, device: UInt64, inode: UInt64, keyWrapping: String) {
        self.vaultID = vaultID
        self.device = device
        self.inode = inode
        self.keyWrapping = keyWrapping
    }

    /// The identity of the file at `path` whose header was just read (the file is stat'ed).
    public init(path: String, header: VaultHeader) throws(AgentError) {
        guard let (device, inode) = Self.fileNumbers(path) else { throw .errno("cannot look at \(path)") }
        self.init(
            vaultID: header.vaultIDHex, device: device, inode: inode,
            keyWrapping: header.keyWrappingDigest.map { String($0, radix: 16).leftPadded(2) }.joined())
    }

    /// Reads the header at `path` and returns the file's identity. The file is stat'ed before and
    /// after the header is read: a file replaced in between is read again.
    public static func read(at path: String) throws -> VaultFileIdentity {
        for _ in 0..<3 {
            let before = fileNumbers(path)
            let header = try VaultHeader.read(at: path)
            let identity = try VaultFileIdentity(path: path, header: header)
            if let before, before == (identity.device, identity.inode) { return identity }
        }
        throw AgentError.system("\(path) keeps being replaced while it is read")
    }

    /// Device and inode of the file `path` names (following links, as SQLite does).
    public static func fileNumbers(_ path: String) -> (UInt64, UInt64)? {
        // A database cannot be renamed over (VaultFileNumbers): its id and key wrapping say it all.
        if let numbers = VaultFileNumbers(path: path), VaultLocation.isDatabase(path) {
            return (numbers.device, numbers.inode)
        }
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return (UInt64(info.st_dev), UInt64(info.st_ino))
    }

    /// Why `current` (the file at `path` now) is not the file this identity describes, in words;
    /// nil when it is.
    public func difference(from current: VaultFileIdentity, path: String) -> String? {
        if current.vaultID != vaultID { return "another vault is at \(path) now" }
        if current.device != device || current.inode != inode {
            return "the file at \(path) was replaced (a restore, or another copy moved into its place)"
        }
        if current.keyWrapping != keyWrapping {
            return "the vault's passphrase was changed, or a key slot added or removed (or the vault upgraded)"
        }
        return nil
    }
}

extension String {
    func leftPadded(_ width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
