import ArgumentParser
import Foundation
import RxCrypto
import RxVault

#if canImport(Glibc)
    import Glibc
#endif

extension RxVaultCommand {
    struct Restore: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "restore",
            abstract: "Restore a backup into a vault file, after verifying all of it.",
            discussion: flowing(
                """
                The target is --to PATH, else the vault --vault, RXVAULT_PATH or the default path
                names; missing folders are created with mode 0700. Decrypts the backup next to the
                target, checks every object (as 'backup verify'), and only then moves it into place.
                Never replaces an existing vault without --force; with --force the old vault is kept as
                PATH.bak (PATH.bak.1, ... if that exists); the path always names a whole vault, old or
                new. A target that is a symbolic link is followed: the file it points to is restored
                (created if missing), the link stays as it is, and the .bak lies beside that file.
                Stop other rxvault commands on the vault first: restore refuses (75) while one has it
                open.

                Forgotten passphrase: --recovery (asked for) or --recovery-key-file opens a backup
                with a recovery code the vault had the day the backup was made: a backup opens with
                every way into the vault of that day, passphrases and recovery codes alike. Backups
                locked with a passphrase alone (--passphrase-only, --age-passphrase-file, or made by
                rxvault before 0.5.0) open only with that passphrase, as 'backup list' shows. Set a
                new passphrase afterwards with 'rxvault passwd --recovery'.

                Examples:
                  rxvault restore ~/backups/rx-2026-11-21.age   # to the default vault
                  rxvault restore ~/backups/rx-2026-11-21.age --to ~/rx-restored.rxv
                  rxvault restore rx.age --recovery-key-file code.txt
                """))

        @Argument(help: "The backup file.") var file: String
        @Option(
            help: ArgumentHelp(
                "The vault file to create (default: the vault --vault, RXVAULT_PATH or the default path names).",
                valueName: "path")) var to: String?
        @Option(help: ArgumentHelp("Open the age layer with this identity file.", valueName: "file")) var ageIdentity:
            String?
        @Option(help: ArgumentHelp("Open the age layer with the passphrase in this file.", valueName: "file"))
        var agePassphraseFile: String?
        @Flag(help: "Replace an existing vault at the target (the old one is kept as PATH.bak).") var force = false
        @OptionGroup var recovery: RecoveryCodeOptions
        @OptionGroup var options: VaultOptions

        func run() throws {
            try CommandRunner.run {
                try options.requireOwner("restore")
                let given = to ?? options.vaultPath
                if VaultLocation.isDatabase(given) {
                    try restoreIntoDatabase(given)
                    return
                }
                // Through a symbolic link, the file it points to: the link stays a link.
                let target = try WriteTarget.file(
                    for: given, replace: force, createsFolders: true, followsLinks: true, example: "vault.rxv"
                ) { target in
                    "restore elsewhere with --to PATH, or pass --force (the old vault is kept as \(target).bak, or .bak.N if that exists)"
                }
                let directory = PathText.folder(of: target)
                let prefix = ".\(PathText.name(of: target)).restore-"
                let temporary = directory + "/" + prefix + "\(getpid())-\(UInt32.random(in: .min ... .max))"
                defer { for suffix in ["", "-wal", "-shm"] { unlink(temporary + suffix) } }
                let key = try Self.openBackup(
                    file, into: temporary, ageIdentity: ageIdentity, agePassphraseFile: agePassphraseFile,
                    recovery: recovery, options: options, purpose: .restore
                ) {
                    // Only once the backup opened and the key is known: a mistyped backup path
                    // leaves no folders behind.
                    try ParentDirectory.create(for: target)
                    Scratch.sweep(in: directory, prefix: prefix)
                }
                let verification = try Self.verifiedWhole(at: temporary, of: file, key: key)
                try BackupFile.prepareForUse(path: temporary)
                let installed: BackupFile.Installed
                do { installed = try BackupFile.install(temporary, at: target, replacing: force) } catch VaultError
                    .alreadyExists
                {
                    throw CLIError(
                        .alreadyExists, "\(given) appeared while restoring; nothing was replaced",
                        hint: "pass --force to replace it")
                }
                // The new vault is in place: it must open, or the old one goes back.
                do {
                    // The owner chose to go back: this computer records the restored vault's write
                    // counter as the newest, so no rollback warning follows. A copy restored beside
                    // the vault (`--to`) is not the line this computer writes: reading it changes
                    // nothing, writing it is a fork of the vault (issue 48).
                    try Vault.open(at: target, with: key, anchor: Environment.rollbackAnchor).acceptCurrentState(
                        asThisComputersLine: to == nil || to == options.vaultPath)
                } catch {
                    BackupFile.rollBack(installed, at: target)
                    throw error
                }
                if let previous = installed.previous {
                    Terminal.err("rxvault: the previous vault is kept as \(previous)")
                }
                Terminal.out(
                    "restored \(given)" + (target == given ? "" : " (the link's file, \(target))")
                        + ": \(Self.describe(verification))")
                if case .recoveryCode = key {
                    // Its passphrase is the one of the backup's day, the one that was forgotten.
                    Terminal.err(
                        "rxvault: note: the recovery code opened it; set a new passphrase with 'rxvault passwd --recovery"
                            + (given == options.vaultPath ? "'" : " --vault \(given)'"))
                }
            }
        }

        /// A backup restored into a database (`--to postgres://...`): decrypted into a private
        /// scratch folder, verified whole as for a file, then copied into the database, which must
        /// be empty (`rxvault copy`'s rules: a database vault is never replaced, so no --force).
        private func restoreIntoDatabase(_ given: String) throws {
            try VaultLocation.validate(given)
            if force {
                throw CLIError(
                    .usage, "--force replaces a vault file; a vault in a database is never replaced",
                    hint: "restore into an empty database, or remove the old vault's tables first")
            }
            let scratch = try Scratch()
            defer { scratch.remove() }
            let temporary = scratch.path + "/restored.rxv"
            let key = try Self.openBackup(
                file, into: temporary, ageIdentity: ageIdentity, agePassphraseFile: agePassphraseFile,
                recovery: recovery, options: options, purpose: .restore)
            let verification = try Self.verifiedWhole(at: temporary, of: file, key: key)
            let copied = try VaultCopy.copy(
                from: temporary, to: given, busyTimeoutMilliseconds: try Environment.busyTimeoutMilliseconds())
            try Vault.open(at: given, with: key, anchor: Environment.rollbackAnchor).acceptCurrentState()
            Terminal.out("restored \(copied.target): \(Self.describe(verification))")
        }

        /// `verifyVault`, refusing (76, nothing restored) a backup with any finding.
        static func verifiedWhole(at path: String, of file: String, key: VaultKey) throws -> BackupFile.Verification {
            let verification = try verifyVault(at: path, of: file, key: key)
            guard verification.report.isClean else {
                let first = verification.report.stages.flatMap(\.errors).first ?? "?"
                throw CLIError(
                    .integrity, "the backup does not verify (\(first)); nothing was restored",
                    hint: "'rxvault backup verify \(file)' (with the same key options) lists every finding")
            }
            return verification
        }

        /// What a backup is opened for: says what progress shows and what a failure left undone.
        enum Purpose {
            case verify, restore
            var verb: String { self == .verify ? "verifying" : "restoring" }
        }

        /// Checks the decrypted vault. A wrong passphrase here is the vault's, not the age
        /// layer's (that one opened): say so, since the two can differ.
        static func verifyVault(at path: String, of file: String, key: VaultKey) throws -> BackupFile.Verification {
            do { return try BackupFile.verify(path: path, with: key) } catch .wrongPassphrase {
                throw CLIError(
                    .wrongPassphrase, "the passphrase does not open the vault inside \(file)",
                    hint:
                        "it is the passphrase of the vault that was backed up, as it was that day; give it with --passphrase-file or at the prompt. "
                        + olderPassphraseHint)
            } catch .wrongRecoveryCode(let why) {
                throw CLIError(
                    .wrongPassphrase, "the recovery code does not open the vault inside \(file) (\(why))",
                    hint:
                        "a backup keeps the key slots of the day it was made: one made before 'rxvault key add --recovery' "
                        + "opens only with the passphrase of that day")
            }
        }

        /// A backup keeps the passphrase of the day it was made.
        static let olderPassphraseHint =
            "a backup made with the vault's passphrase needs the passphrase of the day it was made: "
            + "if it is older than the last passphrase change ('rxvault passwd'), give the passphrase from before that change"

        /// "on 2026-11-22": the day in a backup's file name, else the file's modification day.
        static func madeOn(_ file: String) -> String {
            if let name = BackupName(parsing: PathText.name(of: file)) { return "on \(name.time.iso.prefix(10))" }
            if file != "-",
                let date = try? FileManager.default.attributesOfItem(atPath: file)[.modificationDate] as? Date
            {
                return "on \(BackupTime(date).iso.prefix(10)) (the file's modification date)"
            }
            return "the day it was made"
        }

        /// A passphrase or recovery code that opens none of a backup's key slots, or a slot
        /// stanza rxvault would not write, said with the ways the backup states.
        static func waysInRefusal(_ error: VaultError, ways: [BackupWaysIn.Way], file: String) -> CLIError {
            let opens = ways.isEmpty ? "" : " (it opens with: \(ways.map(\.description).joined(separator: ", ")))"
            switch error {
            case .wrongPassphrase:
                return CLIError(
                    .wrongPassphrase, "the passphrase opens none of the key slots of \(file)\(opens)",
                    hint: "a backup opens with the passphrases the vault had the day it was made"
                        + (ways.contains { $0.kind == .recovery }
                            ? ", and with its recovery code (--recovery-key-file FILE)" : "")
                        + "; if it is older than the last passphrase change ('rxvault passwd'), give the passphrase from before that change"
                )
            case .wrongRecoveryCode:
                return CLIError(
                    .wrongPassphrase, "the recovery code opens none of the key slots of \(file)\(opens)",
                    hint: ways.contains { $0.kind == .recovery }
                        ? "it is another recovery code, or was added after the backup was made: a backup keeps the key slots of its day"
                        : "the vault had no recovery code when this backup was made: it opens with the passphrase of that day"
                )
            default:
                return CLIError(.integrity, "the backup is damaged: \(error.description)")
            }
        }

        /// "opens with: passphrase of slot 1, recovery code of slot 2, 1 recipient", as the
        /// backup's (now authenticated) header says; "opens only with the passphrase the vault had
        /// on DATE" for one locked with a passphrase alone.
        static func opensWith(_ file: String) -> String {
            guard file != "-", let stanzas = try? BackupFile.headerStanzas(at: file) else {
                return "opens with: the key given"
            }
            if stanzas.contains(where: { $0.type == "scrypt" }) {
                return
                    "opens only with the passphrase the vault had \(madeOn(file)) (or that of --age-passphrase-file), never with a recovery code"
            }
            let ours = [BackupLabel.stanzaType, BackupWaysIn.slotStanzaType, BackupWaysIn.rootKeyStanzaType]
            let n = stanzas.filter { !ours.contains($0.type) }.count
            let ways = ((try? BackupWaysIn.ways(in: stanzas)) ?? []).map(\.description)
            return "opens with: "
                + (ways + (n == 0 ? [] : [n == 1 ? "1 recipient's identity" : "\(n) recipients' identities"]))
                .joined(separator: ", ")
        }

        /// "vault ID, N prescriptions (V versions, A attachments), backed up TIME".
        static func describe(_ verification: BackupFile.Verification) -> String {
            var parts = ["vault \(verification.vaultID)"]
            if let c = verification.counts {
                parts.append(
                    "\(counted(c.prescriptions, "prescription")) (\(counted(c.versions, "version")), \(counted(c.attachments, "attachment")))"
                )
            }
            if let time = verification.backedUp { parts.append("backed up \(time)") }
            return parts.joined(separator: ", ")
        }

        /// Decrypts the backup into `path` (`BackupFile.open`); returns the key to open the vault
        /// inside with (the vault's passphrase, or the recovery code). `prepare` runs once the
        /// backup file is open, looks like one and the key is read, before `path` is written.
        static func openBackup(
            _ file: String, into path: String, ageIdentity: String?, agePassphraseFile: String?,
            recovery: RecoveryCodeOptions, options: VaultOptions, purpose: Purpose,
            prepare: () throws -> Void = {}
        ) throws -> VaultKey {
            // "-": the backup comes on standard input (`... | rxvault restore -`); a file is opened
            // and checked (a directory, an unreadable file) before any passphrase is asked for.
            let input = file == "-" ? nil : try InputFile(path: file, standardInput: false)
            defer { input?.close() }
            let handle =
                input.map { FileHandle(fileDescriptor: $0.fd, closeOnDealloc: false) } ?? FileHandle.standardInput
            let total = input?.size ?? 0
            // A recovery code cannot open a backup locked with a passphrase alone: say so before
            // the code is asked for (standard input cannot be looked at twice: it is told on
            // decrypting).
            try recovery.requireAlone(options)
            if recovery.isGiven, ageIdentity == nil, agePassphraseFile == nil, file != "-",
                BackupFile.isPassphraseOnly(at: file)
            {
                throw RecoveryCodeOptions.passphraseLayerRefusal(file, madeOn: Self.madeOn(file))
            }
            // The prompt names the backup: the vault the options name is not the one asked for.
            let vaultKey = try recovery.backupVaultKey(options: options, label: "backup \(file)")
            let ageLayer: BackupFile.AgeLayerKey
            if let ageIdentity {
                ageLayer = .identities(try KeyFile.identities(ageIdentity, what: "age identity"))
            } else if let passphrase = try agePassphraseFile.map({
                try PassphraseSource.read(file: $0, what: "age passphrase")
            }) {
                ageLayer = .passphrase(passphrase)
            } else {
                ageLayer = .vault
            }
            let progress = Progress(purpose.verb, amount: byteCountText)
            defer { progress.finish() }
            do {
                _ = try BackupFile.open(
                    handle, with: vaultKey, ageLayer: ageLayer, into: path, prepare: prepare,
                    progress: { progress.update($0, total) })
            } catch let error as BackupFile.OpenError {
                throw Self.refusal(
                    error, file: file, agePassphraseFile: agePassphraseFile, recovery: recovery, purpose: purpose)
            }
            return vaultKey
        }

        /// A backup that did not open, said as the owner can act on it.
        static func refusal(
            _ error: BackupFile.OpenError, file: String, agePassphraseFile: String?, recovery: RecoveryCodeOptions,
            purpose: Purpose
        ) -> CLIError {
            switch error {
            case .notABackup:
                return CLIError(
                    .invalidInput,
                    "\(file == "-" ? "standard input" : file) is neither an age file nor a vault (not an rxvault backup)"
                )
            case .passphraseOnly:
                return RecoveryCodeOptions.passphraseLayerRefusal(file, madeOn: Self.madeOn(file))
            case .keySlots(let error, let ways):
                return Self.waysInRefusal(error, ways: ways, file: file)
            case .identityDoesNotOpen(let own):
                return CLIError(
                    .wrongPassphrase, "the identity does not open this backup",
                    hint: own.isEmpty
                        ? "it was made to other recipients, or with a passphrase"
                        : "it was made to other recipients; it opens with: "
                            + own.map(\.description).joined(separator: ", ")
                            + " (give the passphrase, or --recovery-key-file, without --age-identity)")
            case .rootKeyStanzaDoesNotOpen:
                return CLIError(
                    .integrity,
                    "the backup is damaged: its \(BackupWaysIn.rootKeyStanzaType) stanza does not open with the key its slots give (altered, or made from an altered vault file)",
                    hint: purpose == .restore ? "nothing was restored" : nil)
            case .recipientsOnly(let types):
                return CLIError(
                    .wrongPassphrase,
                    "this backup is encrypted to age recipients alone (\(types.joined(separator: ", "))), not to the vault's passphrase or recovery code",
                    hint:
                        "give --age-identity FILE\(recovery.isGiven ? " (the identity kept with the recovery code)" : ""); "
                        + "for an SSH key: age -d -i ~/.ssh/id_ed25519 \(file) | rxvault restore -")
            case .agePassphraseDoesNotOpen:
                return CLIError(
                    .wrongPassphrase, "the passphrase in \(agePassphraseFile ?? "?") does not open this backup")
            case .passphraseDoesNotOpen:
                return CLIError(
                    .wrongPassphrase, "the passphrase does not open this backup", hint: Self.olderPassphraseHint)
            case .damaged(let error):
                return CLIError(
                    .integrity, "the backup is damaged: \(error.description)",
                    hint: purpose == .restore ? "nothing was restored" : nil)
            }
        }
    }
}
