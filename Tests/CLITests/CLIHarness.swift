import Foundation
import Testing

/// Runs the built `rxvault` binary as a user or a script would, in a throwaway directory with a
/// passphrase file, and returns what it printed and its exit status.
final class CLIHarness: @unchecked Sendable {
    let directory: URL
    let vaultPath: String
    let passphraseFile: String
    var environment: [String: String]

    /// The binary under test: `$RXVAULT_BIN`, else `rxvault` next to the test bundle.
    static let binary: String = {
        if let path = ProcessInfo.processInfo.environment["RXVAULT_BIN"] { return path }
        let runner = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        var dir = runner.deletingLastPathComponent()
        for _ in 0..<4 {
            let candidate = dir.appendingPathComponent("rxvault").path
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
            dir = dir.deletingLastPathComponent()
        }
        return ".build/debug/rxvault"
    }()

    /// util-linux's setsid(1), to run the binary without a controlling terminal.
    static let setsid = "/usr/bin/setsid"

    struct Result: CustomStringConvertible {
        let status: Int32
        let stdout: String
        let stderr: String
        /// Killed by a signal (a trap, an abort): `status` is then the signal's number.
        var signalled = false
        var description: String {
            "\(signalled ? "killed by signal" : "exit") \(status)\n--- stdout\n\(stdout)\n--- stderr\n\(stderr)"
        }
    }

    init(passphrase: String = "correct horse battery staple", today: String? = "2026-06-15") throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("rxvault-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        vaultPath = directory.appendingPathComponent("vault.rxv").path
        passphraseFile = directory.appendingPathComponent("passphrase").path
        try (passphrase + "\n").write(toFile: passphraseFile, atomically: true, encoding: .utf8)
        // Secrets kept as a careful user keeps them: rxvault warns about files others can read.
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: passphraseFile)
        environment = [
            "PATH": "/usr/bin:/bin", "HOME": directory.path, "RXVAULT_PATH": vaultPath,
            "RXVAULT_PASSPHRASE_FILE": passphraseFile, "LANG": "C.UTF-8"
        ]
        if let today { environment["RXVAULT_TODAY"] = today }
    }

    deinit { try? FileManager.default.removeItem(at: directory) }

    func path(_ name: String) -> String { directory.appendingPathComponent(name).path }

    func write(_ text: String, to name: String) throws -> String {
        let p = path(name)
        try text.write(toFile: p, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: p)
        return p
    }

    @discardableResult
    func run(
        _ arguments: [String], stdin: String? = nil, stdinFile: String? = nil,
        environment extra: [String: String?] = [:], timeout: Double = CLIHarness.commandTimeout
    ) throws -> Result {
        var env = environment
        for (key, value) in extra { env[key] = value }
        // A session of its own, without a controlling terminal (as in CI): rxvault asks on
        // /dev/tty, and a prompt must never wait on the terminal the suite was started from.
        let command =
            FileManager.default.isExecutableFile(atPath: Self.setsid)
            ? [Self.setsid, "--wait", Self.binary] : [Self.binary]
        return try Self.spawn(
            command + arguments, environment: env, directory: directory, stdin: stdin, stdinFile: stdinFile,
            timeout: timeout)
    }

    /// Runs the binary with arguments and environment values given as raw bytes, which a Swift
    /// `String` (and so `Process`) cannot carry when they are not UTF-8: python3 execs it with
    /// them, inside `setsid` as `run` does. `environment` adds to (or, with nil, removes from)
    /// the harness's environment.
    func run(bytes arguments: [[UInt8]], environment extra: [String: [UInt8]?] = [:]) throws -> Result {
        func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }
        var env = environment
        var rawEnv: [String] = []
        for (key, value) in extra {
            env[key] = nil
            if let value { rawEnv.append("\(key)=\(hex(value))") }
        }
        let exec = """
            import os, sys
            binary, raw_env, args = sys.argv[1], sys.argv[2], sys.argv[3:]
            env = {k.encode(): v.encode() for k, v in os.environ.items()}
            for item in filter(None, raw_env.split(",")):
                k, v = item.split("=")
                env[k.encode()] = bytes.fromhex(v)
            os.execve(binary, [binary.encode()] + [bytes.fromhex(a) for a in args], env)
            """
        let python =
            ["/usr/bin/env", "python3", "-c", exec, Self.binary, rawEnv.joined(separator: ",")] + arguments.map(hex)
        let command =
            FileManager.default.isExecutableFile(atPath: Self.setsid) ? [Self.setsid, "--wait"] + python : python
        return try Self.spawn(command, environment: env, directory: directory)
    }

    /// Longest one spawned command may take: past it the test fails with `Timeout` and the
    /// command and everything it started are killed, so a hang fails the suite instead of
    /// stalling CI. `RXVAULT_TEST_COMMAND_TIMEOUT` (seconds) changes it for slow machines.
    static let commandTimeout: Double =
        ProcessInfo.processInfo.environment["RXVAULT_TEST_COMMAND_TIMEOUT"].flatMap(Double.init) ?? 180

    /// A command that did not finish in time: it was killed; what it printed until then.
    struct Timeout: Error, CustomStringConvertible {
        let command: [String]
        let seconds: Double
        let stdout: String
        let stderr: String
        var description: String {
            "timed out after \(seconds) s and was killed: \(command.map { String($0.prefix(200)) }.joined(separator: " "))"
                + "\n--- stdout\n\(stdout)\n--- stderr\n\(stderr)"
        }
    }

    /// Runs `command` (the executable's path first) and collects what it prints, within `timeout`
    /// seconds. stdin is `stdin`'s text, `stdinFile`, or empty.
    static func spawn(
        _ command: [String], environment: [String: String], directory: URL, stdin: String? = nil,
        stdinFile: String? = nil, timeout: Double = CLIHarness.commandTimeout
    ) throws -> Result {
        // A child that exits without reading its stdin must fail the write, not kill the suite.
        signal(SIGPIPE, SIG_IGN)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: command[0])
        process.arguments = Array(command.dropFirst())
        process.environment = environment
        process.currentDirectoryURL = directory
        let out = Pipe()
        let err = Pipe()
        let input = Pipe()
        process.standardOutput = out
        process.standardError = err
        if let stdinFile {
            process.standardInput = try FileHandle(forReadingFrom: URL(fileURLWithPath: stdinFile))
        } else {
            process.standardInput = input
        }
        try process.run()
        let deadline = DispatchTime.now() + timeout
        // Both pipes are read (and stdin written) on their own threads, so a large output cannot
        // block the child and a child that never ends cannot block the test past the deadline.
        let collected = Collected()
        let pipes = DispatchGroup()
        for (index, pipe) in [out, err].enumerated() {
            DispatchQueue.global().async(group: pipes) {
                collected.set(index, pipe.fileHandleForReading.readDataToEndOfFile())
            }
        }
        let writer = input.fileHandleForWriting
        let text = stdin
        DispatchQueue.global().async {
            if let text { try? writer.write(contentsOf: Data(text.utf8)) }
            try? writer.close()
        }
        var finished = pipes.wait(timeout: deadline) == .success
        while finished && process.isRunning {
            if DispatchTime.now() >= deadline {
                finished = false
                break
            }
            usleep(2_000)
        }
        if !finished {
            killTree(process.processIdentifier)
            _ = pipes.wait(timeout: .now() + 10)
            process.waitUntilExit()
            throw Timeout(
                command: command, seconds: timeout, stdout: String(decoding: collected.get(0), as: UTF8.self),
                stderr: String(decoding: collected.get(1), as: UTF8.self))
        }
        process.waitUntilExit()
        return Result(
            status: process.terminationStatus, stdout: String(decoding: collected.get(0), as: UTF8.self),
            stderr: String(decoding: collected.get(1), as: UTF8.self),
            signalled: process.terminationReason == .uncaughtSignal)
    }

    /// Kills `pid` and every process it started (found through the parent ids in /proc): the
    /// harness's command runs inside setsid, and rxvault runs its file checker as a child.
    static func killTree(_ pid: Int32) {
        var children: [Int32: [Int32]] = [:]
        for name in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
            guard let child = Int32(name),
                let stat = try? String(contentsOfFile: "/proc/\(name)/stat", encoding: .utf8),
                let close = stat.lastIndex(of: ")")
            else { continue }
            // Fields after "pid (comm) ": state, ppid, ...
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            if fields.count > 1, let parent = Int32(fields[1]) { children[parent, default: []].append(child) }
        }
        var tree: [Int32] = []
        var pending = [pid]
        while let next = pending.popLast() {
            tree.append(next)
            pending += children[next] ?? []
        }
        for member in tree { kill(member, SIGKILL) }
    }

    /// What the reading threads collected: stdout (0) and stderr (1).
    final class Collected: @unchecked Sendable {
        private let lock = NSLock()
        private var data = [Data(), Data()]
        func set(_ index: Int, _ value: Data) {
            lock.lock()
            data[index] = value
            lock.unlock()
        }
        func get(_ index: Int) -> Data {
            lock.lock()
            defer { lock.unlock() }
            return data[index]
        }
    }

    /// `rxvault init --kdf interactive` (the fast preset keeps the suite quick).
    func initVault() throws {
        let r = try run(["init", "--kdf", "interactive"])
        #expect(r.status == 0, "\(r)")
    }

    static let glassesArguments = [
        "add", "glasses", "--patient", "Quintessa Marlowe", "--dob", "1980-04-02",
        "--prescriber", "Dr Ignatius Fairweather", "--prescriber-licence", "OPT-77123",
        "--issued", "2026-03-01", "--expires", "2028-03-01",
        "--od", "-2.25 -0.75 x180 add +2.00", "--os", "-1.75 -0.50 x170 add +2.00 prism 1.5 BI",
        "--pd", "63.5", "--near-pd", "60.5", "--vertex", "12", "--note", "Varifocal lenses preferred"
    ]
    static let contactsArguments = [
        "add", "contacts", "--patient", "Quintessa Marlowe", "--prescriber", "Dr Ignatius Fairweather",
        "--issued", "2026-03-01", "--expires", "2026-07-01",
        "--od", "-3.25 bc 8.6 dia 14.2", "--os", "-2.75 -1.25 x170 bc 8.7 dia 14.5",
        "--brand", "Zylofocus Aquaclear"
    ]

    /// Adds a prescription and returns its short id.
    func add(_ arguments: [String]) throws -> String {
        let r = try run(arguments)
        #expect(r.status == 0, "\(r)")
        return r.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The bytes of the vault file and its -wal and -shm companions, as an attacker would read them.
    func vaultFileBytes() -> Data {
        ["", "-wal", "-shm"].reduce(into: Data()) { all, suffix in
            if let data = FileManager.default.contents(atPath: vaultPath + suffix) { all.append(data) }
        }
    }

    /// Makes an identity with Debian's age-keygen in the test directory; returns its recipient.
    func ageKeygen(_ name: String) throws -> String {
        let keygen = Process()
        keygen.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        keygen.arguments = ["age-keygen", "-o", path(name)]
        keygen.standardError = FileHandle.nullDevice
        try keygen.run()
        keygen.waitUntilExit()
        try #require(keygen.terminationStatus == 0, "age-keygen is needed (apt-get install age)")
        let text = try String(contentsOfFile: path(name), encoding: .utf8)
        return String(try #require(text.split(separator: "\n").first { $0.hasPrefix("# public key: ") }).dropFirst(14))
    }

    func json(_ text: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    }
}

extension Data {
    func contains(_ text: String) -> Bool { range(of: Data(text.utf8)) != nil }
    func contains(_ bytes: [UInt8]) -> Bool { range(of: Data(bytes)) != nil }
}
