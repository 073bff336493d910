import Foundation

/// What a program run by a test printed, and how it ended.
public struct CommandResult: CustomStringConvertible, Sendable {
    public let status: Int32
    public let stdoutData: Data
    public let stderrData: Data
    /// Killed by a signal (a trap, an abort): `status` is then the signal's number.
    public var signalled = false

    public var stdout: String { String(decoding: stdoutData, as: UTF8.self) }
    public var stderr: String { String(decoding: stderrData, as: UTF8.self) }

    public init(status: Int32, stdout: Data, stderr: Data, signalled: Bool = false) {
        self.status = status
        stdoutData = stdout
        stderrData = stderr
        self.signalled = signalled
    }

    public init(status: Int32, stdout: String, stderr: String, signalled: Bool = false) {
        self.init(status: status, stdout: Data(stdout.utf8), stderr: Data(stderr.utf8), signalled: signalled)
    }

    public var description: String {
        "\(signalled ? "killed by signal" : "exit") \(status)\n--- stdout\n\(stdout)\n--- stderr\n\(stderr)"
    }
}

/// A program that did not finish in time: it was killed; what it printed until then.
public struct CommandTimeout: Error, CustomStringConvertible {
    public let command: [String]
    public let seconds: Double
    public let stdout: String
    public let stderr: String
    public var description: String {
        "timed out after \(seconds) s and was killed: \(command.map { String($0.prefix(200)) }.joined(separator: " "))"
            + "\n--- stdout\n\(stdout)\n--- stderr\n\(stderr)"
    }
}

/// Runs programs for tests (rxvault, age, python3, ssh-keygen, ...) with a deadline, so a
/// hang fails its test instead of stalling the suite and CI.
public enum Subprocess {
    /// Longest one program may take: past it the test fails with `CommandTimeout` and the
    /// program and everything it started are killed. `RXVAULT_TEST_COMMAND_TIMEOUT` (seconds)
    /// changes it for slow machines.
    public static let defaultTimeout: Double =
        ProcessInfo.processInfo.environment["RXVAULT_TEST_COMMAND_TIMEOUT"].flatMap(Double.init) ?? 180

    /// Runs `command` (the executable's path first, or a name looked up on PATH through
    /// /usr/bin/env) and collects what it prints, within `timeout` seconds. stdin is `stdin`,
    /// the file `stdinFile`, or empty. `environment` nil inherits the test's.
    public static func run(
        _ command: [String], environment: [String: String]? = nil, directory: URL? = nil,
        stdin: Data? = nil, stdinFile: String? = nil, timeout: Double = defaultTimeout
    ) throws -> CommandResult {
        // A child that exits without reading its stdin must fail the write, not kill the suite.
        signal(SIGPIPE, SIG_IGN)
        let process = Process()
        if command[0].hasPrefix("/") {
            process.executableURL = URL(fileURLWithPath: command[0])
            process.arguments = Array(command.dropFirst())
        } else {
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = command
        }
        if let environment { process.environment = environment }
        if let directory { process.currentDirectoryURL = directory }
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
        DispatchQueue.global().async {
            if let stdin { try? writer.write(contentsOf: stdin) }
            try? writer.close()
        }
        var finished = pipes.wait(timeout: deadline) == .success
        while finished && process.isRunning {
            if DispatchTime.now() >= deadline {
                finished = false
                break
            }
            usleep(1_000)
        }
        if !finished {
            killTree(process.processIdentifier)
            _ = pipes.wait(timeout: .now() + 10)
            process.waitUntilExit()
            throw CommandTimeout(
                command: command, seconds: timeout, stdout: String(decoding: collected.get(0), as: UTF8.self),
                stderr: String(decoding: collected.get(1), as: UTF8.self))
        }
        process.waitUntilExit()
        return CommandResult(
            status: process.terminationStatus, stdout: collected.get(0), stderr: collected.get(1),
            signalled: process.terminationReason == .uncaughtSignal)
    }

    /// `run` with stdin given as text.
    public static func run(
        _ command: [String], environment: [String: String]? = nil, directory: URL? = nil,
        stdin text: String, timeout: Double = defaultTimeout
    ) throws -> CommandResult {
        try run(command, environment: environment, directory: directory, stdin: Data(text.utf8), timeout: timeout)
    }

    /// Kills `pid` and every process it started (found through the parent ids in /proc): a
    /// command run inside setsid, or rxvault's file checker, is a grandchild.
    public static func killTree(_ pid: Int32) {
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

    /// Alive and not a zombie (a process whose parent exited is reparented; its reaper may be slow).
    public static func isRunning(_ pid: pid_t) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return false }
        let state = stat[stat.index(close, offsetBy: 2)]
        return state != "Z" && state != "X"
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
}
