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
        var description: String { "\(signalled ? "killed by signal" : "exit") \(status)\n--- stdout\n\(stdout)\n--- stderr\n\(stderr)" }
    }

    init(passphrase: String = "correct horse battery staple", today: String? = "2026-06-15") throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("rxvault-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        vaultPath = directory.appendingPathComponent("vault.rxv").path
        passphraseFile = directory.appendingPathComponent("passphrase").path
        try (passphrase + "\n").write(toFile: passphraseFile, atomically: true, encoding: .utf8)
        // Secrets kept as a careful user keeps them: rxvault warns about files others can read.
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: passphraseFile)
        environment = ["PATH": "/usr/bin:/bin", "HOME": directory.path, "RXVAULT_PATH": vaultPath,
                       "RXVAULT_PASSPHRASE_FILE": passphraseFile, "LANG": "C.UTF-8"]
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
    func run(_ arguments: [String], stdin: String? = nil, stdinFile: String? = nil,
             environment extra: [String: String?] = [:]) throws -> Result {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Self.binary)
        process.arguments = arguments
        // A session of its own, without a controlling terminal (as in CI): rxvault asks on
        // /dev/tty, and a prompt must never wait on the terminal the suite was started from.
        if FileManager.default.isExecutableFile(atPath: Self.setsid) {
            process.executableURL = URL(fileURLWithPath: Self.setsid)
            process.arguments = ["--wait", Self.binary] + arguments
        }
        var env = environment
        for (key, value) in extra { env[key] = value }
        process.environment = env
        process.currentDirectoryURL = directory
        let out = Pipe(), err = Pipe(), input = Pipe()
        process.standardOutput = out
        process.standardError = err
        if let stdinFile {
            process.standardInput = try FileHandle(forReadingFrom: URL(fileURLWithPath: stdinFile))
        } else {
            process.standardInput = input
        }
        try process.run()
        if let stdin { input.fileHandleForWriting.write(Data(stdin.utf8)) }
        try input.fileHandleForWriting.close()
        // Read both pipes before waiting, so a large output cannot block the child.
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        let errData = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Result(status: process.terminationStatus, stdout: String(decoding: outData, as: UTF8.self),
                      stderr: String(decoding: errData, as: UTF8.self), signalled: process.terminationReason == .uncaughtSignal)
    }

    /// `rxvault init --kdf interactive` (the fast preset keeps the suite quick).
    func initVault() throws {
        let r = try run(["init", "--kdf", "interactive"])
        #expect(r.status == 0, "\(r)")
    }

    static let glassesArguments = ["add", "glasses", "--patient", "Quintessa Marlowe", "--dob", "1980-04-02",
                                   "--prescriber", "Dr Ignatius Fairweather", "--prescriber-licence", "OPT-77123",
                                   "--issued", "2026-03-01", "--expires", "2028-03-01",
                                   "--od", "-2.25 -0.75 x180 add +2.00", "--os", "-1.75 -0.50 x170 add +2.00 prism 1.5 BI",
                                   "--pd", "63.5", "--near-pd", "60.5", "--vertex", "12", "--note", "Varifocal lenses preferred"]
    static let contactsArguments = ["add", "contacts", "--patient", "Quintessa Marlowe", "--prescriber", "Dr Ignatius Fairweather",
                                    "--issued", "2026-03-01", "--expires", "2026-07-01",
                                    "--od", "-3.25 bc 8.6 dia 14.2", "--os", "-2.75 -1.25 x170 bc 8.7 dia 14.5",
                                    "--brand", "Zylofocus Aquaclear"]

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
