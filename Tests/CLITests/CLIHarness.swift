import Foundation
import RxTestSupport
import RxValidate
import Testing

/// Runs the built `rxvault` binary as a user or a script would, in a throwaway directory with a
/// passphrase file, and returns what it printed and its exit status.
final class CLIHarness: @unchecked Sendable {
    let folder: TemporaryDirectory
    var directory: URL { folder.url }
    /// The harness's own XDG_RUNTIME_DIR (short: a socket path holds at most 107 bytes), so an
    /// agent one test starts (`unlock`, `serve`) is never found by another's commands, nor by
    /// the user's.
    let runtimeFolder: TemporaryDirectory
    var runtime: String { runtimeFolder.path }
    let vaultPath: String
    let passphraseFile: String
    /// The passphrase the harness was made with (in `passphraseFile`).
    let passphrase: String
    var environment: [String: String]

    /// The binary under test: `$RXVAULT_BIN`, else `rxvault` next to the test bundle.
    static let binary: String = ProcessInfo.processInfo.environment["RXVAULT_BIN"] ?? builtBesideTests

    /// The `rxvault` that `swift build --build-tests` made beside the test bundle: a debug build.
    static let builtBesideTests: String = {
        let runner = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        var dir = runner.deletingLastPathComponent()
        for _ in 0..<4 {
            let candidate = dir.appendingPathComponent("rxvault").path
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
            dir = dir.deletingLastPathComponent()
        }
        return ".build/debug/rxvault"
    }()

    /// The fault hooks: compiled only into debug builds (Package.swift's RXVAULT_FAULT_HOOKS), so a
    /// release binary, the one users run, ignores them (`FaultHookTests`).
    static let faultHooks: Set<String> = [
        "RXVAULT_PARSER_FAULT", "RXVAULT_TEST_WRITE_PAUSE_MS", "RXVAULT_TEST_READ_PAUSE_MS",
        "RXVAULT_TEST_IMPORT_FLUSH"
    ]

    /// The binary a command with this environment runs: the debug build beside the tests when it
    /// sets a fault hook (the release binary would ignore it), else the binary under test.
    static func binary(for environment: [String: String]) -> String {
        environment.keys.contains { faultHooks.contains($0) } ? builtBesideTests : binary
    }

    /// util-linux's setsid(1), to run the binary without a controlling terminal.
    static let setsid = "/usr/bin/setsid"

    typealias Result = CommandResult

    init(passphrase: String = "correct horse battery staple", today: String? = "2026-06-15") throws {
        folder = try TemporaryDirectory(prefix: "rxvault-cli")
        runtimeFolder = try TemporaryDirectory(prefix: "rxr", short: true, permissions: 0o700)
        vaultPath = folder.path("vault.rxv")
        passphraseFile = folder.path("passphrase")
        self.passphrase = passphrase
        try (passphrase + "\n").write(toFile: passphraseFile, atomically: true, encoding: .utf8)
        // Secrets kept as a careful user keeps them: rxvault warns about files others can read.
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: passphraseFile)
        environment = [
            "PATH": "/usr/bin:/bin", "HOME": folder.path, "RXVAULT_PATH": vaultPath,
            "RXVAULT_PASSPHRASE_FILE": passphraseFile, "LANG": "C.UTF-8", "XDG_RUNTIME_DIR": runtimeFolder.path
        ]
        if let today { environment["RXVAULT_TODAY"] = today }
    }

    func path(_ name: String) -> String { folder.path(name) }

    /// Puts `text` in the harness's passphrase file, kept private (mode 0600): rxvault refuses a
    /// passphrase file others can read.
    func rewritePassphraseFile(_ text: String) throws {
        _ = try write(text, to: "passphrase")
    }

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
            ? [Self.setsid, "--wait", Self.binary(for: env)] : [Self.binary(for: env)]
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

    /// Longest one spawned command may take (`RXVAULT_TEST_COMMAND_TIMEOUT`, RxTestSupport's
    /// `Subprocess.defaultTimeout`): past it the test fails with `Timeout` and the command and
    /// everything it started are killed, so a hang fails the suite instead of stalling CI.
    static var commandTimeout: Double { Subprocess.defaultTimeout }

    typealias Timeout = CommandTimeout

    /// Runs `command` (the executable's path first) and collects what it prints, within `timeout`
    /// seconds. stdin is `stdin`'s text, `stdinFile`, or empty.
    static func spawn(
        _ command: [String], environment: [String: String], directory: URL, stdin: String? = nil,
        stdinFile: String? = nil, timeout: Double = CLIHarness.commandTimeout
    ) throws -> Result {
        try Subprocess.run(
            command, environment: environment, directory: directory, stdin: stdin.map { Data($0.utf8) },
            stdinFile: stdinFile, timeout: timeout)
    }

    /// Runs a program other than rxvault (age, python3, sh, ...) in the harness's directory with
    /// its environment (plus `extra`; nil removes a variable), `RXVAULT` naming the binary.
    func tool(
        _ command: [String], stdin: String? = nil, environment extra: [String: String?] = [:],
        timeout: Double = CLIHarness.commandTimeout
    ) throws -> Result {
        var env = environment
        env["RXVAULT"] = Self.binary
        for (key, value) in extra { env[key] = value }
        return try Subprocess.run(
            command, environment: env, directory: directory, stdin: stdin.map { Data($0.utf8) }, timeout: timeout)
    }

    /// A shell command line run by `tool`.
    func shell(_ line: String, environment extra: [String: String?] = [:]) throws -> Result {
        try tool(["/bin/sh", "-c", line], environment: extra)
    }

    /// The file checker as the vault API runs it: the built binary's `_parse-untrusted` child.
    /// (In-process vault tests that attach files live here, not in RxVaultTests, for it.)
    static func fileChecker(limits: ValidationLimits = .init()) throws -> IsolatedParser {
        try #require(
            FileManager.default.isExecutableFile(atPath: binary), "the rxvault binary is not built at \(binary)")
        return IsolatedParser(executable: binary, arguments: ["_parse-untrusted"], limits: limits)
    }

    /// A new vault at `vaultPath` with the harness's passphrase, made in-process at RxTestSupport's
    /// fast KDF (`TestKDF.fast`): what `rxvault init` makes, without a process, and cheap to open
    /// for every command the test then runs. Tests of `init` itself, or of the KDF presets, run
    /// `init` (`initVault(through: "interactive")`).
    func initVault() throws {
        try createVault(at: vaultPath, passphrase: passphrase)
    }

    /// `rxvault init --kdf PRESET` through the binary.
    func initVault(through preset: String) throws {
        let r = try run(["init", "--kdf", preset])
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
        let keygen = try tool(["age-keygen", "-o", path(name)])
        try #require(keygen.status == 0, "age-keygen is needed (apt-get install age): \(keygen)")
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
