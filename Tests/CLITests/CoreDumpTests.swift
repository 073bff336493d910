import Foundation
import RxTestSupport
import Testing

/// No rxvault process can be dumped (SECURITY.md, "Keys in memory"; issue 50: `serve` killed
/// with SIGSEGV under `ulimit -c unlimited` left a 106 MB core with the patient's name in it).
/// Each kind is started under `ulimit -c unlimited` and killed with SIGSEGV: an owner command,
/// `serve`, the unlock agent and the attachment checker child. None leaves a core, while a
/// plain program killed the same way beside them does, so the machine does write cores.
@Suite(.serialized) struct CoreDumpTests {
    /// Where cores go while the test runs: the machine's core_pattern when it names a file (a
    /// core then lands in the dying process's folder, or in the pattern's), else "core", set
    /// for the test when it runs as root and put back after. Nil: cores cannot be seen here.
    final class CoreSite {
        static let patternFile = "/proc/sys/kernel/core_pattern"
        let pattern: String
        private let restore: String?

        init?() {
            guard let current = try? String(contentsOfFile: Self.patternFile, encoding: .utf8) else { return nil }
            let trimmed = current.trimmingCharacters(in: .whitespacesAndNewlines)
            if !trimmed.hasPrefix("|") && !trimmed.isEmpty {
                pattern = trimmed
                restore = nil
                return
            }
            guard getuid() == 0,
                (try? "core\n".write(toFile: Self.patternFile, atomically: false, encoding: .utf8)) != nil
            else { return nil }
            pattern = "core"
            restore = current
        }

        deinit {
            if let restore { try? restore.write(toFile: Self.patternFile, atomically: false, encoding: .utf8) }
        }

        /// The folder a core of a process working in `folder` would be written to, and the
        /// start of its name.
        func place(workingIn folder: String) -> (folder: String, prefix: String) {
            let absolute = pattern.hasPrefix("/")
            let path = absolute ? pattern : folder + "/" + pattern
            let directory = (path as NSString).deletingLastPathComponent
            let name = (path as NSString).lastPathComponent
            return (directory, String(name.prefix { $0 != "%" }))
        }

        /// The cores in that folder now, with their sizes.
        func cores(workingIn folder: String) -> Set<String> {
            let (directory, prefix) = place(workingIn: folder)
            let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
            return Set(names.filter { $0.hasPrefix(prefix) }.map { directory + "/" + $0 })
        }
    }

    /// A program started under `ulimit -c unlimited` (sh execs it: the pid is the program's).
    final class Started {
        let process = Process()
        let input = Pipe()
        let errors = Pipe()

        init(_ command: [String], environment: [String: String], in folder: String, as user: [String] = []) throws {
            let shell = ["-c", #"ulimit -c unlimited && exec "$@""#, "sh"] + command
            process.executableURL = URL(fileURLWithPath: user.isEmpty ? "/bin/sh" : "/usr/bin/setpriv")
            process.arguments = user.isEmpty ? shell : user + ["/bin/sh"] + shell
            var env = environment
            // The runtime's crash reporter would take seconds to print a backtrace first.
            env["SWIFT_BACKTRACE"] = "enable=no"
            process.environment = env
            process.currentDirectoryURL = URL(fileURLWithPath: folder)
            process.standardInput = input
            process.standardOutput = FileHandle.nullDevice
            process.standardError = errors
            try process.run()
        }

        /// What it said on stderr, once it has exited.
        var stderr: String {
            guard !process.isRunning else { return "(running)" }
            return String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        }

        var pid: pid_t { process.processIdentifier }

        /// Killed with SIGSEGV; true when it died of it.
        func segfault() -> Bool {
            kill(pid, SIGSEGV)
            process.waitUntilExit()
            return process.terminationReason == .uncaughtSignal && process.terminationStatus == SIGSEGV
        }

        deinit {
            if process.isRunning {
                kill(pid, SIGKILL)
                process.waitUntilExit()
            }
        }
    }

    /// What /proc says of a running process: its core size limit (soft, hard) and coredump_filter.
    static func coreLimit(_ pid: pid_t) -> String? {
        guard let limits = try? String(contentsOfFile: "/proc/\(pid)/limits", encoding: .utf8),
            let line = limits.split(separator: "\n").first(where: { $0.hasPrefix("Max core file size") })
        else { return nil }
        return line.dropFirst("Max core file size".count).split(separator: " ").prefix(2).joined(separator: " ")
    }

    static func coredumpFilter(_ pid: pid_t) -> String? {
        (try? String(contentsOfFile: "/proc/\(pid)/coredump_filter", encoding: .utf8))?
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Whether `pid` has applied rxvault's protection, as /proc shows it from outside: no core
    /// size, and a coredump_filter of 0 (no memory in a dump even a pipe handler would take).
    static func isProtected(_ pid: pid_t) -> Bool {
        coreLimit(pid) == "0 0" && coredumpFilter(pid).flatMap { UInt32($0, radix: 16) } == 0
    }

    @Test func noKindOfRxvaultProcessLeavesACore() throws {
        let cli = try CLIHarness()
        try cli.initVault()
        _ = try cli.add(CLIHarness.glassesArguments)
        let folder = cli.directory.path
        let binary = CLIHarness.binary
        let site = CoreSite()
        defer { withExtendedLifetime(site) {} }

        // A plain program, killed as the others will be, leaves a core: cores can be seen here.
        var coresAreWritten = false
        if let site {
            let before = site.cores(workingIn: folder)
            let control = try Started(["/bin/sleep", "60"], environment: cli.environment, in: folder)
            #expect(
                eventually(within: 10) { Self.coreLimit(control.pid) == "unlimited unlimited" },
                "\(Self.coreLimit(control.pid) ?? "?"): \(control.stderr)")
            #expect(control.segfault())
            coresAreWritten = eventually(within: 5) { site.cores(workingIn: folder).count > before.count }
            for core in site.cores(workingIn: folder).subtracting(before) {
                try? FileManager.default.removeItem(atPath: core)
            }
        }

        // Each kind, started under `ulimit -c unlimited`, protects itself at once and dies without a core.
        var kinds: [(String, () throws -> (pid: pid_t, folder: String, kill: () -> Bool))] = []
        kinds.append(
            (
                "an owner command (waiting for its passphrase)",
                {
                    var env = cli.environment
                    env["RXVAULT_PASSPHRASE_FILE"] = nil
                    let started = try Started([binary, "list", "--passphrase-fd", "0"], environment: env, in: folder)
                    return (started.pid, folder, { withExtendedLifetime(started) { started.segfault() } })
                }
            ))
        kinds.append(
            (
                "serve",
                {
                    let socket = cli.path("core.sock")
                    let started = try Started(
                        [binary, "serve", "--socket", socket], environment: cli.environment, in: folder)
                    #expect(eventually(within: 30) { FileManager.default.fileExists(atPath: socket) }, "serve started")
                    return (started.pid, folder, { withExtendedLifetime(started) { started.segfault() } })
                }
            ))
        kinds.append(
            (
                "the attachment checker child",
                {
                    let arguments = try ParserChildArgumentTests.arguments()
                    let started = try Started([binary] + arguments, environment: cli.environment, in: folder)
                    return (started.pid, folder, { withExtendedLifetime(started) { started.segfault() } })
                }
            ))
        kinds.append(
            (
                "the unlock agent",
                {
                    let unlocking = try Started([binary, "unlock"], environment: cli.environment, in: folder)
                    unlocking.process.waitUntilExit()
                    #expect(unlocking.process.terminationStatus == 0)
                    let pid = try #require(Self.agent(of: cli), "the agent is running")
                    // Started by `unlock` with an environment of its own, the agent has the Swift
                    // runtime's crash handler, which may outlive a SIGSEGV sent from outside (no fault
                    // happened); whether it dies of it or not, it must leave no core. Then it is killed.
                    return (
                        pid, "/",
                        {
                            kill(pid, SIGSEGV)
                            if !eventually(within: 5, { !Subprocess.isRunning(pid) }) { kill(pid, SIGKILL) }
                            return true
                        }
                    )
                }
            ))
        for (kind, start) in kinds {
            let (pid, workingIn, segfault) = try start()
            let before = site?.cores(workingIn: workingIn) ?? []
            #expect(
                eventually(within: 30) { Self.isProtected(pid) },
                "\(kind): \(Self.coreLimit(pid) ?? "?"), filter \(Self.coredumpFilter(pid) ?? "?")")
            #expect(segfault(), "\(kind) died of SIGSEGV")
            if let site, coresAreWritten {
                // A core takes the kernel a moment to write; the control's was seen within it.
                Thread.sleep(forTimeInterval: 0.5)
                let left = site.cores(workingIn: workingIn).subtracting(before)
                #expect(left.isEmpty, "\(kind) left a core: \(left)")
                for core in left { try? FileManager.default.removeItem(atPath: core) }
            }
        }
        if site == nil || !coresAreWritten {
            // Still proven above from /proc; say why the cores themselves were not looked for.
            print(
                "CoreDumpTests: this machine writes no core for a plain program (core_pattern \(CoreSite().map(\.pattern) ?? "a pipe, not changeable")); only /proc was checked"
            )
        }
    }

    /// The agent of the harness's vault, by its command line (`_agent --vault-file PATH`).
    static func agent(of cli: CLIHarness) -> pid_t? {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.lazy.compactMap { name -> pid_t? in
            guard let pid = pid_t(name), let raw = FileManager.default.contents(atPath: "/proc/\(name)/cmdline") else {
                return nil
            }
            let arguments = raw.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
            return arguments.contains("_agent") && arguments.contains(cli.vaultPath) ? pid : nil
        }.first
    }

    /// PR_SET_DUMPABLE itself, seen from outside: a process another user runs is its own in
    /// /proc while it is dumpable, and root's once it is not. The checker child (it needs no
    /// vault, so it runs as nobody) against a plain program run the same way.
    @Test func anRxvaultProcessIsNotDumpable() throws {
        guard getuid() == 0 else { return } // setpriv to another user needs root.
        let nobody = ["--reuid=65534", "--regid=65534", "--clear-groups"]
        let plain = try Started(["/bin/sleep", "60"], environment: ["PATH": "/usr/bin:/bin"], in: "/", as: nobody)
        let arguments = try ParserChildArgumentTests.arguments()
        // nobody cannot reach a binary under a private folder (a CI clone in `mktemp -d`): a copy
        // of it in a folder anyone may enter.
        let open = try TemporaryDirectory(prefix: "rxdump", short: true, permissions: 0o755)
        let binary = open.path + "/rxvault"
        try FileManager.default.copyItem(atPath: CLIHarness.binary, toPath: binary)
        chmod(binary, 0o755)
        let child = try Started([binary] + arguments, environment: ["PATH": "/usr/bin:/bin"], in: "/", as: nobody)
        func owner(_ pid: pid_t) -> uid_t? {
            var info = stat()
            return stat("/proc/\(pid)/status", &info) == 0 ? info.st_uid : nil
        }
        #expect(
            eventually(within: 10) { Self.coreLimit(plain.pid) == "unlimited unlimited" && owner(plain.pid) == 65534 })
        #expect(eventually(within: 30) { Self.isProtected(child.pid) }, "\(child.stderr)")
        #expect(
            owner(child.pid) == 0,
            "the checker child is dumpable: /proc/\(child.pid)/status belongs to \(owner(child.pid).map(String.init) ?? "?")"
        )
        let status = (try? String(contentsOfFile: "/proc/\(child.pid)/status", encoding: .utf8)) ?? ""
        #expect(status.contains("Uid:\t65534"), "it runs as nobody: \(status.prefix(300))")
    }
}
