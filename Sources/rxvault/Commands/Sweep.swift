import ArgumentParser
import RxVault

extension RxVaultCommand {
    struct Sweep: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "sweep",
            abstract: "Countersign what servers and clients logged, and revoke expired grants, now.",
            discussion: flowing(
                """
                Every owner command that changes the vault first countersigns the audit entries
                appended since the owner's last write (the reads clients logged; on a vault in
                PostgreSQL, every read and access request `serve` took) and revokes the grants that
                have expired, re-keying what they could read. This does only that, as one owner
                write. Run it on a timer where the owner seldom writes and `serve` runs on a
                database (docs/deploy.md): until then `check` counts the entries waiting, and an
                expired grant, refused by `serve` at once, is not yet re-keyed. An entry that is
                not a genuine client entry is left unsigned, for `check` and `log` to report.

                Examples:
                  rxvault sweep
                  rxvault sweep --format json
                """))

        @Option(help: "Output format.") var format: DocumentFormat = .table
        @OptionGroup var options: VaultOptions

        func run() throws {
            try CommandRunner.run(json: format == .json) {
                let vault = try options.openVault(command: "sweep")
                let swept = try vault.sweep()
                if format == .json {
                    Terminal.out(
                        try jsonText([
                            "schema": "rxvault/sweep/v1", "countersigned": swept.countersigned,
                            "refused": swept.refused, "expiredGrants": swept.expiredGrants
                        ]))
                    return
                }
                let entries = swept.countersigned == 1 ? "1 log entry" : "\(swept.countersigned) log entries"
                Terminal.out("countersigned \(entries); revoked \(counted(swept.expiredGrants, "expired grant"))")
                if swept.refused > 0 {
                    Terminal.err(
                        "rxvault: \(swept.refused == 1 ? "1 entry" : "\(swept.refused) entries") left unsigned "
                            + "(`rxvault check` says why)")
                }
            }
        }
    }
}
