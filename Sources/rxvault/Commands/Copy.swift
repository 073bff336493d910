import ArgumentParser
import RxVault

extension RxVaultCommand {
    struct Copy: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "copy",
            abstract: "Copy the vault between a file and a PostgreSQL database, either way.",
            discussion: flowing(
                """
                Copies every row as it is: nothing is decrypted and no passphrase is asked for. The
                target must be new: a file that does not exist, or an empty database (one without
                tables). The copy is compared with the source row by row before 'copied' is said;
                'rxvault check --vault TARGET' then verifies it with the key. A source whose rows
                point at missing ones (what 'check' calls damage) is not copied (exit 76). The
                password for a database comes from PGPASSWORD, PGPASSFILE or ~/.pgpass, never from
                the URL.

                Examples:
                  rxvault copy vault.rxv postgres://rx@db.example/rx
                  rxvault copy postgres://rx@db.example/rx practice.rxv
                """))

        @Argument(help: ArgumentHelp("The vault to copy: a file or a postgres:// URL.", valueName: "source"))
        var source: String

        @Argument(help: ArgumentHelp("Where to copy it: a new file or an empty database.", valueName: "target"))
        var target: String

        @Option(help: "Output format.") var format: DocumentFormat = .table

        func run() throws {
            try CommandRunner.run(json: format == .json) {
                if !VaultLocation.isDatabase(target) {
                    _ = try WriteTarget.file(
                        for: target, replace: false, createsFolders: false, followsLinks: true, example: "copy.rxv")
                }
                let summary = try VaultCopy.copy(
                    from: source, to: target, busyTimeoutMilliseconds: try Environment.busyTimeoutMilliseconds())
                if format == .json {
                    Terminal.out(
                        try jsonText([
                            "schema": "rxvault/copy/v1", "source": summary.source, "target": summary.target,
                            "prescriptions": summary.prescriptions, "versions": summary.versions,
                            "attachments": summary.attachments, "clients": summary.clients,
                            "patients": summary.patients, "auditEntries": summary.auditEntries, "compared": true
                        ]))
                } else {
                    Terminal.out(
                        "copied \(summary.source) to \(summary.target): \(summary.prescriptions) prescription(s) (\(summary.versions) version(s)), \(summary.attachments) attachment(s), \(summary.patients) patient(s), \(summary.clients) client(s), \(summary.auditEntries) audit entr\(summary.auditEntries == 1 ? "y" : "ies"); every row compared"
                    )
                }
            }
        }
    }
}
