import ArgumentParser
import Foundation
import RxStorePostgres
import RxVault

/// The root command: an `AsyncParsableCommand` (as swift-argument-parser asks of a root whose
/// subcommands include an async one, `serve`); every other command stays a `ParsableCommand`
/// and runs as before.
@main
struct RxVaultCommand: AsyncParsableCommand {
    static let version = "0.5.0-dev"

    static let configuration = CommandConfiguration(
        commandName: "rxvault",
        abstract: "Keep glasses and contact-lens prescriptions in one encrypted vault file.",
        discussion: flowing(
            """
            Start with 'rxvault init', then 'rxvault add glasses ...' or 'rxvault add contacts ...'.
            The passphrase is read from --passphrase-file, --passphrase-fd, RXVAULT_PASSPHRASE_FILE,
            or asked for at the terminal; never from the command line. 'rxvault unlock' asks once,
            and owner commands on that vault then need none until it locks.

            Examples:
              rxvault init
              rxvault add glasses --patient "Sam Doe" --prescriber "Dr Lee" \\
                  --issued 2026-03-01 --expires 2028-03-01 \\
                  --od "-2.25 -0.75 x180" --os "-2.00" --pd 63
              rxvault list
              rxvault show 3f9a --cyl plus
            """),
        version: version,
        // Grouped in `--help` as git groups its own; the order within is the order of use.
        subcommands: [ParseUntrusted.self, Agent.self],
        groupedSubcommands: [
            CommandGroup(
                name: "Set up and keys",
                subcommands: [
                    Init.self, Status.self, Passwd.self, Key.self, Config.self, Unlock.self, Lock.self
                ]),
            CommandGroup(
                name: "Prescriptions",
                subcommands: [
                    Add.self, List.self, Query.self, Due.self, Show.self, Edit.self, History.self, Remove.self
                ]),
            CommandGroup(
                name: "Patients",
                subcommands: [Patients.self, PatientCommand.self, MeasurementCommand.self, TrendCommand.self]),
            CommandGroup(
                name: "Attachments",
                subcommands: [Attach.self, Attachments.self, Extract.self, Detach.self, Preview.self]),
            CommandGroup(
                name: "Sharing with client apps",
                subcommands: [
                    Client.self, Grant.self, Revoke.self, Grants.self, Log.self, Requests.self, Serve.self, Sweep.self
                ]),
            CommandGroup(
                name: "Files and backups",
                subcommands: [
                    Check.self, Upgrade.self, Export.self, Import.self, Backup.self, Restore.self, Copy.self,
                    Merge.self, Sync.self, Conflicts.self, Resolve.self
                ])
        ])

    @OptionGroup var options: VaultOptions

    static func main() async {
        // First of all: no core dumps, key memory locked (every kind of rxvault process comes through here).
        if let problem = ProcessProtection.apply() {
            CommandRunner.report(status: .failure, message: problem, hint: nil, json: false)
            Foundation.exit(ExitStatus.failure.rawValue)
        }
        // Vaults in PostgreSQL (`--vault postgres://...`): the engine, with libpq's variables.
        VaultLocation.databaseEngine = PostgresEngine(environment: ProcessInfo.processInfo.environment)
        // A file-size limit (a full disk quota, or RLIMIT_FSIZE) must give a clear "cannot write"
        // from SQLite, not kill the process in the middle of a transaction.
        signal(SIGXFSZ, SIG_IGN)
        // Before any argument is parsed: Swift has already replaced bytes that are not UTF-8.
        if let refusal = ArgumentEncoding.refusal() {
            CommandRunner.report(
                status: refusal.status, message: refusal.message, hint: refusal.hint,
                json: ArgumentErrorReport.wantsJSON(Array(CommandLine.arguments.dropFirst())))
            Foundation.exit(refusal.status.rawValue)
        }
        do {
            var command = try parseAsRoot()
            if var asyncCommand = command as? AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            // Command-line errors take rxvault's own form (docs/reference.md, "Output and errors").
            if let status = ArgumentErrorReport.report(error, arguments: Array(CommandLine.arguments.dropFirst())) {
                Foundation.exit(status)
            }
            exit(withError: error)
        }
    }
}

#if canImport(Glibc)
    import Glibc
#endif
