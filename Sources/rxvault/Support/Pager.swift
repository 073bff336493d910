import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Long output on a terminal goes through a pager, as git does: `$PAGER` (default `less`, with
/// `LESS=FRX` unless set: quit when it fits, keep colour, leave the screen as it was), only when
/// stdout is a terminal and the text is taller than the window. `--no-pager`, an empty `PAGER`
/// or `PAGER=cat` print directly; a pipe or a file always gets the text as it is.
enum Pager {
    static func show(_ text: String, enabled: Bool) {
        guard enabled, isatty(STDOUT_FILENO) == 1, let command = command(), text.count > 0 else {
            Terminal.out(text)
            return
        }
        var size = winsize()
        let rows = ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0 && size.ws_row > 0 ? Int(size.ws_row) : 24
        guard text.split(separator: "\n", omittingEmptySubsequences: false).count >= rows else {
            Terminal.out(text)
            return
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", command]
        var environment = ProcessInfo.processInfo.environment
        if environment["LESS"] == nil { environment["LESS"] = "FRX" }
        process.environment = environment
        let input = Pipe()
        process.standardInput = input
        do { try process.run() } catch {
            Terminal.out(text)
            return
        }
        // A pager that quits early (q) closes the pipe: the rest is simply not wanted.
        signal(SIGPIPE, SIG_IGN)
        let bytes = Array((text + "\n").utf8)
        let fd = input.fileHandleForWriting.fileDescriptor
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + offset, $0.count - offset) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { break }
            offset += n
        }
        try? input.fileHandleForWriting.close()
        process.waitUntilExit()
    }

    /// The pager to run, or nil for none.
    static func command() -> String? {
        let given = Environment.values["PAGER"]
        if let given {
            let trimmed = given.trimmingCharacters(in: .whitespaces)
            return trimmed.isEmpty || trimmed == "cat" ? nil : trimmed
        }
        return FileManager.default.isExecutableFile(atPath: "/usr/bin/less") ? "less" : nil
    }
}
