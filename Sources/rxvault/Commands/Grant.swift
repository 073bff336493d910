import ArgumentParser
import Foundation
import RxCrypto
import RxModel
import RxVault

#if canImport(Glibc)
    import Glibc
#endif

extension RxVaultCommand {
    struct Grant: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "grant",
            abstract: "Let a client app read specific prescriptions, or change the terms of its grants.",
            discussion: flowing(
                """
                The prescription's key (and its attachments' keys, unless --no-attachments) is sealed
                to the client's key: it can read these and nothing else, even with the vault file.
                --expires takes a date (the last day it works) or a duration such as 30d, 12w, 6m.

                --measurements also seals the prescription's patient's measurements (axial
                length, visual acuity: 'rxvault measurement'), as they are now and after every
                change, until the grant ends or --no-measurements takes them out.

                Granting again keeps what is not restated: the end stays unless --expires or
                --no-expiry is given, the attachment setting unless --attachments or
                --no-attachments is, and the measurements unless --measurements or
                --no-measurements is. Each prescription's line says what changed.

                Examples:
                  rxvault grant lens-shop 3f9a 7c01 --expires 30d
                  rxvault grant lens-shop 3f9a --expires 2026-12-31   # earlier or later
                  rxvault grant lens-shop 3f9a --no-expiry --attachments
                  rxvault grant myopia-app 5d2e --measurements
                """))

        @Argument(help: "The client's name or id prefix.", completion: .custom(Completion.clientNames)) var client:
            String
        @Argument(help: "The prescriptions' ids (any unique prefix).", completion: .custom(Completion.prescriptionIDs))
        var prescriptions: [String]
        @OptionGroup var terms: GrantTermsOptions
        @OptionGroup var options: VaultOptions

        func run() throws {
            try CommandRunner.run {
                let end = try terms.expiry()
                let vault = try options.openVault(command: "grant")
                let c = try vault.resolveClient(client)
                let ids = try prescriptions.map { try vault.resolve($0) }
                let outcomes = try vault.grant(
                    c, ids, expires: end, attachments: terms.attachments, measurements: terms.measurements)
                for outcome in outcomes { Terminal.out("\(c.name): \(outcome.prescriptionID.short) \(outcome)") }
                if terms.statesNothing && outcomes.contains(where: { !$0.changed }) {
                    Terminal.err(
                        "rxvault: hint: a repeated grant keeps its terms; --expires, --no-expiry, --attachments, --measurements and their --no- forms change them"
                    )
                }
            }
        }
    }
}
