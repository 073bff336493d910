import ArgumentParser
import RxVault

extension RxVaultCommand {
    struct Upgrade: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "upgrade",
            abstract: "Upgrade the vault file to the newest format now.",
            discussion: flowing(
                """
                Any owner command that changes the vault upgrades an older vault first, in a
                transaction of its own; this does only that, so a script can upgrade on purpose. The
                upgrade is atomic: the file is either all old format or all new. An older rxvault cannot open the
                upgraded file. Format 3 stops the file from showing which client may read which
                prescription and the clients' public keys (SECURITY.md, "What the file reveals").

                Examples:
                  rxvault upgrade
                  rxvault upgrade --format json
                """))

        @Option(help: "Output format.") var format: DocumentFormat = .table
        @OptionGroup var options: VaultOptions

        func run() throws {
            try CommandRunner.run(json: format == .json) {
                let vault = try options.openVault(command: "upgrade")
                let (from, to) = try vault.upgrade()
                if format == .json {
                    Terminal.out(
                        try jsonText(["schema": "rxvault/upgrade/v1", "from": from, "to": to, "upgraded": from != to]))
                } else if from == to {
                    Terminal.out("the vault is already in format \(to); nothing to do")
                } else {
                    Terminal.out("upgraded the vault from format \(from) to format \(to)")
                }
            }
        }
    }
}
