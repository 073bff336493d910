import Foundation
import RxCrypto

#if canImport(Glibc)
    import Glibc
#endif

/// A folder that carries one vault between devices for `rxvault sync` (a USB stick, a folder a
/// sync tool carries, an rclone mount): `rxvault-remote.txt` (which vault, in the clear: the
/// vault id is no secret), `heads/<replica hex>` (each device's `RemoteHead`, sealed) and
/// `chunks/<2 hex>/<64 hex>` (pieces of the devices' snapshots, sealed, named by a keyed hash
/// of what they hold). Nothing in it is plaintext, nothing is a key.
///
/// Every file is written whole under a temporary name and renamed into place, so a reader (or a
/// sync tool) never sees half a file; chunks before the head that names them. Each device writes
/// only its own head, and chunks are the same bytes whoever seals them (`SyncKeys`), so two
/// devices syncing at once, or a sync tool carrying the folder both ways, never conflict.
struct FolderRemote {
    let path: String

    static let markerName = "rxvault-remote.txt"
    static let markerMagic = "rxvault sync remote 1"

    /// The remote at `path` for the vault `vaultIDHex`, made there when the folder is new or
    /// empty. Refused: another vault's remote (65, both ids named), a folder holding other files
    /// (65), a remote made by a newer rxvault (66), a path that is no folder (64).
    static func open(at path: String, vaultIDHex: String) throws(VaultError) -> FolderRemote {
        let remote = FolderRemote(path: path)
        var info = stat()
        if stat(path, &info) != 0 {
            guard errno == ENOENT else { throw .cannotWrite("cannot reach the remote \(path): \(lastError())") }
            guard mkdir(path, 0o700) == 0 else {
                throw .cannotWrite("cannot make the remote folder \(path): \(lastError())")
            }
        } else if info.st_mode & S_IFMT != S_IFDIR {
            throw .badLocation("the remote \(path) is not a folder: give a folder (a new one is made for you)")
        }
        let marker = path + "/" + markerName
        if let text = try? String(contentsOfFile: marker, encoding: .utf8) {
            let lines = text.split(separator: "\n").map(String.init)
            guard lines.first == markerMagic else {
                if lines.first?.hasPrefix("rxvault sync remote ") == true {
                    throw .unsupportedVersion("the remote \(path) was made by a newer rxvault ('\(lines[0])')")
                }
                throw .refused("\(marker) is not an rxvault remote's marker: nothing was synced")
            }
            guard let theirs = lines.first(where: { $0.hasPrefix("vault ") })?.dropFirst(6) else {
                throw .integrity("\(marker) names no vault: the remote was altered; nothing was synced")
            }
            guard theirs == vaultIDHex else {
                throw .refused(
                    "the remote \(path) carries another vault (id \(theirs)), not this one (id \(vaultIDHex)); nothing was synced"
                )
            }
        } else {
            let entries = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
            guard entries.isEmpty else {
                throw .refused(
                    "\(path) holds files and is not an rxvault remote: give an empty folder, or a new one, for the remote; nothing was synced"
                )
            }
            for folder in ["heads", "chunks"] where mkdir(path + "/" + folder, 0o700) != 0 && errno != EEXIST {
                throw .cannotWrite("cannot make \(path)/\(folder): \(lastError())")
            }
            let text = [
                markerMagic, "vault \(vaultIDHex)",
                "This folder carries an rxvault vault between devices ('rxvault sync'). It holds only ciphertext.",
                "Do not edit it; 'rxvault sync' on each device reads and writes it."
            ].joined(separator: "\n")
            try remote.write(Array((text + "\n").utf8), to: marker)
        }
        return remote
    }

    // MARK: - Heads

    /// The replicas that have a head here (file names that are not a replica's are ignored: a sync
    /// tool's conflict copy, a temporary file).
    func headReplicas() throws(VaultError) -> [ReplicaID] {
        let names: [String]
        do { names = try FileManager.default.contentsOfDirectory(atPath: path + "/heads") } catch {
            throw .integrity("the remote \(path) has no heads folder: it was altered; nothing was synced")
        }
        return names.compactMap { name in Hex.decode(name).flatMap { ReplicaID(bytes: $0) } }
            .filter { names.contains($0.hex) }.sorted()
    }

    func readHead(_ replica: ReplicaID) -> [UInt8]? {
        FileManager.default.contents(atPath: headPath(replica)).map { Array($0) }
    }

    func writeHead(_ replica: ReplicaID, _ bytes: [UInt8]) throws(VaultError) {
        try write(bytes, to: headPath(replica))
    }

    private func headPath(_ replica: ReplicaID) -> String { path + "/heads/" + replica.hex }

    // MARK: - Chunks

    func hasChunk(_ id: ChunkID) -> Bool { access(chunkPath(id), F_OK) == 0 }

    func readChunk(_ id: ChunkID) -> [UInt8]? {
        FileManager.default.contents(atPath: chunkPath(id)).map { Array($0) }
    }

    func writeChunk(_ id: ChunkID, _ bytes: [UInt8]) throws(VaultError) {
        let folder = path + "/chunks/" + String(id.hex.prefix(2))
        guard mkdir(folder, 0o700) == 0 || errno == EEXIST else {
            throw .cannotWrite("cannot make \(folder): \(lastError())")
        }
        try write(bytes, to: chunkPath(id))
    }

    /// Marks a piece as relied on now (its modification time), so a prune elsewhere that finds
    /// no head naming it yet leaves it: only pieces unnamed and untouched for `pruneAfter` go.
    func touchChunk(_ id: ChunkID) {
        utimensat(AT_FDCWD, chunkPath(id), nil, 0)
    }

    /// How long a piece no head names stays: a device may have written it for a head it has not
    /// written yet, or a sync tool may carry that head later than the piece.
    static let pruneAfter: TimeInterval = 24 * 3600

    /// Every piece in the remote with its size and the last time it was written or relied on.
    func chunks() -> [(id: ChunkID, size: Int, modified: TimeInterval)] {
        let folder = path + "/chunks"
        var found: [(id: ChunkID, size: Int, modified: TimeInterval)] = []
        for prefix in (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [] where prefix.count == 2 {
            for name in (try? FileManager.default.contentsOfDirectory(atPath: folder + "/" + prefix)) ?? [] {
                guard name.hasPrefix(prefix), let id = ChunkID(hex: name) else { continue }
                var info = stat()
                guard stat(chunkPath(id), &info) == 0 else { continue }
                found.append(
                    (
                        id, Int(info.st_size),
                        TimeInterval(info.st_mtim.tv_sec) + TimeInterval(info.st_mtim.tv_nsec) / 1e9
                    ))
            }
        }
        return found
    }

    /// Removes a piece; false when it could not be removed (it is gone already, or read-only).
    func removeChunk(_ id: ChunkID) -> Bool { unlink(chunkPath(id)) == 0 }

    private func chunkPath(_ id: ChunkID) -> String {
        path + "/chunks/" + String(id.hex.prefix(2)) + "/" + id.hex
    }

    // MARK: - Writing

    /// `bytes` at `target`, whole or not at all: a temporary file beside it, flushed, renamed over.
    private func write(_ bytes: [UInt8], to target: String) throws(VaultError) {
        let folder = (target as NSString).deletingLastPathComponent
        let temporary = folder + "/.rxvault-" + Hex.encode(randomBytes(8)) + ".tmp"
        let fd = Glibc.open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { throw .cannotWrite("cannot write to the remote \(path): \(lastError())") }
        var written = 0
        while written < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + written, $0.count - written) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else {
                let reason = lastError()
                close(fd)
                unlink(temporary)
                throw .cannotWrite("cannot write to the remote \(path): \(reason)")
            }
            written += n
        }
        let synced = fsync(fd) == 0
        close(fd)
        guard synced, rename(temporary, target) == 0 else {
            let reason = lastError()
            unlink(temporary)
            throw .cannotWrite("cannot write to the remote \(path): \(reason)")
        }
        let directory = Glibc.open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if directory >= 0 {
            fsync(directory)
            close(directory)
        }
    }

    private static func lastError() -> String { String(cString: strerror(errno)) }
    private func lastError() -> String { Self.lastError() }
}
