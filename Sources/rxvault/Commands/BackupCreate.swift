import ArgumentParser
import Foundation
import RxCrypto
import RxVault

#if canImport(Glibc)
import Glibc
#endif

extension RxVaultCommand {
    struct BackupCreate: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "create", abstract: "Write a backup (the default: rxvault backup DEST).",
            discussion: flowing("""
            DEST is a folder (the backup gets a dated name in it: rxvault-<vault>-<UTC time>.age,
            e.g. rxvault-3f9a2c1e-20261122T221530Z.age; names sort by time and never replace
            one another), a file, or - for standard output (to pipe it: rxvault backup - |
            rclone rcat remote:rx.age).

            Without recipients the age layer uses the vault's passphrase as it is today: after
            'rxvault passwd' that backup still needs the old passphrase. With --recipient or
            --recipients-file (age1... keys, ssh-ed25519 public keys) no secret is needed to
            encrypt: if the vault's passphrase is given or can be asked for, the backup is also
            recorded in the audit log; with none (a timer, cron, --no-input) the vault is backed
            up without opening it and without an audit entry.
            """))

        @Argument(help: ArgumentHelp("A folder (a dated name inside), a file (mode 0600; never replaced without --force), or - for standard output.",
                                     valueName: "dest")) var destination: String
        @OptionGroup var recipients: RecipientOptions
        @Option(help: ArgumentHelp("Encrypt with the passphrase in this file instead of the vault's.", valueName: "file")) var agePassphraseFile: String?
        @Flag(help: "Write the age file in ASCII armor (as age -a).") var armor = false
        @Flag(help: "Replace the destination file if it exists (never needed for a folder).") var force = false
        @OptionGroup var options: VaultOptions

        func validate() throws {
            if !recipients.isEmpty && agePassphraseFile != nil { throw ValidationError("give recipients or a passphrase file, not both") }
        }

        /// Where the backup goes.
        enum Destination {
            case folder(String)
            case file(String)
            case standardOutput
        }

        func run() throws {
            try CommandRunner.run {
                let keys = try recipients.parse()
                try options.requireOwner("backup")
                let destination = try Self.destination(self.destination)
                if case .file(let path) = destination, !force, FileManager.default.fileExists(atPath: path) {
                    throw CLIError(.alreadyExists, "\(path) already exists", hint: "pass --force to replace it, or give a folder for a dated name")
                }
                if case .standardOutput = destination, !armor, isatty(STDOUT_FILENO) == 1 {
                    throw CLIError(.usage, "refusing to write an encrypted binary file to the terminal", hint: "redirect the output, or add --armor")
                }
                let path = options.vaultPath
                let header = try VaultHeader.read(at: path)
                let clock = try Environment.clock()
                let stamp = clock.timestamp()
                let time = BackupTime(iso: stamp) ?? BackupTime(Date())
                let busy = try Environment.busyTimeoutMilliseconds()

                // Recipients need no secret; the passphrase only adds the audit entry, and is
                // used when it is given or can be asked for.
                // An unlocked agent opens the vault too, when the age layer does not need the
                // passphrase itself (recipients, or another passphrase file).
                let vault: Vault?
                var vaultPassphrase: SecretBytes?
                if !keys.isEmpty || agePassphraseFile != nil, options.mayUseAgent,
                   let rootKey = AgentAccess.rootKey(path: path, header: header) {
                    vault = try Vault.open(at: path, rootKey: rootKey, clock: clock, busyTimeoutMilliseconds: busy)
                } else if keys.isEmpty || PassphraseSource.isGivenWithoutPrompt(options) || (!options.noInput && Terminal.canAsk) {
                    let passphrase = try PassphraseSource.existing(options)
                    vault = try Vault.open(at: path, passphrase: passphrase, clock: clock, busyTimeoutMilliseconds: busy)
                    vaultPassphrase = passphrase
                } else {
                    vault = nil
                }
                var ageRecipients: [AgeFile.Recipient]
                if !keys.isEmpty {
                    ageRecipients = keys      // and a BackupLabel, which the library adds
                } else {
                    let passphrase = try agePassphraseFile.map { try PassphraseSource.read(file: $0, what: "age passphrase") }
                        ?? vaultPassphrase ?? PassphraseSource.existing(options)
                    ageRecipients = [.scrypt(passphrase: passphrase, logN: AgeFile.defaultScryptLogN)]
                }

                let scratch = try Scratch()
                defer { scratch.remove() }
                let progress = Progress("backing up", amount: ByteCountText)
                var writeFailure: (any Error)?
                var written = 0
                /// Runs the backup into `sink` (armored if asked), keeping the sink's own error.
                func produce(_ sink: @escaping ([UInt8]) throws -> Void) throws {
                    let raw: ([UInt8]) throws(CryptoError) -> Void = { bytes throws(CryptoError) in
                        do { try sink(bytes); written += bytes.count } catch {
                            writeFailure = error
                            throw CryptoError.malformed("cannot write the backup")
                        }
                    }
                    let armorWriter = armor ? try AgeArmorWriter(output: raw) : nil
                    let output: ([UInt8]) throws(CryptoError) -> Void = { bytes throws(CryptoError) in
                        if let armorWriter { try armorWriter.write(bytes) } else { try raw(bytes) }
                    }
                    if let vault {
                        _ = try vault.backup(to: ageRecipients, time: time.iso, labelled: !keys.isEmpty, scratch: scratch.path, output: output, progress: progress.update)
                    } else {
                        _ = try BackupFile.backupWithoutPassphrase(at: path, busyTimeoutMilliseconds: busy, to: ageRecipients,
                                                                   labelTime: time, scratch: scratch.path, output: output, progress: progress.update)
                    }
                    try armorWriter?.finish()
                }
                let shownPath: String
                do {
                    switch destination {
                    case .standardOutput:
                        // A reader that goes away is a write error, not a silent death by SIGPIPE.
                        signal(SIGPIPE, SIG_IGN)
                        try produce { bytes in try Self.writeAll(bytes, to: STDOUT_FILENO) }
                        shownPath = "standard output"
                    case .file(let file):
                        try SafeFileWriter.write(to: file, replace: force) { writer in try produce(writer.write) }
                        shownPath = file
                    case .folder(let folder):
                        let first = PathText.join(folder, BackupName(vaultID: header.vaultIDHex, time: time).description)
                        let writer = try SafeFileWriter(target: first, replace: true)   // no check here: commitToFreeName never replaces
                        do { try produce(writer.write) } catch { writer.discard(); throw error }
                        shownPath = try writer.commitToFreeName { sequence in
                            PathText.join(folder, BackupName(vaultID: header.vaultIDHex, time: time, sequence: sequence).description)
                        }
                    }
                } catch {
                    progress.finish()
                    // A full disk or a failing device is an I/O error (74), not damage.
                    if let writeFailure { throw writeFailure }
                    throw error
                }
                progress.finish()
                let opens = !keys.isEmpty ? "opens with the recipients' identities"
                    : agePassphraseFile == nil ? "opens with the vault's passphrase as it is now" : "opens with that passphrase"
                // Without the passphrase the vault was not opened, so not checked either: say so
                // on the line a script or a log keeps, not only in the note.
                let line = "wrote \(shownPath) (\(ByteCountText(written)), \(opens)\(vault == nil ? "; not checked" : ""))"
                if case .standardOutput = destination { Terminal.err("rxvault: \(line)") } else { Terminal.out(line) }
                if vault == nil {
                    Terminal.err("rxvault: note: no passphrase was given, so the vault was not opened: this backup was not checked and is not in its audit log ('rxvault backup verify' with the identity and the passphrase tells whether it restores)")
                }
            }
        }

        /// A folder (following links) is a folder; "-" is standard output; anything else a file.
        static func destination(_ given: String) throws -> Destination {
            if given == "-" { return .standardOutput }
            var info = stat()
            if stat(given, &info) == 0 && info.st_mode & S_IFMT == S_IFDIR { return .folder(given) }
            // The existing-file check (and its --force) follows in run(): replace here means "may exist".
            return .file(try WriteTarget.file(for: given, replace: true))
        }

        static func writeAll(_ bytes: [UInt8], to fd: Int32) throws {
            var offset = 0
            while offset < bytes.count {
                let n = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + offset, $0.count - offset) }
                if n < 0 && errno == EINTR { continue }
                if n <= 0 { throw CLIError(.cannotWrite, "cannot write the backup to standard output: \(String(cString: strerror(errno)))") }
                offset += n
            }
        }
    }
}
