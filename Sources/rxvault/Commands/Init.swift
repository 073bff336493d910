import ArgumentParser
import Foundation
import RxCrypto
import RxValidate
import RxVault

extension RxVaultCommand {
    struct Init: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "init",
            abstract: "Create a new, empty vault file.",
            discussion: flowing(
                """
                Never overwrites an existing file. The file is created with mode 0600; missing parent
                directories are created with mode 0700.

                --kdf sets the cost of turning the passphrase into a key (Argon2id): interactive
                (64 MiB, fast), moderate (256 MiB, about half a second; the default) or sensitive
                (1 GiB, several seconds). Every command that opens the vault pays it once.

                A forgotten passphrase cannot be recovered: add a recovery code afterwards with
                'rxvault key add --recovery' and keep it on paper.
                """))

        @OptionGroup var options: VaultOptions

        @Option(help: "Key-derivation cost: interactive, moderate or sensitive.")
        var kdf: PasswordKDF.Preset = .moderate

        @Option(help: ArgumentHelp("Largest attachment the vault accepts (e.g. 32MiB, 100M).", valueName: "size"))
        var maxAttachmentSize: ByteSize?

        func run() throws {
            try CommandRunner.run {
                let path = options.vaultPath
                if VaultLocation.isDatabase(path) {
                    // A bad URL, a server that cannot be reached, or a database that holds a vault
                    // already: said before the passphrase is asked for.
                    try VaultLocation.validate(path)
                    do {
                        _ = try VaultHeader.read(at: path)
                        throw VaultError.alreadyExists(path: VaultLocation.display(path))
                    } catch VaultError.noVault {
                        // An empty database (or one of other tables: creating says so).
                    }
                } else {
                    if FileManager.default.fileExists(atPath: path) {
                        throw VaultError.alreadyExists(path: path)
                    }
                    // A path that can never be a new file (ends in '/', its folder is a file) is
                    // refused before the passphrase is asked for.
                    _ = try WriteTarget.file(
                        for: path, replace: false, createsFolders: true, followsLinks: true, example: "vault.rxv")
                    try ParentDirectory.create(for: path)
                }
                let shown = VaultLocation.display(path)
                let passphrase: SecretBytes
                // The same order as every other command: file, descriptor, environment, prompt.
                if let file = options.passphraseFile {
                    passphrase = try PassphraseSource.read(file: file, what: "passphrase")
                } else if let fd = options.passphraseFd {
                    passphrase = try PassphraseSource.read(fd: fd, what: "passphrase")
                } else if let file = Environment.passphraseFile {
                    passphrase = try PassphraseSource.read(file: file, what: "passphrase")
                } else {
                    passphrase = try PassphraseSource.new(
                        file: nil, options: options, prompt: "New passphrase for \(shown): ")
                }
                if passphrase.count < 10 {
                    Terminal.warning(
                        "the passphrase is short (\(passphrase.count) bytes); anyone with the file can try guesses offline"
                    )
                }
                try Vault.create(
                    at: path, passphrase: passphrase, kdf: PasswordKDF(preset: kdf),
                    maxAttachmentBytes: maxAttachmentSize?.bytes ?? ValidationLimits.defaultMaxBytes)
                Terminal.out("created \(shown)")
                // The one way back in when the passphrase is forgotten exists only if made now,
                // while the passphrase is known: say so once, where the vault is born.
                Terminal.err(
                    "rxvault: note: add a recovery code, the way back in if the passphrase is forgotten: rxvault key add --recovery"
                        + (options.vault.map { " --vault '\($0)'" } ?? ""))
            }
        }
    }
}
