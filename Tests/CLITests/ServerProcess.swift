import Foundation
import Testing

/// `rxvault serve` running in the background for a test, on a Unix socket in the test's folder
/// (or TCP), with helpers to call it as clients do: curl, and the Python reference client.
final class ServerProcess: @unchecked Sendable {
    let cli: CLIHarness
    let process = Process()
    let socket: String
    private let lock = NSLock()
    private var errText = ""

    /// Starts the server and waits until it says it is serving (or fails the test).
    init(_ cli: CLIHarness, arguments: [String]? = nil, environment extra: [String: String?] = [:]) throws {
        self.cli = cli
        socket = cli.path("api.sock")
        process.executableURL = URL(fileURLWithPath: CLIHarness.binary)
        process.arguments = ["serve"] + (arguments ?? ["--socket", socket])
        var env = cli.environment
        for (key, value) in extra { env[key] = value }
        process.environment = env
        process.currentDirectoryURL = cli.directory
        let err = Pipe()
        process.standardError = err
        process.standardOutput = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        err.fileHandleForReading.readabilityHandler = { [weak self] handle in
            let data = handle.availableData
            guard let self, !data.isEmpty else { return }
            self.lock.lock()
            self.errText += String(decoding: data, as: UTF8.self)
            self.lock.unlock()
        }
        try process.run()
        let deadline = Date().addingTimeInterval(30)
        while !stderr.contains("rxvault: serving vault") {
            guard process.isRunning, Date() < deadline else {
                Issue.record("the server did not start: \(stderr)")
                throw ServerNotStarted()
            }
            usleep(20_000)
        }
    }

    struct ServerNotStarted: Error {}

    var stderr: String {
        lock.lock()
        defer { lock.unlock() }
        return errText
    }

    /// SIGTERM, then its exit status.
    @discardableResult
    func stop() -> Int32 {
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
        return process.terminationStatus
    }

    deinit {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }

    struct HTTPResult {
        let status: Int
        let body: String
        let headers: String
        var json: [String: Any] { (try? JSONSerialization.jsonObject(with: Data(body.utf8))) as? [String: Any] ?? [:] }
    }

    /// One HTTP request with curl over the server's socket (or to `url` for TCP).
    func curl(
        _ method: String, _ path: String, token: String? = nil, body: String? = nil, url: String? = nil,
        extra: [String] = [], output: String? = nil
    ) throws -> HTTPResult {
        var arguments = [
            "-s", "-S", "-X", method, "-D", cli.path("curl-headers"), "-o", output ?? cli.path("curl-body"), "-w",
            "%{http_code}",
            "--max-time", "30"
        ]
        if url == nil { arguments += ["--unix-socket", socket] }
        if let token { arguments += ["-H", "Authorization: Bearer \(token)"] }
        if let body { arguments += ["-H", "Content-Type: application/json", "--data-binary", body] }
        arguments += extra
        arguments.append((url ?? "http://localhost") + path)
        let (status, out, err) = try Self.run("/usr/bin/curl", arguments, in: cli.directory)
        #expect(status == 0, "curl failed: \(err)")
        let bodyText =
            output == nil ? ((try? String(contentsOfFile: cli.path("curl-body"), encoding: .utf8)) ?? "") : ""
        return HTTPResult(
            status: Int(out) ?? 0, body: bodyText,
            headers: (try? String(contentsOfFile: cli.path("curl-headers"), encoding: .utf8)) ?? "")
    }

    /// A bearer token for the client whose identity file is `identity` (as docs/api.md shows
    /// with curl and age).
    func token(identity: String) throws -> String {
        let recipient = try Self.recipient(of: identity)
        let challenge = try curl("POST", "/auth/challenge", body: #"{"recipient": "\#(recipient)"}"#).json
        let armored = try #require(challenge["age"] as? String)
        try armored.write(toFile: cli.path("challenge.age"), atomically: true, encoding: .utf8)
        let (status, secret, _) = try Self.run(
            "/usr/bin/env", ["age", "-d", "-i", identity, cli.path("challenge.age")], in: cli.directory)
        #expect(status == 0)
        let id = try #require(challenge["challenge"] as? String)
        let answer = try curl(
            "POST", "/auth/token",
            body: #"{"challenge": "\#(id)", "response": "\#(secret.trimmingCharacters(in: .whitespacesAndNewlines))"}"#)
        #expect(answer.status == 200, "\(answer.body)")
        return try #require(answer.json["access_token"] as? String)
    }

    static func recipient(of identity: String) throws -> String {
        let text = try String(contentsOfFile: identity, encoding: .utf8)
        let line = try #require(text.split(separator: "\n").first { $0.hasPrefix("# public key: ") })
        return String(line.dropFirst("# public key: ".count))
    }

    /// The reference client (examples/rxvault_client.py) with the project's Python.
    func client(identity: String, _ arguments: [String]) throws -> (Int32, String, String) {
        try Self.run(
            Self.python,
            [
                Self.root.appendingPathComponent("examples/rxvault_client.py").path, "--socket", socket,
                "--identity", identity
            ] + arguments, in: cli.directory)
    }

    /// Every resource in `json` (a resource, or a Bundle and its entries) parsed by Python
    /// fhir.resources (R4B); returns the resource types, sorted, or the parser's complaint.
    static func validateFHIR(_ json: String, in directory: URL) throws -> (ok: Bool, types: String) {
        let file = directory.appendingPathComponent("fhir-\(UUID().uuidString).json").path
        try json.write(toFile: file, atomically: true, encoding: .utf8)
        let script = """
            import json, sys
            from fhir.resources.R4B import get_fhir_model_class
            data = json.load(open(sys.argv[1]))
            kinds = []
            def check(resource):
                get_fhir_model_class(resource["resourceType"]).model_validate(resource)
                kinds.append(resource["resourceType"])
            check(data)
            for entry in data.get("entry", []):
                check(entry["resource"])
            print(",".join(sorted(kinds)))
            """
        let (status, out, err) = try run(python, ["-c", script, file], in: directory)
        return (status == 0, status == 0 ? out.trimmingCharacters(in: .whitespacesAndNewlines) : err)
    }

    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    static var python: String {
        ProcessInfo.processInfo.environment["RXVAULT_FHIR_PYTHON"]
            ?? root.appendingPathComponent(".build/python/bin/python3").path
    }

    static func run(_ executable: String, _ arguments: [String], in directory: URL) throws -> (Int32, String, String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.currentDirectoryURL = directory
        process.environment = ["PATH": "/usr/bin:/bin", "HOME": directory.path, "LANG": "C.UTF-8"]
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        let errData = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (
            process.terminationStatus, String(decoding: outData, as: UTF8.self),
            String(decoding: errData, as: UTF8.self)
        )
    }
}
