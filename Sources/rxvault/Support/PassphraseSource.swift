import RxCrypto

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Where a passphrase comes from. Never argv: a value on the command line shows in `ps` and in
/// shell history. In order: `--passphrase-file`, `--passphrase-fd`, `RXVAULT_PASSPHRASE_FILE`,
/// then a prompt without echo on the controlling terminal, so stdin stays free for data
/// (unless `--no-input`).
enum PassphraseSource {
    /// Longest passphrase read from a file or descriptor.
    static let maxLength = 4096

    /// Reads the first line of `path` (without its line ending) into zeroed-on-release memory;
    /// a file others can read is refused unless `--allow-shared-passphrase-file` (KeyFile).
    static func read(file path: String, what: String) throws -> SecretBytes {
        let fd = try KeyFile.open(path, what: what, passphrase: true)
        defer { close(fd) }
        return try nonEmpty(Terminal.readLine(fd: fd, limit: maxLength), what: what, source: "file \(path)")
    }

    static func read(fd: Int32, what: String) throws -> SecretBytes {
        guard fcntl(fd, F_GETFD) != -1 else { throw CLIError(.usage, "file descriptor \(fd) is not open") }
        return try nonEmpty(Terminal.readLine(fd: fd, limit: maxLength), what: what, source: "file descriptor \(fd)")
    }

    private static func nonEmpty(_ secret: SecretBytes?, what: String, source: String) throws -> SecretBytes {
        guard let secret, secret.count > 0 else { throw CLIError(.usage, "the \(what) in \(source) is empty") }
        return secret
    }

    /// The passphrase of an existing vault. A prompt asks for the vault the options name, or
    /// for what `label` names (a backup's vault is not the one the options name).
    static func existing(_ options: VaultOptions, for label: String? = nil) throws -> SecretBytes {
        if let path = options.passphraseFile { return try read(file: path, what: "passphrase") }
        if let fd = options.passphraseFd { return try read(fd: fd, what: "passphrase") }
        if let path = Environment.passphraseFile { return try read(file: path, what: "passphrase") }
        try requirePrompt(options)
        guard let secret = Terminal.readSecretLine(prompt: "Passphrase for \(label ?? options.vaultPath): "),
            secret.count > 0
        else {
            throw CLIError(.usage, "no passphrase entered")
        }
        return secret
    }

    /// Whether a passphrase is available without prompting (for `status`).
    static func isGivenWithoutPrompt(_ options: VaultOptions) -> Bool {
        options.passphraseFile != nil || options.passphraseFd != nil || Environment.passphraseFile != nil
    }

    /// Tries at a prompt: a mistyped repeat of a new passphrase, or a wrong one for a vault, is
    /// asked again, as passwd(1) and sudo do, up to this many times in all.
    static let promptTries = 3

    /// A new passphrase: from `file` if given, else asked twice at the terminal; a repeat that
    /// differs is asked again (both entries), up to `promptTries` times.
    static func new(file: String?, options: VaultOptions, prompt: String) throws -> SecretBytes {
        if let file { return try read(file: file, what: "new passphrase") }
        try requirePrompt(options, flag: "--new-passphrase-file")
        for attempt in 1...promptTries {
            guard let first = Terminal.readSecretLine(prompt: prompt), first.count > 0 else {
                throw CLIError(.usage, "no passphrase entered")
            }
            guard let second = Terminal.readSecretLine(prompt: "Repeat it: ") else {
                throw CLIError(.usage, "no passphrase entered")
            }
            if second == first { return first }
            if attempt < promptTries { Terminal.err("rxvault: the two passphrases differ; try again") }
        }
        throw CLIError(.usage, "the two passphrases differed \(promptTries) times; nothing was changed")
    }

    private static func requirePrompt(_ options: VaultOptions, flag: String = "--passphrase-file") throws {
        if options.noInput {
            throw CLIError(
                .usage, "a passphrase is needed and --no-input forbids asking for one",
                hint: "give \(flag) FILE or set RXVAULT_PASSPHRASE_FILE")
        }
        guard Terminal.canAsk else {
            throw CLIError(
                .usage, "a passphrase is needed and there is no terminal to ask on",
                hint: "give \(flag) FILE or set RXVAULT_PASSPHRASE_FILE")
        }
    }
}
