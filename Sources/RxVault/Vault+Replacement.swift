import RxCrypto
import RxModel

#if canImport(Glibc)
    import Glibc
#endif

/// Which file is at a path: its device and inode. A file renamed over the path (a sync tool, an
/// editor, `restore`) or the path removed shows as other numbers, or none.
public struct VaultFileNumbers: Equatable, Sendable, CustomStringConvertible {
    public let device: UInt64
    public let inode: UInt64

    /// The file `path` names now (following links, as SQLite does); nil when there is none. A
    /// database (`VaultLocation`) cannot be renamed over: it is always the same, numbers 0 and 0.
    public init?(path: String) {
        if VaultLocation.isDatabase(path) {
            device = 0
            inode = 0
            return
        }
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        device = UInt64(info.st_dev)
        inode = UInt64(info.st_ino)
    }

    public var description: String { "device \(device), inode \(inode)" }
}

/// Following the vault file when it is replaced while a long-running owner process has it open
/// (`rxvault serve`; DESIGN.md, "The file replaced under a running server").
///
/// SQLite keeps reading and writing the file it opened, which after a rename is a deleted inode
/// nobody will read again. Worse, the old file's write-ahead log keeps its name (`vault.rxv-wal`)
/// and so becomes the new file's: whoever opens the new file next reads the old file's pages from
/// it, and a checkpoint writes them into the new file (a revoke made in the new file is undone).
/// So the process lets go of the old file first (`emptyWriteAheadLog`, then every connection
/// released), and only then opens the new one (`VaultReopener`); and a server folds the log into
/// the file after each of its writes (`foldWriteAheadLog`), so there is rarely anything in it.
extension Vault {
    /// Whether the file this vault has open is no longer the one at its path (renamed over or
    /// removed): the store's own comparison (SQLite's, of its descriptor with the path).
    public var fileWasReplaced: Bool { store.wasReplaced() }

    /// The device and inode of the file this vault has open; nil when it is not (or no longer)
    /// the file at its path. The path is looked at first, then SQLite confirms its descriptor is
    /// still that file, so the numbers are never those of a file that arrived in between.
    public func openFileNumbers() -> VaultFileNumbers? {
        guard let numbers = VaultFileNumbers(path: path), !fileWasReplaced else { return nil }
        return numbers
    }

    /// Copies the write-ahead log into the file this vault has open and truncates the log (it
    /// waits for readers, up to the busy timeout), so that a log left under the path of a
    /// replaced file holds nothing of the old file for the new one. False when a reader kept it
    /// from finishing.
    @discardableResult
    public func emptyWriteAheadLog() -> Bool { store.purgeDeletedContent() }

    /// Copies what the write-ahead log holds into the file, as far as no reader needs it, and
    /// empties the log when no reader uses it, without waiting: after a server's write, so the
    /// file on disk is whole (a copy of it alone is the vault as of that write) and a file
    /// renamed over it meets a log with nothing of the old file left to read.
    @discardableResult
    public func foldWriteAheadLog() -> Bool { store.foldJournalWithoutWaiting() }

    /// What is needed to open this vault's file again with the root key it was opened with (no
    /// passphrase): for a server whose file was replaced.
    public func reopener(busyTimeoutMilliseconds: Int32) -> VaultReopener {
        VaultReopener(
            path: path, vaultIDHex: header.vaultIDHex, rootKey: rootKey, clock: clock, anchor: anchor,
            busyTimeoutMilliseconds: busyTimeoutMilliseconds)
    }
}

/// Opens the file at a vault's path with the root key a server holds, once the file it had open
/// was replaced, and accepts it only as the same vault as its owner left it. Holds the root key
/// (the same zeroed-on-release buffer the vault held) for as long as the server runs.
public struct VaultReopener: Sendable {
    public let path: String
    let vaultIDHex: String
    let rootKey: SecretBytes
    let clock: VaultClock
    let anchor: RollbackAnchor?
    let busyTimeoutMilliseconds: Int32

    /// Today by the vault's clock (what grants expire by), with or without a file open.
    public var today: CalendarDate { clock.today() }

    /// The vault now at the path, proved to be this vault as its owner left it:
    /// - the same vault id (another vault moved into place is refused, by name);
    /// - a header whose audit key the held root key derives, and, from format 4, key slots the
    ///   owner's key ring vouches for (a MAC under a sub-key of the root key): the file's key
    ///   wrapping is one the holder of this root key wrote;
    /// - a state root, client list and audit head that verify under the key;
    /// - no older than what this computer has seen of the vault (the rollback anchor): an older
    ///   copy put in place would bring back grants revoked since, and could not log its reads.
    ///
    /// Must be called only once every connection to the old file is released (see `Vault`'s
    /// extension above). The errors say why in words, for the owner.
    public func open() throws(VaultError) -> Vault {
        let header = try VaultHeader.read(at: path)
        guard header.vaultIDHex == vaultIDHex else {
            throw .refused(
                "\(path) holds another vault now (\(header.vaultIDHex.prefix(8))), not the one being served (\(vaultIDHex.prefix(8)))"
            )
        }
        let vault: Vault
        do {
            vault = try Vault.open(
                at: path, with: .rootKey(rootKey), clock: clock, busyTimeoutMilliseconds: busyTimeoutMilliseconds,
                anchor: anchor)
        } catch .integrity(let why) {
            throw .refused("the file at \(path) does not open with the key the server holds (\(why))")
        }
        guard vault.header.vaultIDHex == vaultIDHex else {
            throw .refused("\(path) was replaced again while it was opened")
        }
        if let rollback = vault.rollback { throw .refused(Vault.rollbackMessage(rollback)) }
        do { _ = try vault.writeCounter() } catch .integrity(let why) {
            throw .refused("the file at \(path) does not verify with the key the server holds (\(why))")
        }
        return vault
    }
}
