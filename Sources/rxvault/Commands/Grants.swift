import ArgumentParser
import Foundation
import RxCrypto
import RxModel
import RxVault

#if canImport(Glibc)
    import Glibc
#endif

extension RxVaultCommand {
    struct Grants: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "grants",
            abstract: "Show who can read what, since when, until when, and when they last read it.")
        @Option(help: "Only this client (name or id prefix).", completion: .custom(Completion.clientNames)) var client:
            String?
        @Option(help: "Only this prescription (id prefix).", completion: .custom(Completion.prescriptionIDs)) var rx:
            String?
        @Option(help: "Output format.") var format: DocumentFormat = .table
        @Flag(
            help:
                "One line per row, however narrow the terminal (otherwise columns that do not fit go on lines beneath each row)."
        )
        var wide = false
        @OptionGroup var options: VaultOptions

        func run() throws {
            try CommandRunner.run(json: format == .json) {
                let vault = try options.openVault(command: "grants")
                let c = try client.map { try vault.resolveClient($0) }
                let p = try rx.map { try vault.resolve($0) }
                let grants = try vault.grants(client: c, prescription: p)
                let today = try Environment.clock().today()
                if format == .json {
                    let items: [[String: Any]] = grants.map { g in
                        var item: [String: Any] = [
                            "client": g.client.name, "clientID": g.client.id.hex, "prescription": g.prescriptionID.hex,
                            "apiID": FHIR.prescriptionResourceID(g.prescriptionID),
                            "granted": g.granted, "attachments": g.includesAttachments,
                            "measurements": g.includesMeasurements, "active": g.isActive(on: today)
                        ]
                        if let e = g.expires { item["expires"] = e.description }
                        if let r = g.lastRead { item["lastRead"] = r }
                        return item
                    }
                    Terminal.out(try jsonText(["schema": "rxvault/grants/v1", "grants": items]))
                } else if grants.isEmpty {
                    Terminal.err("rxvault: no grants")
                } else {
                    Terminal.out(GrantText.table(grants, today: today, style: .forStandardOutput(wide: wide)))
                }
            }
        }
    }
}
