import ArgumentParser
import Foundation
import RxAgent
import RxCrypto
import RxVault

extension RxVaultCommand {
    /// The agent itself (`unlock` starts it; never run by hand).
    struct Agent: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "_agent", shouldDisplay: false)

        @Option var vaultFile: String
        @Option var socket: String
        @Option var idleSeconds: Double
        @Option var lifetimeSeconds: Double

        func run() throws {
            guard vaultFile.hasPrefix("/") || VaultLocation.isDatabase(vaultFile), idleSeconds > 0, lifetimeSeconds > 0
            else { throw ExitCode(64) }
            let status = AgentProcess.main(
                AgentProcess.Settings(
                    vaultPath: vaultFile, socketPath: socket,
                    idleTimeout: idleSeconds, maxLifetime: lifetimeSeconds))
            throw ExitCode(status)
        }
    }
}
