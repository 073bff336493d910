import Foundation
import RxCrypto
import RxStore

/// `rxvault merge` (issue 48; docs/format.md, "Merge rules"): every change another copy of this
/// vault holds and this one lacks, brought in as one owner write. Both copies are read whole and
/// verified; what each record kind does is decided by the copies' knowledge vectors and the
/// stamps records carry (`WriteStamp`): a record one copy lacks was removed there when that copy
/// has seen the write that made it, and is new in the other otherwise. So a revoked grant, a
/// removed client, a detached attachment stays gone, and nothing written on either side is lost.
extension Vault {
    /// Opens another copy of this vault (a file, a conflict copy, a backup decrypted to a
    /// file, a database) with this vault's root key; `merge` checks it whole before reading it
    /// (`requireWhole`). Refused:
    /// another vault's copy (65, both ids named), a copy this rxvault cannot read (66), a damaged
    /// one (76), one older than format 4 (65: the root key cannot open it; upgrade it first).
    ///
    /// `usingAnchor`: opened as this computer's vault (its writes advance what the computer has
    /// seen), for a copy this device writes to (`sync` with a database); a copy only read is
    /// opened without, so reading it changes nothing this computer remembers.
    public func openCopy(at location: String, named name: String, usingAnchor: Bool = false) throws(VaultError)
        -> Vault
    {
        let (_, theirs) = try VaultHeader.openStore(at: location, busyTimeoutMilliseconds: 5_000)
        guard theirs.vaultID == header.vaultID else {
            throw .refused(
                "\(name) is another vault (id \(theirs.vaultIDHex)), not a copy of this one (id \(header.vaultIDHex))")
        }
        guard theirs.formatVersion >= 4 else {
            throw .invalidInput(
                "\(name) is in format \(theirs.formatVersion); open it with its passphrase and run 'rxvault upgrade' first"
            )
        }
        return try Vault.open(at: location, with: .rootKey(rootKey), clock: clock, anchor: usingAnchor ? anchor : nil)
    }

    /// The copy checked whole, as `check` does (attachments' data aside: their rows are copied as
    /// they are, and their streams are authenticated whenever read).
    private static func requireWhole(_ copy: Vault, named name: String) throws(VaultError) {
        let report = try copy.check(readData: false)
        if let error = report.stages.flatMap(\.errors).first {
            throw .integrity("\(name) is damaged, nothing was merged: \(error)")
        }
    }

    /// Runs `body` with the copy at `location` opened (`openCopy`): a vault file, a database,
    /// or a backup (an age file, decrypted with this vault's root key into a private temporary
    /// file, removed after).
    public func withCopy<T>(at location: String, named name: String, _ body: (Vault) throws -> T) throws -> T {
        guard !VaultLocation.isDatabase(location), !Self.isVaultFile(location) else {
            return try body(try openCopy(at: location, named: name))
        }
        guard let handle = FileHandle(forReadingAtPath: location) else {
            throw VaultError.noVault("cannot read \(name)")
        }
        defer { try? handle.close() }
        let folder = try Self.scratchFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/copy.rxv"
        do {
            _ = try BackupFile.open(handle, with: .rootKey(rootKey), into: path)
        } catch let error as BackupFile.OpenError {
            throw VaultError.refused("\(name) does not open as a backup of this vault: \(error.description)")
        }
        return try body(try openCopy(at: path, named: name))
    }

    private static func isVaultFile(_ path: String) -> Bool {
        guard let handle = FileHandle(forReadingAtPath: path) else { return true }
        defer { try? handle.close() }
        let magic = (try? handle.read(upToCount: 16)) ?? nil
        return magic.map { Array($0) == Array("SQLite format 3\0".utf8) } ?? true
    }

    /// Brings in what `source` (`openCopy`) holds and this vault lacks, in one owner write (none
    /// with `dryRun`, which reports the same). Allowed on a vault whose line of history forked or
    /// rolled back: that is what a merge mends.
    ///
    /// The copy is read in one snapshot throughout (its knowledge, its check, what is brought
    /// in), so a database copy that desks write to meanwhile is merged as one state of it.
    public func merge(from source: Vault, named name: String, dryRun: Bool) throws(VaultError) -> MergeReport {
        try source.read { try mergeInOneSnapshot(of: source, named: name, dryRun: dryRun) }
    }

    private func mergeInOneSnapshot(of source: Vault, named name: String, dryRun: Bool) throws(VaultError)
        -> MergeReport
    {
        let theirs = try source.knowledge()
        let theirCounter = try source.reading { _ in try source.store.vaultState()?.writeCounter ?? 0 }
        let ours = try knowledge()
        if !theirs.clocks.isEmpty, ours.includes(theirs) {
            var report = MergeReport()
            report.upToDate = true
            return report
        }
        // Only a copy that brings something is read beyond its (verified) root.
        try Self.requireWhole(source, named: name)
        // The copy holds all this one does and more: this one becomes it, as git fast-forwards.
        // Nothing is decided, so nothing is this replica's write: the knowledge becomes the
        // copy's, and a device that pushes its state into a database with `sync` does not
        // count a write there that its own file lacks.
        let fastForward = theirs.includes(ours)
        if !dryRun { retireReplicaIfLacking(after: ours.merged(with: theirs)) }
        mergingOverFork = true
        defer { mergingOverFork = false }
        var report = MergeReport()
        do {
            _ = try ownerWrite { (write: OwnerWrite) throws -> Void in
                write.joinedKnowledge = theirs
                write.counterFloor = theirCounter
                var merging = try CopyMerge(vault: self, source: source, write: write, ours: ours, theirs: theirs)
                try merging.run()
                report = merging.report
                // Only the other copy's knowledge and log entries came in: no write of this
                // replica, no merge entry (either would be news to the other copy, and two
                // copies would never stop merging each other's merges).
                guard report.changedRecords, !(fastForward && write.stamp == nil) else {
                    write.countsOwnWrite = false
                    if dryRun { throw WriteAbandoned(reason: nil) }
                    return
                }
                try audit(
                    AuditEvent(
                        time: clock.timestamp(), actor: AuditEvent.ownerActor, action: .merge,
                        prescriptions: (report.prescriptionsAdded + report.prescriptionsUpdated).map(\.hex),
                        detail: "from \(name): \(report.summary); its audit head \(merging.theirAuditHead)"))
                if dryRun { throw WriteAbandoned(reason: nil) }
            }
        } catch is WriteAbandoned {
            return report
        } catch {
            throw VaultError.wrap(error)
        }
        // Key slots or settings the merge changed: the header as it now stands.
        try reloadHeader()
        purge()
        rollback = nil
        compareWithAnchor()
        return report
    }

    /// When even both copies together lack writes this computer made as its replica (they are in
    /// a third copy), the merge's writes are made as a new replica, so those keep their numbers.
    private func retireReplicaIfLacking(after joined: KnowledgeVector) {
        guard let anchor, let known = anchor.knowledge(header.vaultIDHex) else { return }
        guard joined[known.replica] < known.seen[known.replica] else { return }
        let kept = anchor.updateKnowledge(header.vaultIDHex) { stored in
            var updated = stored ?? known
            updated.retire()
            return updated
        }
        replica = kept.replica
    }
}
