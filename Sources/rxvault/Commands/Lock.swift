import ArgumentParser
import Foundation
import RxAgent
import RxCrypto
import RxVault

extension RxVaultCommand {
    struct Lock: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "lock",
            abstract: "Lock an unlocked vault: its agent wipes the key and exits.",
            discussion: flowing(
                """
                Owner commands then ask for the passphrase again. Locking a vault that is not
                unlocked is not an error.

                Examples:
                  rxvault lock
                  rxvault lock --all
                """))

        @Flag(help: "Lock every vault this user has unlocked.") var all = false
        @OptionGroup var options: VaultOptions

        func run() throws {
            try CommandRunner.run {
                if all {
                    var locked = 0
                    let directory = AgentAccess.directory
                    // An unsafe folder is said, not skipped: its sockets are not this user's to trust.
                    for socket in try directory.isSafe() ? directory.socketPaths() : [] {
                        if let status = try? AgentClient(socketPath: socket).lock() {
                            Terminal.out("locked \(status.path)")
                            locked += 1
                        }
                    }
                    if locked == 0 { Terminal.out("no vault was unlocked") }
                    return
                }
                try options.requireOwner("lock")
                let path = options.vaultPath
                let header = try options.readHeader(at: path)
                if let status = try AgentAccess.lock(vaultIDHex: header.vaultIDHex) {
                    Terminal.out("locked \(status.path)")
                } else {
                    Terminal.out("\(path) was not unlocked")
                }
            }
        }
    }
}
