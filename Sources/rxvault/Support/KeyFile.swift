import RxCrypto

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Files that hold a secret: passphrase files and age identity files. The secret in them is only
/// as safe as the file. A passphrase file its group or others can read is refused (as ssh
/// refuses a private key others can read): such a passphrase opens the vault for every account
/// that can read the file, and a script that uses it would go on doing so unnoticed. The owner
/// may accept that with `--allow-shared-passphrase-file` (a warning is still printed). Identity
/// and recovery-code files others can read are used with a warning.
enum KeyFile {
    /// Largest identity file read: a few keys and comments are under 1 KiB; `/dev/zero` is not one.
    static let maxIdentityFileBytes = 1 << 16

    /// Set by `--allow-shared-passphrase-file` (VaultOptions) for the whole command.
    nonisolated(unsafe) static var sharedPassphraseFileAllowed = false

    /// Whether `fd` is a regular file that its group or others may read.
    static func isReadableByOthers(fd: Int32) -> Bool {
        var info = stat()
        return fstat(fd, &info) == 0 && info.st_mode & S_IFMT == S_IFREG && info.st_mode & 0o044 != 0
    }

    /// Opens `path` for reading a secret; the caller closes the descriptor. A file others can
    /// read is refused when it holds a passphrase (`passphrase`; exit 77, docs/reference.md) and
    /// `--allow-shared-passphrase-file` was not given, else used with a warning. A missing file, a
    /// directory or an unreadable one is a usage error (64), as any other setting that is wrong
    /// (InputFile).
    static func open(_ path: String, what: String, passphrase: Bool = false) throws -> Int32 {
        let fd = try InputFile(path: path, what: "the \(what) file", missing: .usage, standardInput: false).fd
        guard isReadableByOthers(fd: fd) else { return fd }
        if passphrase && !sharedPassphraseFileAllowed {
            close(fd)
            throw CLIError(
                .wrongPassphrase,
                "\(path) is readable by others: the \(what) in it is not kept secret, so rxvault does not use it",
                hint: "chmod 600 \(path), or pass --allow-shared-passphrase-file to use it all the same")
        }
        Terminal.warning("\(path) is readable by others; chmod 600 \(path)")
        return fd
    }

    /// The identities in an age identity file (`AGE-SECRET-KEY-1...` lines).
    static func identities(_ path: String, what: String = "identity") throws -> [AgeIdentity] {
        let fd = try open(path, what: what)
        defer { close(fd) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            if n < 0 {
                throw CLIError(.usage, "cannot read the \(what) file \(path): \(String(cString: strerror(errno)))")
            }
            if n == 0 { break }
            bytes += buffer[0..<n]
            guard bytes.count <= maxIdentityFileBytes else {
                throw CLIError(.usage, "\(path) is not an age identity file (over \(maxIdentityFileBytes >> 10) KiB)")
            }
        }
        defer { for i in bytes.indices { bytes[i] = 0 } }
        if bytes.starts(with: Array("-----BEGIN OPENSSH PRIVATE KEY-----".utf8))
            || bytes.starts(with: Array("-----BEGIN".utf8))
        {
            // age reads SSH private keys (and asks for their passphrase); rxvault leaves that to it.
            throw CLIError(
                .usage, "\(path) is an SSH private key; rxvault reads age identity files only",
                hint:
                    "let age decrypt with it and give rxvault the result (a backup: age -d -i \(path) BACKUP | rxvault restore -)"
            )
        }
        guard let text = String(validating: bytes, as: UTF8.self), let identities = AgeIdentity.parseFile(text),
            !identities.isEmpty
        else {
            throw CLIError(
                .usage, "\(path) is not an age identity file (AGE-SECRET-KEY-1... lines)",
                hint: "make one with age-keygen, or with rxvault client add NAME --generate --identity-out FILE")
        }
        return identities
    }
}
