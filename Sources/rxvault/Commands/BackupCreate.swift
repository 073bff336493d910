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
            discussion: flowing(
                """
                DEST is an existing folder (the backup gets a dated name in it:
                rxvault-<vault>-<UTC time>.age, e.g. rxvault-3f9a2c1e-20261122T221530Z.age; names
                sort by time and never replace one another), a file whose name ends in .age (or one
                that exists, with --force), or - for standard output (to pipe it: rxvault backup - |
                rclone rcat remote:rx.age). A path that is none of these is refused (64), with the
                mkdir to run: it is a folder's name mistyped or not made yet more often than a file.

                The age layer opens with every way into the vault as it is today: each passphrase
                slot and each recovery code (the header carries a stanza per key slot, as the vault
                file holds it), and with the identity of any --recipient or --recipients-file key
                (age1... keys, ssh-ed25519 public keys). A passphrase or code added later does not
                open it, and one removed or changed since still does. No secret is needed to
                encrypt: if the vault's passphrase is given or can be asked for, the vault is
                checked first and the backup recorded in its audit log; with none (a timer, cron,
                --no-input) it is backed up without opening it and without an audit entry.
                --passphrase-only locks it with the vault's passphrase alone, as rxvault did
                before 0.5.0: the recovery code cannot open that one.
                """))

        @Argument(
            help: ArgumentHelp(
                "A folder (a dated name inside), a file (mode 0600; never replaced without --force), or - for standard output.",
                valueName: "dest")) var destination: String
        @OptionGroup var recipients: RecipientOptions
        @Option(
            help: ArgumentHelp(
                "Lock the age layer with the passphrase in this file alone (the recovery code cannot open it).",
                valueName: "file"))
        var agePassphraseFile: String?
        @Flag(
            help:
                "Lock the age layer with the vault's passphrase alone (age scrypt), as before 0.5.0: the recovery code cannot open it."
        )
        var passphraseOnly = false
        @Flag(help: "Write the age file in ASCII armor (as age -a).") var armor = false
        @Flag(help: "Replace the destination file if it exists (never needed for a folder).") var force = false
        @OptionGroup var options: VaultOptions

        func validate() throws {
            if !recipients.isEmpty && agePassphraseFile != nil {
                throw ValidationError("give recipients or a passphrase file, not both")
            }
            if passphraseOnly && (!recipients.isEmpty || agePassphraseFile != nil) {
                throw ValidationError(
                    "--passphrase-only locks the backup with the vault's passphrase alone: give it without recipients or --age-passphrase-file"
                )
            }
        }

        /// Where the backup goes.
        enum Destination {
            case folder(String)
            case file(String)
            case standardOutput
        }

        /// What the backup's age layer opens with, as the output says it.
        enum Opener {
            /// The vault's key slots (`BackupWaysIn`) and this many recipients.
            case waysIn(recipients: Int)
            case vaultPassphrase, agePassphraseFile

            /// "opens with: passphrase of slot 1, recovery code of slot 2, 1 recipient's identity".
            func text(_ ways: [BackupWaysIn.Way]) -> String {
                switch self {
                case .waysIn(let n):
                    var parts = ways.map(\.description)
                    if n > 0 { parts.append(n == 1 ? "1 recipient's identity" : "\(n) recipients' identities") }
                    return "opens with: " + parts.joined(separator: ", ")
                case .vaultPassphrase: return "opens only with the vault's passphrase as it is now"
                case .agePassphraseFile: return "opens only with that passphrase"
                }
            }
        }

        /// The command line resolved: where the backup goes, what it is made from, to whom, and
        /// the time it is named after.
        struct Plan {
            let destination: Destination
            let source: BackupSource
            let recipients: [AgeFile.Recipient]
            let opener: Opener
            let time: BackupTime
            let vaultIDHex: String
            /// The vault has a recovery slot (said when the backup cannot open with it).
            let hasRecoverySlot: Bool
        }

        /// What was written.
        struct Written {
            let destination: Destination
            /// The file written ("standard output" for -).
            let shownPath: String
            let bytes: Int
            let opener: Opener
            let waysIn: [BackupWaysIn.Way]
            /// The vault was opened: checked, and the backup is in its audit log.
            let checked: Bool
            let hasRecoverySlot: Bool
        }

        func run() throws {
            try CommandRunner.run {
                Self.render(try write(try resolve()))
            }
        }

        /// The destination, refused early if it would replace a file or put binary on a terminal;
        /// then what the backup is made from. The vault's key slots and recipients need no
        /// secret: the vault is opened (to check it and log the backup) when its key can be had:
        /// from an unlocked agent when the age layer does not need the passphrase itself, else
        /// the passphrase when it is given or can be asked for. With --passphrase-only the
        /// passphrase is needed anyway.
        func resolve() throws -> Plan {
            let keys = try recipients.parse()
            try options.requireOwner("backup")
            let destination = try Self.destination(self.destination)
            if case .file(let path) = destination, !force {
                // A file, or a link (never written through, WriteTarget), is there: refused now.
                _ = try WriteTarget.file(for: path, replace: false) { _ in
                    "pass --force to replace it, or give a folder for a dated name"
                }
            }
            if case .standardOutput = destination, !armor, isatty(STDOUT_FILENO) == 1 {
                throw CLIError(
                    .usage, "refusing to write an encrypted binary file to the terminal",
                    hint: "redirect the output, or add --armor")
            }
            let header = try options.readHeader()
            let time = BackupTime(iso: try Environment.clock().timestamp()) ?? BackupTime(Date())
            // Only a passphrase stanza needs the vault opened (its audit entry needs the key).
            let locksWithPassphrase = passphraseOnly || agePassphraseFile != nil
            let key = try options.ownerKey(
                header: header, agent: !passphraseOnly, passphrase: locksWithPassphrase ? .required : .ifAvailable)
            let source: BackupSource =
                try key.map { .vault(try options.openVault(with: $0, anchored: false)) }
                ?? .file(path: options.vaultPath, busyTimeoutMilliseconds: try Environment.busyTimeoutMilliseconds())
            let hasRecoverySlot = header.slots.contains { $0.kind == .recovery }
            guard locksWithPassphrase else {
                return Plan(
                    destination: destination, source: source, recipients: keys, opener: .waysIn(recipients: keys.count),
                    time: time, vaultIDHex: header.vaultIDHex, hasRecoverySlot: hasRecoverySlot)
            }
            // A passphrase of its own gets age's default work factor; the vault's passphrase
            // gets the cost the vault itself puts on guessing it.
            let agePassphrase = try agePassphraseFile.map {
                try PassphraseSource.read(file: $0, what: "age passphrase")
            }
            let passphrase = try agePassphrase ?? key?.passphrase ?? PassphraseSource.existing(options)
            let logN =
                agePassphrase == nil ? BackupFile.scryptWorkFactor(for: header) : AgeFile.defaultScryptLogN
            return Plan(
                destination: destination, source: source, recipients: [.scrypt(passphrase: passphrase, logN: logN)],
                opener: agePassphraseFile == nil ? .vaultPassphrase : .agePassphraseFile, time: time,
                vaultIDHex: header.vaultIDHex, hasRecoverySlot: hasRecoverySlot)
        }

        /// Writes the backup (`BackupFile.write`) to its destination, armored if asked. A folder's
        /// file gets the dated name, or the next free one after it.
        func write(_ plan: Plan) throws -> Written {
            let scratch = try Scratch()
            defer { scratch.remove() }
            let progress = Progress("backing up", amount: byteCountText)
            defer { progress.finish() }
            var writeFailure: (any Error)?
            var written = 0
            var waysIn: [BackupWaysIn.Way] = []
            var knowledge: KnowledgeVector?
            /// Runs the backup into `sink` (armored if asked), keeping the sink's own error.
            func produce(_ sink: @escaping ([UInt8]) throws -> Void) throws {
                let raw: ([UInt8]) throws(CryptoError) -> Void = { bytes throws(CryptoError) in
                    do {
                        try sink(bytes)
                        written += bytes.count
                    } catch {
                        writeFailure = error
                        throw CryptoError.malformed("cannot write the backup")
                    }
                }
                let armorWriter = armor ? try AgeArmorWriter(output: raw) : nil
                let output: ([UInt8]) throws(CryptoError) -> Void = { bytes throws(CryptoError) in
                    if let armorWriter { try armorWriter.write(bytes) } else { try raw(bytes) }
                }
                let waysInAgeLayer: Bool
                if case .waysIn = plan.opener { waysInAgeLayer = true } else { waysInAgeLayer = false }
                let report = try BackupFile.write(
                    plan.source, to: plan.recipients, waysIn: waysInAgeLayer, time: plan.time,
                    scratch: scratch.path, output: output, progress: progress.update)
                waysIn = report.waysIn
                knowledge = report.knowledge
                try armorWriter?.finish()
            }
            let shownPath: String
            do {
                switch plan.destination {
                case .standardOutput:
                    // A reader that goes away is a write error, not a silent death by SIGPIPE.
                    signal(SIGPIPE, SIG_IGN)
                    try produce { bytes in try Self.writeAll(bytes, to: STDOUT_FILENO) }
                    shownPath = "standard output"
                case .file(let file):
                    try SafeFileWriter.write(to: file, replace: force) { writer in try produce(writer.write) }
                    shownPath = file
                case .folder(let folder):
                    let first = PathText.join(folder, BackupName(vaultID: plan.vaultIDHex, time: plan.time).description)
                    // No check here: commitToFreeName never replaces.
                    let writer = try SafeFileWriter(target: first, replace: true)
                    do { try produce(writer.write) } catch {
                        writer.discard()
                        throw error
                    }
                    shownPath = try writer.commitToFreeName { sequence in
                        PathText.join(
                            folder,
                            BackupName(vaultID: plan.vaultIDHex, time: plan.time, sequence: sequence).description)
                    }
                }
            } catch {
                // A full disk or a failing device is an I/O error (74), not damage.
                if let writeFailure { throw writeFailure }
                throw error
            }
            // A fork or rollback met later names the backups that hold what the vault lacks.
            if let knowledge, let anchor = Environment.rollbackAnchor, shownPath != "standard output" {
                BackupMemory(anchor: anchor, vaultIDHex: plan.vaultIDHex).remember(
                    path: shownPath, time: plan.time.iso, knowledge: knowledge)
            }
            var checked = false
            if case .vault = plan.source { checked = true }
            return Written(
                destination: plan.destination, shownPath: shownPath, bytes: written, opener: plan.opener,
                waysIn: waysIn, checked: checked, hasRecoverySlot: plan.hasRecoverySlot)
        }

        /// "wrote PATH (SIZE, what opens it)", on stderr when the backup went to standard output.
        /// Without the vault's key the vault was not opened, so not checked either: said on the
        /// line a script or a log keeps, not only in the note.
        static func render(_ written: Written) {
            let line =
                "wrote \(written.shownPath) (\(byteCountText(written.bytes)), \(written.opener.text(written.waysIn))\(written.checked ? "" : "; not checked"))"
            if case .standardOutput = written.destination {
                Terminal.err("rxvault: \(line)")
            } else {
                Terminal.out(line)
            }
            switch written.opener {
            case .vaultPassphrase:
                Terminal.err(
                    "rxvault: note: --passphrase-only: this backup opens only with the vault's passphrase as it is now"
                        + (written.hasRecoverySlot
                            ? "; the recovery code cannot open it" : " (a recovery code added later would not open it)")
                )
            case .agePassphraseFile where written.hasRecoverySlot:
                Terminal.err(
                    "rxvault: note: this backup opens only with the passphrase of --age-passphrase-file: the recovery code alone cannot open it"
                )
            default: break
            }
            if !written.checked {
                Terminal.err(
                    "rxvault: note: no passphrase was given, so the vault was not opened: this backup was not checked and is not in its audit log ('rxvault backup verify' with the identity and the passphrase tells whether it restores)"
                )
            }
        }

        /// A folder (following links) is a folder; "-" is standard output; a file that exists or
        /// whose name ends in .age is a file. Anything else is refused: `rxvault backup
        /// my-backups` before `mkdir my-backups` would otherwise write a file of that name, and
        /// the next backup would stop at it (or replace it with --force). A path no file can be
        /// at (a trailing '/', a missing or non-folder parent, a FIFO) is refused as for any file
        /// first (73).
        static func destination(_ given: String) throws -> Destination {
            if given == "-" { return .standardOutput }
            var info = stat()
            if stat(given, &info) == 0 && info.st_mode & S_IFMT == S_IFDIR { return .folder(given) }
            // The existing-file check (and its --force) follows in run(): replace here means "may exist".
            let file = try WriteTarget.file(for: given, replace: true)
            if lstat(given, &info) != 0 && !given.hasSuffix(BackupName.suffix) {
                throw CLIError(
                    .usage,
                    "\(given) does not exist: a backup goes into an existing folder, or into a file whose name ends in \(BackupName.suffix)",
                    hint:
                        "for a folder of dated backups, create it first: mkdir -p \(ShellWord.quote(given)) && rxvault backup \(ShellWord.quote(given)); for one file, name it \(ShellWord.quote(given + BackupName.suffix))"
                )
            }
            return .file(file)
        }

        static func writeAll(_ bytes: [UInt8], to fd: Int32) throws {
            var offset = 0
            while offset < bytes.count {
                let n = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + offset, $0.count - offset) }
                if n < 0 && errno == EINTR { continue }
                if n <= 0 {
                    throw CLIError(
                        .cannotWrite, "cannot write the backup to standard output: \(String(cString: strerror(errno)))")
                }
                offset += n
            }
        }
    }
}
