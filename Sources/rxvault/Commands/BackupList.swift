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
                Lists the files named as 'rxvault backup DIR' names them, oldest first, with what
                opens each (KEY): the vault's key slots of the day it was made ("passphrase of slot
                1, recovery code of slot 2"), recipients, or, for one locked with a passphrase alone
                (--passphrase-only, or made before rxvault 0.5.0), "passphrase of DATE only". Without
                any key, the time and vault come from the file name (a claim: anyone can rename a
                file); a backup not locked with a passphrase alone also carries them in a label in
                its age header, and a name that disagrees with it is reported. With --verify each backup is opened and checked
                as 'backup verify' does, and its name is checked against what is inside. Exits 76 if
                any backup fails, 77 if one does not open with the keys given (or none was given for it).

                Examples:
                  rxvault backup list ~/backups/rxvault
                  rxvault backup list ~/backups/rxvault --verify --age-identity ~/backup.key
                  rxvault backup list ~/backups/rxvault --verify --recovery-key-file code.txt
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
                    let checker = try keys.checker(options: options, label: "the backups in \(folder)")
                    let scratch = try Scratch()
                    defer { scratch.remove() }
                    // Each backup is opened and checked whole: say how far it got, on a terminal.
                    let progress = Progress("verifying backups")
                    defer { progress.finish() }
                    for (i, entry) in entries.enumerated() {
                        progress.update(i, entries.count)
                        outcomes[i] = checker.check(entry, in: scratch.path)
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
                        case .waysIn(let ways, let n)?:
                            item["key"] = "slots"
                            item["slots"] = ways.map { ["slot": $0.slot, "kind": $0.kind.rawValue] as [String: Any] }
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
                                    Self.describe(entry.kind, made: entry.name.time, armored: entry.armored),
                                    entry.fileName
                                ]
                                if let outcome {
                                    row.append(outcome.text)
                                } else if headers.count == 6 {
                                    row.append(entry.problem ?? "")
                                }
                                return row
                            },
                            // The time and the vault are in the file's name too: they go first;
                            // then what opens it, which can be long (a slot or two, recipients).
                            overflow: [
                                .init(columns: [0]), .init(columns: [1]), .init(columns: [3]),
                                .init(columns: Array(5..<headers.count))
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
                        hint:
                            "a backup opens with the passphrases and recovery codes the vault had the day it was made (KEY lists its slots); "
                            + "one locked with a passphrase alone ('passphrase of DATE only') opens only with that passphrase"
                            + (keys.recovery.isGiven ? ", never with a recovery code" : "")
                            + "; backups to recipients alone need --age-identity")
                }
            }
        }

        /// What opens a backup, as its header says: "passphrase of slot 1, recovery code of slot
        /// 2, 1 recipient", or for one locked with a passphrase alone, "passphrase of 2026-03-01 only".
        static func describe(_ kind: BackupFolder.Kind?, made: BackupTime, armored: Bool) -> String {
            func recipients(_ n: Int) -> String { n == 1 ? "1 recipient" : "\(n) recipients" }
            let text: String
            switch kind {
            case .passphrase?: text = "passphrase of \(made.iso.prefix(10)) only"
            case .recipients(let n)?: text = recipients(n)
            case .waysIn(let ways, let n)?:
                text = (ways.map(\.description) + (n > 0 ? [recipients(n)] : [])).joined(separator: ", ")
            case nil: text = "?"
            }
            return armored ? text + ", armored" : text
        }
    }
}
