import Foundation
import RxVault

/// `serve --sync REMOTE --sync-every 5m` (issue 48, item 5): the server's device keeps in step
/// with the remote while it serves. A thread of its own, with a connection of its own to the
/// vault (`Vault.reopened`), runs `sync` at once and then every interval; what a sync brings in
/// (a revoke made on another device among it) is what the next request reads, as for any write
/// to the vault. A sync that fails (the remote unreachable, refused as altered or rolled back)
/// is said on stderr and tried again at the next interval: the server goes on serving what the
/// vault holds. A conflict is left for the owner, as `sync` leaves it.
final class ServeSync: @unchecked Sendable {
    private let vault: Vault
    private let remote: String
    private let interval: Double
    private let condition = NSCondition()
    private var stopping = false
    private var finished = false

    init(vault: Vault, remote: String, interval: Double) {
        self.vault = vault
        self.remote = remote
        self.interval = interval
    }

    func start() {
        let thread = Thread { [self] in run() }
        thread.name = "rxvault sync"
        thread.start()
    }

    /// Asks the loop to stop, and waits for a sync under way to end.
    func stop() {
        condition.lock()
        stopping = true
        condition.broadcast()
        while !finished { condition.wait() }
        condition.unlock()
    }

    private func run() {
        let name = VaultLocation.isDatabase(remote) ? VaultLocation.display(remote) : remote
        while true {
            do {
                let report = try vault.sync(with: remote, named: name, acceptRollback: false)
                if !report.inStep {
                    let lines = RxVaultCommand.Sync.lines(report, remote: name)
                    Terminal.err("rxvault: synced with \(name): " + lines.joined(separator: "; "))
                }
            } catch {
                Terminal.err(
                    "rxvault: sync with \(name) failed, tried again in \(AgentDuration(seconds: interval).text): \(error)"
                )
            }
            condition.lock()
            let until = Date().addingTimeInterval(interval)
            while !stopping && condition.wait(until: until) {}
            let done = stopping
            if done {
                finished = true
                condition.broadcast()
            }
            condition.unlock()
            if done { return }
        }
    }
}
