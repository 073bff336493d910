import Foundation
import RxCrypto
import RxStore

#if canImport(Glibc)
    import Glibc
#endif

/// `rxvault sync REMOTE` (issue 48; docs/guide.md, "Keeping devices in step"): this device pulls
/// what the remote holds that its knowledge vector lacks, merges it (`merge`, with every rule
/// and check of a merge), and pushes its own state, so every device that syncs with the remote
/// converges. A remote is a folder (`FolderRemote`: only ciphertext, one head per device) or a
/// vault in PostgreSQL (merged both ways). A device in step reads the heads, compares vectors,
/// and moves nothing. A sync never resolves a conflict: the merge marks it, the owner resolves it.
extension Vault {
    public func sync(with location: String, named name: String, acceptRollback: Bool) throws(VaultError)
        -> SyncReport
    {
        if header.formatVersion < 8 { _ = try upgrade() }
        if VaultLocation.isDatabase(location) {
            return try syncWithDatabase(location, named: name, acceptRollback: acceptRollback)
        }
        return try syncWithFolder(location, named: name, acceptRollback: acceptRollback)
    }

    /// Another connection to this vault with the same key and the same state folder: for work
    /// on a thread of its own (`serve --sync`), as a second command would open it.
    public func reopened() throws(VaultError) -> Vault {
        try Vault.open(at: path, with: .rootKey(rootKey), clock: clock, anchor: anchor)
    }

    // MARK: - A folder

    private func syncWithFolder(_ path: String, named name: String, acceptRollback: Bool) throws(VaultError)
        -> SyncReport
    {
        let remote = try FolderRemote.open(at: path, vaultIDHex: header.vaultIDHex)
        let keys = try SyncKeys(rootKey: rootKey, vaultID: header.vaultID)
        var heads = try readHeads(of: remote, named: name, keys: keys)
        let memory = anchor.map { RemoteMemory(anchor: $0, vaultIDHex: header.vaultIDHex, location: path) }
        if let memory, !acceptRollback { try Self.compare(heads, with: memory.seen(), remote: name) }
        var report = SyncReport()
        report.headsRead = heads.count

        let scratch = try Self.scratchFolder()
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        let before = try knowledge()
        let toPull = heads.values.filter { !before.includes($0.knowledge) }.sorted { $0.replica < $1.replica }
        if !toPull.isEmpty {
            let local = try pageSnapshot(into: scratch + "/local.rxv", keys: keys).chunks
            // Every state to pull is rebuilt and authenticated before anything is merged: an
            // altered remote is refused with nothing written.
            var rebuilt: [(RemoteHead, String)] = []
            for head in toPull {
                let file = scratch + "/\(head.replica.hex).rxv"
                try rebuild(head, into: file, from: remote, named: name, local: local, keys: keys, report: &report)
                rebuilt.append((head, file))
            }
            for (head, file) in rebuilt {
                let device = "device \(head.replica.short)'s copy in \(name)"
                let merged = try merge(from: try openCopy(at: file, named: device), named: device, dryRun: false)
                report.merged.append((head.replica.short, merged))
            }
        }

        let ours = try knowledge()
        // Pushed only when no head holds all this device knows: a state another device already
        // pushed is not pushed again (as its own pages, which would all be new). Pushed again
        // when this device's own head names a piece the remote lacks (pruned by a device that
        // had not seen that head yet, or lost): the remote heals at this device's next sync.
        let own = heads[writingReplica()]
        let broken = own.map { $0.chunks.contains { !remote.hasChunk($0) } } ?? false
        if broken || !heads.values.contains(where: { $0.knowledge.includes(ours) }) {
            let head = try push(to: remote, scratch: scratch, keys: keys, report: &report)
            heads[head.replica] = head
            report.pushed = true
            prune(remote, keeping: heads.values, report: &report)
        }
        memory?.remember(heads.mapValues(\.knowledge))
        report.conflicts = report.merged.flatMap(\.report.conflicts)
        return report
    }

    /// Every head in the remote, authenticated; refused (76) when one does not open as this
    /// vault's head of the device its name says.
    private func readHeads(of remote: FolderRemote, named name: String, keys: SyncKeys) throws(VaultError)
        -> [ReplicaID: RemoteHead]
    {
        var heads: [ReplicaID: RemoteHead] = [:]
        for replica in try remote.headReplicas() {
            guard let box = remote.readHead(replica) else { continue }
            guard let plain = keys.open(head: box, replica: replica), let head = RemoteHead.decode(plain),
                head.vaultID == header.vaultID, head.replica == replica,
                head.chunkSize > 0, head.chunkSize <= 1 << 20
            else {
                throw .integrity(
                    "the remote \(name) was altered or is damaged: device \(replica.short)'s head does not authenticate; nothing was synced"
                )
            }
            guard head.formatVersion <= VaultHeader.currentFormatVersion else {
                throw .unsupportedVersion(
                    "device \(replica.short) pushed a vault in format \(head.formatVersion) to \(name); this rxvault reads up to \(VaultHeader.currentFormatVersion): install a newer rxvault"
                )
            }
            heads[replica] = head
        }
        return heads
    }

    /// Refuses a remote whose heads hold less than, or another line than, what this computer saw
    /// there (`RemoteMemory`).
    static func compare(_ heads: [ReplicaID: RemoteHead], with seen: [ReplicaID: KnowledgeVector], remote: String)
        throws(VaultError)
    {
        let remedy =
            "nothing was synced. If the remote was restored or emptied on purpose, 'rxvault sync \(remote) --accept-rollback' takes it as it is now"
        for (replica, known) in seen.sorted(by: { $0.key < $1.key }) {
            guard let head = heads[replica] else {
                throw .integrity(
                    "the remote \(remote) was rolled back or altered: device \(replica.short)'s head, seen there before, is gone; \(remedy)"
                )
            }
            switch head.knowledge.relation(to: known) {
            case .same, .later: continue
            case .earlier:
                let fewer = known.total - head.knowledge.total
                throw .integrity(
                    "the remote \(remote) was rolled back: device \(replica.short)'s head holds \(fewer) write\(fewer == 1 ? "" : "s") fewer than this computer saw there; \(remedy)"
                )
            case .forked:
                throw .integrity(
                    "the remote \(remote) holds another line of history of device \(replica.short) than this computer saw there (a copy of the remote put back?); \(remedy)"
                )
            }
        }
    }

    /// Rebuilds the file `head` describes at `file`: each piece from this device's own snapshot
    /// when it has it, else from the remote, opened and checked against its name.
    private func rebuild(
        _ head: RemoteHead, into file: String, from remote: FolderRemote, named name: String, local: LocalChunks,
        keys: SyncKeys, report: inout SyncReport
    ) throws(VaultError) {
        let fd = Glibc.open(file, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw .cannotWrite("cannot write \(file): \(String(cString: strerror(errno)))") }
        defer { Glibc.close(fd) }
        var length: UInt64 = 0
        for (index, id) in head.chunks.enumerated() {
            var piece: [UInt8]
            if head.chunkSize == LocalChunks.chunkSize, let mine = local.chunk(id) {
                piece = mine
                report.chunksReused += 1
            } else {
                guard let box = remote.readChunk(id) else {
                    throw .unavailable(
                        "the remote \(name) is not complete: a piece of device \(head.replica.short)'s copy (chunk \(id.hex.prefix(12))) is missing; a sync tool may still be carrying it, try again later. Nothing was synced"
                    )
                }
                guard let plain = keys.open(chunk: box, id: id) else {
                    throw .integrity(
                        "the remote \(name) was altered or is damaged: chunk \(id.hex.prefix(12)) of device \(head.replica.short)'s copy does not authenticate; nothing was synced"
                    )
                }
                piece = plain
                report.chunksDownloaded += 1
                report.bytesDownloaded += box.count
            }
            let last = index == head.chunks.count - 1
            guard piece.count == head.chunkSize || (last && piece.count <= head.chunkSize) else {
                throw .integrity(
                    "the remote \(name) was altered: device \(head.replica.short)'s copy has a piece of the wrong size; nothing was synced"
                )
            }
            let written = piece.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            guard written == piece.count else {
                throw .cannotWrite("cannot write \(file): \(String(cString: strerror(errno)))")
            }
            length += UInt64(piece.count)
        }
        guard length == head.length else {
            throw .integrity(
                "the remote \(name) was altered: device \(head.replica.short)'s copy is not the length its head says; nothing was synced"
            )
        }
    }

    /// A page-for-page copy of this vault in `file`, cut into pieces, with the knowledge of the
    /// same read snapshot.
    private func pageSnapshot(into file: String, keys: SyncKeys) throws(VaultError)
        -> (chunks: LocalChunks, knowledge: KnowledgeVector)
    {
        let knowledge = try read { () throws -> KnowledgeVector in
            let knowledge = try verifyStateNow()?.knowledge ?? .empty
            try store.snapshotKeepingPages(to: file)
            return knowledge
        }
        return (try LocalChunks(file: file, keys: keys), knowledge)
    }

    /// Uploads the pieces of this vault's snapshot the remote lacks, then this device's head.
    private func push(to remote: FolderRemote, scratch: String, keys: SyncKeys, report: inout SyncReport)
        throws(VaultError) -> RemoteHead
    {
        let file = scratch + "/push.rxv"
        let (chunks, knowledge) = try pageSnapshot(into: file, keys: keys)
        var uploaded = Set<ChunkID>()
        for id in chunks.ids where !uploaded.contains(id) {
            uploaded.insert(id)
            if remote.hasChunk(id) {
                // Relied on from now: a prune that has not seen this head yet leaves it.
                remote.touchChunk(id)
                report.chunksAlreadyThere += 1
                continue
            }
            guard let plain = chunks.chunk(id) else { throw .cannotWrite("cannot read the snapshot at \(file)") }
            let box = try keys.seal(chunk: plain, id: id)
            try remote.writeChunk(id, box)
            report.chunksUploaded += 1
            report.bytesUploaded += box.count
        }
        let replica = writingReplica()
        let head = RemoteHead(
            vaultID: header.vaultID, replica: replica, formatVersion: header.formatVersion, length: chunks.length,
            chunkSize: LocalChunks.chunkSize, knowledge: knowledge, pushed: Int64(Date().timeIntervalSince1970),
            chunks: chunks.ids)
        try remote.writeHead(replica, try keys.seal(head: head.encoded(), replica: replica))
        return head
    }

    /// After a push: removes the pieces no head names that nobody wrote or relied on for
    /// `FolderRemote.pruneAfter` (the states devices pushed before their latest), so the remote
    /// holds about one state per device however often they sync. A piece a device is about to
    /// name is recent (written, or touched by its push), so it stays; a head left naming a piece
    /// removed anyway is pushed again by its own device at its next sync.
    private func prune(_ remote: FolderRemote, keeping heads: some Sequence<RemoteHead>, report: inout SyncReport) {
        let named = Set(heads.flatMap(\.chunks))
        let before = Date().timeIntervalSince1970 - FolderRemote.pruneAfter
        for chunk in remote.chunks() where !named.contains(chunk.id) && chunk.modified < before {
            if remote.removeChunk(chunk.id) {
                report.chunksPruned += 1
                report.bytesPruned += chunk.size
            }
        }
    }

    /// A private (0700) folder of its own under the temporary folder, for copies of the vault
    /// that a merge or a sync reads (a decrypted backup, a state rebuilt from a remote).
    static func scratchFolder() throws(VaultError) -> String {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "rxvault-copy-\(Hex.encode(randomBytes(8)))"
        ).path
        guard mkdir(folder, 0o700) == 0 else {
            throw .cannotWrite("cannot make a private temporary folder: \(String(cString: strerror(errno)))")
        }
        return folder
    }

    // MARK: - A database

    /// A vault in PostgreSQL as the remote: merged in here, then this vault merged into it (a
    /// fast-forward when it lacks only what this device holds), then anything that second merge
    /// wrote brought back, so both end with the same knowledge.
    private func syncWithDatabase(_ url: String, named name: String, acceptRollback: Bool) throws(VaultError)
        -> SyncReport
    {
        // Read as a copy (what this computer saw elsewhere says nothing of it); written to as
        // this computer's vault, so its writes count in what the computer has seen.
        let remote = try openCopy(at: url, named: name)
        let memory = anchor.map { RemoteMemory(anchor: $0, vaultIDHex: header.vaultIDHex, location: url) }
        let database = ReplicaID(bytes: Array(repeating: 0, count: ReplicaID.byteCount))!
        if let memory, !acceptRollback, let seen = memory.seen()[database], !(try remote.knowledge()).includes(seen) {
            throw .integrity(
                "the database \(name) was rolled back or replaced: it lacks writes this computer saw there; nothing was synced. If it was restored on purpose, 'rxvault sync \(name) --accept-rollback' takes it as it is now"
            )
        }
        var report = SyncReport()
        report.headsRead = 1
        let pulled = try merge(from: remote, named: name, dryRun: false)
        if !pulled.upToDate { report.merged.append(("the database", pulled)) }
        if !(try remote.knowledge()).includes(try knowledge()) {
            let target = try openCopy(at: url, named: name, usingAnchor: true)
            _ = try target.merge(from: self, named: "a device's copy (\(VaultLocation.display(path)))", dryRun: false)
            report.pushed = true
            if !(try knowledge()).includes(try remote.knowledge()) {
                _ = try merge(from: remote, named: name, dryRun: false)
            }
        }
        memory?.remember([database: try remote.knowledge()])
        report.conflicts = report.merged.flatMap(\.report.conflicts)
        return report
    }
}
