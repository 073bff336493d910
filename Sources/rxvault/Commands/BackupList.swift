import ArgumentParser
import Foundation
import RxCrypto
import RxVault

#if canImport(Glibc)
    import Glibc
#endif

extension RxVaultCommand {
    struct BackupList: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "list",
            abstract:
                "List the backups in a folder: time, vault, size, key; with --verify whether each opens and checks.",
            discussion: flowing(
                """
                Lists the files named as 'rxvault backup DIR' names them, oldest first. Without any
                key, the time and vault come from the file name (a claim: anyone can rename a file);
                a backup to recipients also carries them in a label in its age header, and a name
                that disagrees with it is reported. With --verify each backup is opened and checked
                as 'backup verify' does, and its name is checked against what is inside. Exits 76 if
                any backup fails, 77 if one does not open with the keys given (or none was given for it).

                Examples:
                  rxvault backup list ~/backups/rxvault
                  rxvault backup list ~/backups/rxvault --verify --age-identity ~/backup.key
                  rxvault backup list ~/backups --verify --age-identity id.key --recovery
                  rxvault backup list ~/backups/rxvault --format json
                """))

        @Argument(help: "The folder.") var folder: String
        @OptionGroup var keys: BackupKeyOptions
        @Option(help: "Output format.") var format: DocumentFormat = .table
        @OptionGroup var options: VaultOptions

        func run() throws {
            try CommandRunner.run(json: format == .json) {
                let entries = try BackupFolder.readable(folder) {
                    try BackupFolder.scan(folder, readWhole: keys.verify)
                }
                var outcomes: [BackupCheck.Outcome?] = Array(repeating: nil, count: entries.count)
                if keys.verify && !entries.isEmpty {
                    let checker = try BackupCheck(keys: keys, options: options, label: "the backups in \(folder)")
                    // Each backup is opened and checked whole: say how far it got, on a terminal.
                    let progress = Progress("verifying backups")
                    defer { progress.finish() }
                    for (i, entry) in entries.enumerated() {
                        progress.update(i, entries.count)
                        outcomes[i] = checker.check(entry)
                    }
                }
                if format == .json {
                    let items: [[String: Any]] = zip(entries, outcomes).map { entry, outcome in
                        var item: [String: Any] = [
                            "file": entry.fileName, "time": entry.name.time.iso, "vault": entry.name.vault,
                            "size": entry.size, "armored": entry.armored, "labelled": entry.label != nil
                        ]
                        switch entry.kind {
                        case .passphrase?: item["key"] = "passphrase"
                        case .recipients(let n)?:
                            item["key"] = "recipients"
                            item["recipients"] = n
                        case nil: break
                        }
                        if let id = entry.label?.vaultID { item["vaultID"] = id }
                        if let problem = entry.problem { item["problem"] = problem }
                        if let outcome {
                            item["verified"] = outcome.isOK
                            item["verification"] = outcome.text
                            if case .ok(let v) = outcome { item["vaultID"] = v.vaultID }
                        }
                        return item
                    }
                    Terminal.out(try jsonText(["schema": "rxvault/backups/v1", "folder": folder, "backups": items]))
                } else if entries.isEmpty {
                    Terminal.err(
                        "rxvault: no backups in \(folder) (files named rxvault-<vault>-<time>.age, as 'rxvault backup \(folder)' writes them)"
                    )
                } else {
                    let headers =
                        ["TIME", "VAULT", "SIZE", "KEY", "FILE"]
                        + (keys.verify ? ["VERIFIED"] : entries.contains { $0.problem != nil } ? ["NOTE"] : [])
                    Terminal.out(
                        Table.render(
                            headers: headers,
                            rows: zip(entries, outcomes).map { entry, outcome in
                                var row = [
                                    entry.name.time.iso, entry.name.vault, byteCountText(entry.size),
                                    Self.describe(entry.kind, armored: entry.armored), entry.fileName
                                ]
                                if let outcome {
                                    row.append(outcome.text)
                                } else if headers.count == 6 {
                                    row.append(entry.problem ?? "")
                                }
                                return row
                            },
                            // The time and the vault are in the file's name too: they go first.
                            overflow: [
                                .init(columns: [0]), .init(columns: [1]), .init(columns: Array(5..<headers.count))
                            ],
                            style: .forStandardOutput(wide: false)))
                }
                if outcomes.contains(where: { if case .failed? = $0 { return true } else { return false } }) {
                    throw CLIError(.integrity, "some backups do not verify (listed above)")
                }
                if outcomes.contains(where: {
                    if case .wrongKey? = $0 {
                        return true
                    } else if case .notChecked? = $0 {
                        return true
                    } else {
                        return false
                    }
                }) {
                    throw CLIError(
                        .wrongPassphrase, "some backups were not opened with the keys given (listed above)",
                        hint: "a backup made with the vault's passphrase needs the passphrase of the day it was made"
                            + (keys.recovery.isGiven ? " (a recovery code never opens its age layer)" : "")
                            + "; backups to recipients need --age-identity")
                }
            }
        }

        static func describe(_ kind: BackupFolder.Kind?, armored: Bool) -> String {
            let text: String
            switch kind {
            case .passphrase?: text = "passphrase"
            case .recipients(let n)?: text = n == 1 ? "1 recipient" : "\(n) recipients"
            case nil: text = "?"
            }
            return armored ? text + ", armored" : text
        }
    }
}
