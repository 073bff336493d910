import ArgumentParser
import Foundation
import RxCrypto
import RxModel
import RxVault

#if canImport(Glibc)
    import Glibc
#endif

extension RxVaultCommand {
    struct Revoke: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "revoke",
            abstract: "Take back a client app's access to prescriptions.",
            discussion: flowing(
                """
                Deletes the grant and re-keys the prescription (a new data key and version, re-sealed
                for the remaining clients), so the key the client held opens nothing stored from now
                on, and the old sealed key is gone from the file. Revoking cannot take back what the
                client already read or copied.
                """))

        @Argument(help: "The client's name or id prefix.", completion: .custom(Completion.clientNames)) var client:
            String
        @Argument(help: "The prescriptions' ids (any unique prefix).", completion: .custom(Completion.prescriptionIDs))
        var prescriptions: [String] = []
        @Flag(help: "Revoke all of the client's grants.") var all = false
        @OptionGroup var options: VaultOptions

        func validate() throws {
            if all == !prescriptions.isEmpty { throw ValidationError("give the prescriptions to revoke, or --all") }
        }

        func run() throws {
            try CommandRunner.run {
                let vault = try options.openVault(command: "revoke")
                let c = try vault.resolveClient(client)
                let ids = all ? nil : try prescriptions.map { try vault.resolve($0) }
                let revoked = try vault.revoke(c, ids)
                warnIfNotPurged(vault)
                Terminal.out(
                    revoked.isEmpty
                        ? "\(c.name) had no grants"
                        : "revoked \(c.name)'s access to \(revoked.map(\.short).joined(separator: ", "))")
            }
        }
    }
}
