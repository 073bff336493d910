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
        var environment = ProcessInfo.processInfo.environment
        if environment["LESS"] == nil { environment["LESS"] = "FRX" }
        guard let pager = Spawned(shellCommand: command, environment: environment) else {
            Terminal.out(text)
            return
        }
        // While the pager has the screen, Ctrl-C and Ctrl-\ are its keys (less scrolls back or
        // stops a search): rxvault, in the same process group, must neither die under it nor
        // leave it behind. A pager that quits early (q) closes the pipe: the rest is simply not
        // wanted, so EPIPE ends the writing, not the program.
        let oldInterrupt = signal(SIGINT, SIG_IGN)
        let oldQuit = signal(SIGQUIT, SIG_IGN)
        let oldPipe = signal(SIGPIPE, SIG_IGN)
        defer {
            signal(SIGINT, oldInterrupt)
            signal(SIGQUIT, oldQuit)
            signal(SIGPIPE, oldPipe)
        }
        let bytes = Array((text + "\n").utf8)
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { write(pager.input, $0.baseAddress! + offset, $0.count - offset) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { break }
            offset += n
        }
        close(pager.input)
        pager.wait()
    }

    /// `/bin/sh -c COMMAND` started as git starts its pager: in rxvault's own process group, so
    /// it is in the terminal's foreground group and may read keys and set the terminal's modes.
    /// (Foundation's `Process` puts its child in a group of its own: a background job, which the
    /// terminal stops with SIGTTOU the moment less sets its modes, and rxvault waited for a pager
    /// that could never run: a blank screen.) Its stdin is a pipe from rxvault; stdout and stderr
    /// are rxvault's, the terminal.
    struct Spawned {
        let pid: pid_t
        /// The write end of the pager's stdin.
        let input: Int32

        init?(shellCommand: String, environment: [String: String]) {
            var ends: [Int32] = [-1, -1]
            guard pipe(&ends) == 0 else { return nil }
            // Neither end leaks into the pager beyond its stdin (the write end must close for it
            // to see the end of the text).
            for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
            var actions = posix_spawn_file_actions_t()
            var attributes = posix_spawnattr_t()
            posix_spawn_file_actions_init(&actions)
            posix_spawnattr_init(&attributes)
            defer {
                posix_spawn_file_actions_destroy(&actions)
                posix_spawnattr_destroy(&attributes)
            }
            posix_spawn_file_actions_adddup2(&actions, ends[0], STDIN_FILENO)
            // The pager gets the default action of the signals rxvault ignores while it waits.
            var defaults = sigset_t()
            sigemptyset(&defaults)
            for signal in [SIGINT, SIGQUIT, SIGPIPE] { sigaddset(&defaults, signal) }
            posix_spawnattr_setsigdefault(&attributes, &defaults)
            var none = sigset_t()
            sigemptyset(&none)
            posix_spawnattr_setsigmask(&attributes, &none)
            posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))
            let words: [String] = ["/bin/sh", "-c", shellCommand]
            let arguments: [UnsafeMutablePointer<CChar>?] = words.map { strdup($0) }
            let variables: [UnsafeMutablePointer<CChar>?] = environment.map { strdup("\($0.key)=\($0.value)") }
            defer {
                arguments.forEach { free($0) }
                variables.forEach { free($0) }
            }
            var child: pid_t = 0
            let argv = arguments + [nil]
            let envp = variables + [nil]
            let started = posix_spawn(&child, "/bin/sh", &actions, &attributes, argv, envp)
            close(ends[0])
            guard started == 0 else {
                close(ends[1])
                return nil
            }
            pid = child
            input = ends[1]
        }

        func wait() {
            var status: Int32 = 0
            while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        }
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
