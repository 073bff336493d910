#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Every byte rxvault writes to standard output and standard error goes through here, never
/// through `FileHandle.write`, which traps (`try!`) on any error and so turned
/// `rxvault list | head -1` into a stack trace and exit 132 wherever SIGPIPE is ignored (a
/// PostgreSQL vault's event loop ignores it for the whole process).
enum StandardStream {
    /// Writes all of `bytes` to `fd` (STDOUT_FILENO or STDERR_FILENO).
    ///
    /// A reader that has gone away (EPIPE: `| head -1`, a pager quit early) ends rxvault as a closed
    /// pipe ends any Unix filter: by SIGPIPE, quietly, so the shell sees the usual status (141) on
    /// every kind of vault, whether or not SIGPIPE was ignored. Any other failure of standard
    /// output (a full disk behind `> file`, an I/O error) is said on stderr and ends with
    /// `cannot-write` (74): output that stopped halfway is never passed off as success. A failing
    /// standard error has nowhere to be reported and is dropped.
    static func write(_ bytes: UnsafeRawBufferPointer, to fd: Int32) {
        guard var next = bytes.baseAddress else { return }
        var left = bytes.count
        while left > 0 {
            let n = Glibc.write(fd, next, left)
            if n > 0 {
                next += n
                left -= n
                continue
            }
            if n < 0 && errno == EINTR { continue }
            // A stream another program left non-blocking (a shared terminal, a pipe) waits until
            // it can take more, as a blocking one would.
            if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) {
                var ready = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
                _ = poll(&ready, 1, -1)
                continue
            }
            let failure = n < 0 ? errno : EIO
            if failure == EPIPE { endByBrokenPipe() }
            guard fd == STDOUT_FILENO else { return }
            let reason = String(cString: strerror(failure))
            let message = Array("rxvault: error: cannot write to standard output: \(reason)\n".utf8)
            message.withUnsafeBytes { _ = Glibc.write(STDERR_FILENO, $0.baseAddress, $0.count) }
            exit(ExitStatus.cannotWrite.rawValue)
        }
    }

    static func write(_ bytes: [UInt8], to fd: Int32) {
        bytes.withUnsafeBytes { write($0, to: fd) }
    }

    static func write(_ text: String, to fd: Int32) {
        var text = text
        text.withUTF8 { write(UnsafeRawBufferPointer($0), to: fd) }
    }

    /// Dies of SIGPIPE as the default disposition would have made it: the signal's action is put
    /// back and the signal unblocked first. `_exit(141)` is the fallback should it somehow return.
    static func endByBrokenPipe() -> Never {
        signal(SIGPIPE, SIG_DFL)
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, SIGPIPE)
        sigprocmask(SIG_UNBLOCK, &set, nil)
        raise(SIGPIPE)
        _exit(128 + SIGPIPE)
    }
}
