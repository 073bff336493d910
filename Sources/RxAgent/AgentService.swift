import Foundation
import RxCrypto
import RxVault

#if canImport(Glibc)
    import Glibc
#endif

/// An unlocked vault's root key and the rules for handing it out: to the same user only, for
/// the same file only, until the idle timeout or the maximum lifetime (DESIGN.md, "Agent").
///
/// This is the agent's whole policy, apart from sockets and the accept loop (`AgentServer`),
/// so anything else that holds an unlocked vault (`rxvault serve`) can answer the same
/// protocol with the same rules by giving its connections to `AgentConnection.serve`.
/// Its methods may be called from several threads (one lock around each).
public final class AgentService: @unchecked Sendable {
    private let mutex = NSLock()
    public let vaultPath: String
    /// The file as it was when unlocked.
    public let unlocked: VaultFileIdentity
    public let idleTimeout: Double
    public let lifetimeUntil: Double
    private var idleUntilValue: Double
    private var lockReasonValue: String?
    private var rootKey: SecretBytes?
    private let memoryLocked: Bool

    /// When it locks if not used again before.
    public var idleUntil: Double { mutex.withLock { idleUntilValue } }
    /// Why it locked (nil while unlocked).
    public var lockReason: String? { mutex.withLock { lockReasonValue } }
    public var isLocked: Bool { mutex.withLock { rootKey == nil } }
    /// When it locks unless used again.
    public var deadline: Double { mutex.withLock { min(idleUntilValue, lifetimeUntil) } }

    /// Takes `rootKey` (read into locked memory by the caller) for the vault at `vaultPath` and
    /// proves it is that vault's key by opening the vault with it. The path must be absolute (a
    /// database URL names the same database from anywhere).
    public init(
        vaultPath: String, rootKey: SecretBytes, idleTimeout: Double, maxLifetime: Double,
        now: Double = Date().timeIntervalSince1970
    ) throws {
        guard vaultPath.hasPrefix("/") || VaultLocation.isDatabase(vaultPath) else {
            throw AgentError.system("the agent's vault path must be absolute, not \(vaultPath)")
        }
        self.vaultPath = vaultPath
        unlocked = try VaultFileIdentity.read(at: vaultPath)
        _ = try Vault.open(at: vaultPath, with: .rootKey(rootKey))
        // The file may have been replaced while it was opened: it must still be the one read.
        guard try VaultFileIdentity.read(at: vaultPath) == unlocked else {
            throw AgentError.system("\(vaultPath) changed while it was being unlocked")
        }
        self.rootKey = rootKey
        memoryLocked = rootKey.isLocked
        self.idleTimeout = idleTimeout
        idleUntilValue = now + idleTimeout
        lifetimeUntil = now + maxLifetime
    }

    public func status() -> AgentStatus {
        mutex.withLock { currentStatus() }
    }

    private func currentStatus() -> AgentStatus {
        AgentStatus(
            vaultID: unlocked.vaultID, path: vaultPath, pid: getpid(), file: unlocked,
            until: min(idleUntilValue, lifetimeUntil),
            idleUntil: idleUntilValue, lifetimeUntil: lifetimeUntil, idleTimeoutSeconds: idleTimeout,
            memoryLocked: memoryLocked)
    }

    /// The reply to `request` from `peer`, and the key to send after it (only for an accepted
    /// `root-key`). Another user is refused before the request is even looked at.
    public func answer(
        _ request: AgentRequest, from peer: AgentPeer,
        now: Double = Date().timeIntervalSince1970
    ) -> (reply: AgentReply, key: SecretBytes?) {
        mutex.withLock { unlockedAnswer(request, from: peer, now: now) }
    }

    private func unlockedAnswer(_ request: AgentRequest, from peer: AgentPeer, now: Double) -> (
        reply: AgentReply, key: SecretBytes?
    ) {
        guard peer.isSameUser else {
            return (
                .refusal(.permission, "the agent answers only its own user (uid \(geteuid())), not uid \(peer.uid)"),
                nil
            )
        }
        guard request.v == AgentRequest.version else {
            return (.refusal(.badRequest, "protocol version \(request.v) is not \(AgentRequest.version)"), nil)
        }
        expire(now: now)
        switch request.op {
        case .status:
            // A status must not say "unlocked" for a file that is no longer the one unlocked.
            if rootKey != nil, let why = fileChange() { wipe(reason: why) }
            if let lockReasonValue {
                return (.refusal(.locked, "the agent has locked: \(lockReasonValue)", locked: true), nil)
            }
            return (.accepted(currentStatus()), nil)
        case .lock:
            wipe(reason: "it was locked ('rxvault lock')")
            return (.accepted(currentStatus()), nil)
        case .rootKey:
            guard let key = rootKey else {
                return (.refusal(.locked, "the agent has locked: \(lockReasonValue ?? "")", locked: true), nil)
            }
            guard let file = request.file else {
                return (.refusal(.badRequest, "a root-key request names the file"), nil)
            }
            // The agent's own file first: if it changed, nothing more is handed out, to anyone.
            if let why = fileChange() {
                wipe(reason: why)
                return (.refusal(.fileChanged, "the agent locked: \(why) since it was unlocked", locked: true), nil)
            }
            if file != unlocked {
                // Not the agent's file (a copy of the same vault elsewhere, or a header read while
                // it changed): refuse it, stay unlocked for the file it holds.
                return (
                    .refusal(
                        .otherFile,
                        file.device == unlocked.device && file.inode == unlocked.inode
                            ? "the vault's header changed while it was read; try again"
                            : "the agent holds \(vaultPath), not this file (a copy of the same vault?)"), nil
                )
            }
            idleUntilValue = min(now + idleTimeout, lifetimeUntil)
            return (.accepted(currentStatus()), key)
        }
    }

    /// Why the file at the agent's path is no longer the one unlocked (nil when it still is).
    /// `headerToo` false looks only at which file is there (cheap: a stat), for the periodic check.
    ///
    /// Another file at the path is refused from its numbers alone, without opening it: in
    /// `rxvault serve`, whose connections still have the old file open, opening the new one too
    /// would share the old file's -wal and -shm (same names) within one process, which SQLite
    /// cannot tell apart (DESIGN.md, "The file replaced under a running server").
    public func fileChange(headerToo: Bool = true) -> String? {
        guard let (device, inode) = VaultFileIdentity.fileNumbers(vaultPath) else { return "\(vaultPath) was removed" }
        if device != unlocked.device || inode != unlocked.inode {
            return "the file at \(vaultPath) was replaced (a restore, or another copy moved into its place)"
        }
        guard headerToo else { return nil }
        let current: VaultFileIdentity
        do { current = try VaultFileIdentity.read(at: vaultPath) } catch {
            return "\(vaultPath) no longer reads as this vault (\(error))"
        }
        return unlocked.difference(from: current, path: vaultPath)
    }

    /// Locks when the idle timeout or the maximum lifetime has passed.
    public func lockIfDue(now: Double = Date().timeIntervalSince1970) {
        mutex.withLock { expire(now: now) }
    }

    /// Wipes the key now. Idempotent; the first reason is kept.
    public func lock(reason: String) {
        mutex.withLock { wipe(reason: reason) }
    }

    private func expire(now: Double) {
        guard rootKey != nil else { return }
        if now >= lifetimeUntil {
            wipe(reason: "its maximum lifetime ended")
        } else if now >= idleUntilValue {
            wipe(reason: "it was not used for \(Int(idleTimeout)) s")
        }
    }

    private func wipe(reason: String) {
        if lockReasonValue == nil { lockReasonValue = reason }
        rootKey?.wipe()
        rootKey = nil
    }
}
