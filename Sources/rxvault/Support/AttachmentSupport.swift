import ArgumentParser
import Foundation
import RxValidate
import RxVault

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Builds the isolated parser: rxvault runs itself with the hidden `_parse-untrusted` command.
enum ParserFactory {
    static func make(limits: ValidationLimits) throws -> IsolatedParser {
        var environment: [String: String] = [:]
        if let fault = FaultHook.parserFault { environment["RXVAULT_PARSER_FAULT"] = fault }
        var parser = IsolatedParser(
            executable: try selfExecutable(), arguments: ["_parse-untrusted"], limits: limits,
            environment: environment)
        parser.onUnsandboxed = { sandbox in
            Terminal.err("rxvault: warning: the file checker ran with \(sandbox) (SECURITY.md, \"Attachment checker\")")
        }
        if Terminal.stderrIsTTY {
            parser.onSlow = { limit in
                Terminal.err("rxvault: still checking the file (it is refused if that takes over \(Int(limit)) s)")
            }
        }
        if let text = Environment.values["RXVAULT_PARSER_TIMEOUT"], !text.isEmpty {
            guard let seconds = Int(text), (1...3600).contains(seconds) else {
                throw CLIError(.usage, "RXVAULT_PARSER_TIMEOUT '\(text)' is not a number of seconds (1 to 3600)")
            }
            parser.wallClockSeconds = Double(seconds)
            parser.cpuSeconds = seconds
        }
        return parser
    }

    static func selfExecutable() throws -> String {
        var buffer = [CChar](repeating: 0, count: 4096)
        let n = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard n > 0 else { return CommandLine.arguments[0] }
        return String(decoding: buffer[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// Writes a file the safe way: into a temporary file (mode 0600) beside the target, then into
/// place only when everything was written and verified. Without `replace`, the final step is
/// link(2), which fails rather than overwrite a file that appeared meanwhile. Every step names
/// the file by its folder's descriptor and its own name (`openat`, `linkat`, `renameat`), and
/// none follows a link in that name: the temporary file is created with `O_EXCL | O_NOFOLLOW`,
/// and a symbolic link at the target (allowed only with `replace`, WriteTarget) is replaced by
/// the rename, never written through.
struct SafeFileWriter {
    let target: String
    let temporary: String
    let fd: Int32
    /// The target's folder, opened once: a folder renamed or replaced by a link after the check
    /// does not move where the file goes.
    let folder: Int32
    let name: String
    let temporaryName: String

    init(target given: String, replace: Bool) throws {
        let target = try WriteTarget.file(for: given, replace: replace)
        let directory = PathText.folder(of: target)
        let shownFolder = directory.isEmpty ? "." : directory
        let name = PathText.name(of: target)
        let temporaryName = ".\(name).rxvault-\(String(UInt32.random(in: .min ... .max), radix: 16))"
        let folder = open(shownFolder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard folder >= 0 else {
            throw CLIError(.cannotWrite, "cannot create a file in \(shownFolder): \(String(cString: strerror(errno)))")
        }
        let fd = openat(folder, temporaryName, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            let reason = String(cString: strerror(errno))
            _ = Glibc.close(folder)
            throw CLIError(.cannotWrite, "cannot create a file in \(shownFolder): \(reason)")
        }
        self.target = target
        self.temporary = shownFolder + "/" + temporaryName
        self.fd = fd
        self.folder = folder
        self.name = name
        self.temporaryName = temporaryName
    }

    /// Creates `target` with what `body` writes, all or nothing.
    static func write(to target: String, replace: Bool, _ body: (SafeFileWriter) throws -> Void) throws {
        let writer = try SafeFileWriter(target: target, replace: replace)
        do { try body(writer) } catch {
            writer.discard()
            throw error
        }
        try writer.commit(replace: replace)
    }

    func write(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + offset, $0.count - offset) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { throw CLIError(.cannotWrite, "cannot write \(target): \(String(cString: strerror(errno)))") }
            offset += n
        }
    }

    func commit(replace: Bool) throws {
        defer { _ = Glibc.close(folder) }
        guard fsync(fd) == 0, Glibc.close(fd) == 0 else {
            let reason = String(cString: strerror(errno))
            unlinkat(folder, temporaryName, 0)
            throw CLIError(.cannotWrite, "cannot write \(target): \(reason)")
        }
        if replace {
            // What is there now (it may have changed since the check): a file or a link is
            // replaced; anything else (a directory, a FIFO, a device) never is.
            var info = stat()
            if fstatat(folder, name, &info, AT_SYMLINK_NOFOLLOW) == 0,
                info.st_mode & S_IFMT != S_IFREG && info.st_mode & S_IFMT != S_IFLNK
            {
                unlinkat(folder, temporaryName, 0)
                throw CLIError(
                    .alreadyExists,
                    "\(target) is not a regular file (it changed while rxvault wrote); nothing was replaced")
            }
            guard renameat(folder, temporaryName, folder, name) == 0 else {
                let reason = String(cString: strerror(errno))
                unlinkat(folder, temporaryName, 0)
                throw CLIError(.cannotWrite, "cannot write \(target): \(reason)")
            }
        } else {
            defer { unlinkat(folder, temporaryName, 0) }
            // linkat never follows a link at the new name: a link there (dangling or not) is EEXIST.
            guard linkat(folder, temporaryName, folder, name, 0) == 0 else {
                throw errno == EEXIST
                    ? CLIError(.alreadyExists, "\(target) already exists", hint: "pass --force to replace it")
                    : CLIError(.cannotWrite, "cannot write \(target): \(String(cString: strerror(errno)))")
            }
        }
    }

    func discard() {
        _ = Glibc.close(fd)
        unlinkat(folder, temporaryName, 0)
        _ = Glibc.close(folder)
    }

    /// Links the finished file to the first of `name(1)`, `name(2)`, ... that does not exist
    /// (link(2) never replaces, so two writers racing for a name both get one); returns it.
    func commitToFreeName(_ name: (Int) -> String) throws -> String {
        defer { _ = Glibc.close(folder) }
        guard fsync(fd) == 0, Glibc.close(fd) == 0 else {
            let reason = String(cString: strerror(errno))
            unlinkat(folder, temporaryName, 0)
            throw CLIError(.cannotWrite, "cannot write \(target): \(reason)")
        }
        defer { unlinkat(folder, temporaryName, 0) }
        for sequence in 1...10_000 {
            let candidate = name(sequence)
            if linkat(folder, temporaryName, AT_FDCWD, candidate, 0) == 0 { return candidate }
            guard errno == EEXIST else {
                throw CLIError(.cannotWrite, "cannot write \(candidate): \(String(cString: strerror(errno)))")
            }
        }
        throw CLIError(.alreadyExists, "\(name(1)) and 10,000 names after it already exist")
    }
}

/// "32MiB", "10M", "500K", "1G", "1048576".
struct ByteSize: ExpressibleByArgument {
    let bytes: Int
    init?(argument: String) {
        let text = argument.lowercased().replacingOccurrences(of: " ", with: "")
        let units: [(String, Int)] = [
            ("gib", 1 << 30), ("mib", 1 << 20), ("kib", 1 << 10), ("gb", 1_000_000_000), ("mb", 1_000_000),
            ("kb", 1000), ("g", 1 << 30), ("m", 1 << 20), ("k", 1 << 10), ("b", 1)
        ]
        var multiplier = 1
        var number = Substring(text)
        for (suffix, value) in units where text.hasSuffix(suffix) {
            multiplier = value
            number = text.dropLast(suffix.count)
            break
        }
        guard let value = Int(number), value > 0, value <= ValidationLimits.maxBytesRange.upperBound / multiplier else {
            return nil
        }
        bytes = value * multiplier
    }
}
