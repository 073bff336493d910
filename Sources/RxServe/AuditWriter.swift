import Foundation
import RxVault

/// Writes the reads the server answered to the owner's audit log, on a connection of its own
/// (`Vault.anotherConnection`): the reads being answered on the gateway's connection never wait
/// for these writes, which take a sealed box, a hash and a MAC per entry.
///
/// Only ever into the file at the vault's path: a connection whose file was replaced (renamed
/// over, removed) writes nothing, and the entries wait for the file the gateway follows to; a
/// write the replacement overtook while it waited for the lock is rolled back
/// (`Vault.logServedReads`), and one it overtook in the instant before the commit went into the
/// old file; either is done again in the new one (`.fileReplaced`).
///
/// Its turns run on a thread of their own (`StoreThread`), apart from the gateway's: a write
/// waits for the engine's write lock (SQLite's busy handler, PostgreSQL's round trips), and that
/// wait must block neither Swift's cooperative pool nor the reads being answered.
actor AuditWriter {
    private nonisolated let thread = StoreThread(name: "rxvault-audit")
    nonisolated var unownedExecutor: UnownedSerialExecutor { thread.asUnownedSerialExecutor() }

    /// Whether this turn runs on the actor's own thread (for the tests: never the pool's).
    var runsOnItsThread: Bool { thread.isCurrent }

    private var vault: Vault?
    /// Which file the connection is to (`ServedReadQueue.Batch.generation`).
    private var generation = 0
    /// `ServeSettings.ownerWrites`: false appends the reads for the owner to countersign.
    private let ownerWrites: Bool

    init(vault: sending Vault, ownerWrites: Bool = true) {
        self.vault = vault
        self.ownerWrites = ownerWrites
    }

    enum Outcome: Sendable {
        case written(Vault.ServedReadsWrite)
        /// Nothing was written to the live file: the entries go back in the queue.
        case fileReplaced
    }

    /// Writes `batch` if it was served from the file this connection has open and that file is
    /// still the one at the path.
    func write(_ batch: ServedReadQueue.Batch) throws(VaultError) -> Outcome {
        guard let vault, batch.generation == generation, !vault.fileWasReplaced else { return .fileReplaced }
        if !ownerWrites {
            return .written(try vault.appendServedReads(batch.events, clientKeys: batch.clientKeys))
        }
        guard let write = try vault.logServedReads(batch.events) else { return .fileReplaced }
        if vault.fileWasReplaced {
            // The log under the path is now the new file's: nothing of the old file may stay in it.
            vault.emptyWriteAheadLog()
            return .fileReplaced
        }
        vault.foldWriteAheadLog()
        return .written(write)
    }

    /// Lets go of the old file (after the write under way, if any): its write-ahead log emptied
    /// into it, so the log left under the path holds nothing of it, then the connection closed.
    func release() {
        vault?.emptyWriteAheadLog()
        vault = nil
    }

    /// Opens the file the gateway now serves (`file`); says why not, or nil when it did.
    func follow(_ reopener: VaultReopener, file: VaultFileNumbers, generation: Int) -> String? {
        do throws(VaultError) {
            let opened = try reopener.open()
            guard opened.openFileNumbers() == file else {
                return "\(reopener.path) was replaced again while it was being opened"
            }
            vault = opened
            self.generation = generation
            return nil
        } catch {
            return error.description
        }
    }
}
