import Foundation
import RxStore

#if canImport(Glibc)
    import Glibc
#endif

/// Putting a restored vault file in place. The target path never names a missing or half-written
/// file: a new vault is hard-linked into place, and a replaced one is kept under a fresh
/// `.bak` name (hard link) before the verified file is renamed over it in one step.
extension BackupFile {
    public struct Installed: Sendable {
        /// Where the replaced vault now lives, if there was one.
        public let previous: String?
    }

    /// Moves the verified vault at `temporary` (same directory as `target`) to `target`.
    /// Without `replacing`, refuses an existing target. With it, first folds the old vault's
    /// write-ahead log into its main file and refuses (`.busy`) if another process still has it open.
    public static func install(_ temporary: String, at target: String, replacing: Bool) throws(VaultError) -> Installed
    {
        let exists = pathExists(target)
        for suffix in ["-wal", "-shm"] where !exists && pathExists(target + suffix) {
            throw .invalidInput(
                "\(target + suffix) exists without \(target) (left by a vault that was moved or deleted); move it away first"
            )
        }
        guard exists else {
            guard link(temporary, target) == 0 else { throw .cannotWrite("cannot create \(target): \(errnoText())") }
            syncDirectory(of: target)
            return Installed(previous: nil)
        }
        guard replacing else { throw .alreadyExists(path: target) }
        try quiesce(target)
        let previous = freeName(for: target + ".bak")
        guard link(target, previous) == 0 else {
            throw .cannotWrite("cannot keep the old vault as \(previous): \(errnoText())")
        }
        guard rename(temporary, target) == 0 else {
            let why = errnoText()
            unlink(previous)
            throw .cannotWrite("cannot replace \(target): \(why)")
        }
        syncDirectory(of: target)
        return Installed(previous: previous)
    }

    /// Undoes a replacing install (the restored vault failed its last check): the old vault
    /// goes back under `target` in one rename.
    public static func rollBack(_ installed: Installed, at target: String) {
        if let previous = installed.previous { rename(previous, target) } else { unlink(target) }
        syncDirectory(of: target)
    }

    /// Checkpoints the old vault's WAL into its main file and closes it; SQLite then removes
    /// the -wal and -shm files, unless another connection still has the vault open.
    private static func quiesce(_ target: String) throws(VaultError) {
        if pathExists(target + "-wal") {
            do {
                guard try SQLiteRecordStore.foldJournal(ofFileAt: target, busyTimeoutMilliseconds: 2_000) else {
                    throw VaultError.busy
                }
            } catch let error as VaultError {
                throw error
            } catch let error as StoreError {
                if case .busy = error { throw .busy }
                // Not a vault we can open: the file is still kept whole as .bak; its journal too.
            } catch { throw .internalError("\(error)") }
        }
        // The last connection to close removes the WAL; if it is still there, someone else has
        // the vault open and could write to the old file after it is replaced.
        if pathExists(target + "-wal") { throw .busy }
        unlink(target + "-shm")
    }

    private static func freeName(for base: String) -> String {
        if !pathExists(base) { return base }
        var n = 1
        while pathExists("\(base).\(n)") { n += 1 }
        return "\(base).\(n)"
    }

    private static func pathExists(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0
    }

    private static func errnoText() -> String { String(cString: strerror(errno)) }

    /// Makes the rename durable: the directory entry is flushed, not only the file.
    static func syncDirectory(of path: String) {
        let directory = PathText.folder(of: path)
        let fd = Glibc.open(directory.isEmpty ? "." : directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { return }
        fsync(fd)
        close(fd)
    }
}
