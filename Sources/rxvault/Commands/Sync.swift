import ArgumentParser
import RxVault

extension RxVaultCommand {
    struct Sync: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "sync",
            abstract: "Keep this vault in step with other devices through a remote.",
            discussion: flowing(
                """
                REMOTE is a folder (a USB stick, a folder a sync tool carries, an rclone
                mount; made the first time, and holding only ciphertext) or a postgres://
                vault. This device pulls what the remote holds that it lacks, merges it as
                'rxvault merge' does (nothing either side wrote is lost, no revocation is
                undone, a prescription changed on two devices is left in conflict for you),
                then pushes its own state, and removes the pieces no device's state names
                that nobody wrote or used for a day. A device in step moves nothing. Start a new
                device from a copy of the vault file (or 'rxvault restore'), then sync.

                Refused, writing nothing: another vault's remote (65), a folder holding
                other files (65), a remote altered, or rolled back or forked since this
                computer last synced with it (76; '--accept-rollback' takes it as it is
                after a deliberate restore), a remote still being carried by a sync tool
                (69: try again), one written by a newer rxvault (66).

                Examples:
                  rxvault sync /media/usb/rx-remote
                  rxvault sync ~/Sync/rx-remote --format json
                  rxvault sync postgres://rx@db.example/rx
                """))

        @Argument(help: ArgumentHelp("A folder, or a postgres:// URL.", valueName: "remote"))
        var remote: String

        @Flag(help: "Take the remote as it is now, though it holds less than this computer saw there.")
        var acceptRollback = false
        @Option(help: "Output format.") var format: DocumentFormat = .table
        @OptionGroup var options: VaultOptions

        func run() throws {
            try CommandRunner.run(json: format == .json) {
                let vault = try options.openVault(command: "sync")
                let name = VaultLocation.isDatabase(remote) ? VaultLocation.display(remote) : remote
                let report = try vault.sync(with: remote, named: name, acceptRollback: acceptRollback)
                if format == .json {
                    Terminal.out(try jsonText(Self.json(report)))
                    return
                }
                for line in Self.lines(report, remote: name) { Terminal.out(line) }
                for note in report.merged.flatMap(\.report.notes) { Terminal.err("rxvault: \(note)") }
            }
        }

        static func lines(_ report: SyncReport, remote: String) -> [String] {
            if report.inStep { return ["in step with \(remote): nothing to pull or push"] }
            var lines: [String] = []
            for (device, merged) in report.merged {
                lines += Merge.lines(merged, source: "device \(device)", dryRun: false)
            }
            if report.pushed {
                lines.append(
                    "pushed this device's state to \(remote): "
                        + "\(counted(report.chunksUploaded, "new chunk")) (\(report.bytesUploaded) bytes), "
                        + "\(report.chunksAlreadyThere) already there")
            }
            if report.chunksPruned > 0 {
                lines.append(
                    "removed \(counted(report.chunksPruned, "chunk")) (\(report.bytesPruned) bytes) no device's state names any more"
                )
            }
            if report.chunksDownloaded + report.chunksReused > 0 {
                lines.append(
                    "pulled \(counted(report.chunksDownloaded, "chunk")) (\(report.bytesDownloaded) bytes), "
                        + "\(report.chunksReused) found in this vault")
            }
            if !report.conflicts.isEmpty {
                lines.append(
                    "\(counted(report.conflicts.count, "prescription")) in conflict: 'rxvault conflicts' shows them, 'rxvault resolve' ends one"
                )
            }
            return lines
        }

        static func json(_ report: SyncReport) -> [String: Any] {
            [
                "schema": "rxvault/sync/v1", "inStep": report.inStep, "pushed": report.pushed,
                "headsRead": report.headsRead,
                "merged": report.merged.map { ["device": $0.device, "merge": Merge.json($0.report, dryRun: false)] },
                "chunksDownloaded": report.chunksDownloaded, "bytesDownloaded": report.bytesDownloaded,
                "chunksReused": report.chunksReused, "chunksUploaded": report.chunksUploaded,
                "bytesUploaded": report.bytesUploaded, "chunksAlreadyThere": report.chunksAlreadyThere,
                "chunksPruned": report.chunksPruned, "bytesPruned": report.bytesPruned,
                "conflicts": report.conflicts.map(\.hex)
            ]
        }
    }
}
