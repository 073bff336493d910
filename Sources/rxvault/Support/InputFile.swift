import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A file named on the command line that rxvault reads: the file to attach or import, a backup,
/// a passphrase or identity file; or `-`, standard input, where a command offers it.
///
/// Every such file is opened here, so each command says the same thing about the same mistake
/// (docs/reference.md, "Exit codes"): a file that is not there exits 67 (64 for passphrase and identity
/// files, as a missing setting), a directory or a file that cannot be read (permissions, a loop
/// of links) exits 64, both before any passphrase is asked for. Anything else that opens is read
/// as a stream, as `cat` reads it: `/dev/null` is an empty file, and a FIFO or `<(command)` is
/// read until its writer closes it (opening a FIFO waits for a writer, as it does for `cat`).
struct InputFile {
    let fd: Int32
    let isStandardInput: Bool
    let path: String
    /// The size of a regular file; nil for standard input, pipes and devices.
    let size: Int?

    /// `what` names the kind of file in messages ("the passphrase file"); `missing` is the exit
    /// status for a file that is not there.
    init(path: String, what: String? = nil, missing: ExitStatus = .notFound, standardInput: Bool = true) throws {
        self.path = path
        if standardInput && path == "-" {
            fd = STDIN_FILENO
            isStandardInput = true
            size = nil
            return
        }
        let named = what.map { "\($0) \(path)" } ?? path
        guard !path.isEmpty else { throw CLIError(.usage, "the path of \(what ?? "the file to read") is empty") }
        let opened = open(path, O_RDONLY | O_CLOEXEC)
        guard opened >= 0 else {
            let error = errno
            throw CLIError(
                error == ENOENT || error == ENOTDIR ? missing : .usage,
                "cannot read \(named): \(String(cString: strerror(error)))")
        }
        var info = stat()
        guard fstat(opened, &info) == 0 else {
            let reason = String(cString: strerror(errno))
            _ = Glibc.close(opened)
            throw CLIError(.usage, "cannot read \(named): \(reason)")
        }
        if info.st_mode & S_IFMT == S_IFDIR {
            _ = Glibc.close(opened)
            throw CLIError(.usage, "\(named) is a directory, not a file")
        }
        fd = opened
        isStandardInput = false
        size = info.st_mode & S_IFMT == S_IFREG ? Int(info.st_size) : nil
    }

    /// Fills `buffer` as far as the input allows; 0 at the end.
    func read(into buffer: inout [UInt8]) throws -> Int {
        var filled = 0
        while filled < buffer.count {
            let n = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress! + filled, $0.count - filled) }
            if n < 0 && errno == EINTR { continue }
            if n < 0 {
                throw CLIError(
                    .failure, "cannot read \(isStandardInput ? "the input" : path): \(String(cString: strerror(errno)))"
                )
            }
            if n == 0 { break }
            filled += n
        }
        return filled
    }

    /// The whole input; `tooLarge` is thrown as soon as it is over `limit` bytes.
    func readAll(limit: Int, tooLarge: @autoclosure () -> CLIError) throws -> [UInt8] {
        if let size, size > limit { throw tooLarge() }
        var bytes: [UInt8] = []
        // A regular file's size is known: room for exactly that (and the read that says it
        // ended), not the doubling growth that held 64 MiB for an import of a 40 MB file.
        if let size { bytes.reserveCapacity(size + 1) }
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        while true {
            let n = try read(into: &buffer)
            if n == 0 { return bytes }
            bytes += buffer[0..<n]
            if bytes.count > limit { throw tooLarge() }
        }
    }

    func close() { if !isStandardInput { _ = Glibc.close(fd) } }
}
