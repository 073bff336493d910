import Foundation
import RxTestSupport
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
    init(
        _ cli: CLIHarness, arguments: [String]? = nil, environment extra: [String: String?] = [:],
        socketName: String = "api.sock"
    ) throws {
        self.cli = cli
        socket = cli.path(socketName)
        var env = cli.environment
        for (key, value) in extra { env[key] = value }
        process.executableURL = URL(fileURLWithPath: CLIHarness.binary(for: env))
        process.arguments = ["serve"] + (arguments ?? ["--socket", socket])
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
    /// with curl and age), over the socket or at `url` (TCP).
    func token(identity: String, url: String? = nil) throws -> String {
        let recipient = try Self.recipient(of: identity)
        let challenge = try curl("POST", "/auth/challenge", body: #"{"recipient": "\#(recipient)"}"#, url: url).json
        let armored = try #require(challenge["age"] as? String)
        try armored.write(toFile: cli.path("challenge.age"), atomically: true, encoding: .utf8)
        let (status, secret, _) = try Self.run(
            "/usr/bin/env", ["age", "-d", "-i", identity, cli.path("challenge.age")], in: cli.directory)
        #expect(status == 0)
        let id = try #require(challenge["challenge"] as? String)
        let answer = try curl(
            "POST", "/auth/token",
            body: #"{"challenge": "\#(id)", "response": "\#(secret.trimmingCharacters(in: .whitespacesAndNewlines))"}"#,
            url: url)
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

    static let root = Repository.root

    static var python: String { Repository.fhirPython }

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

/// HTTP/1.1 over a Unix socket from the test process: a test that makes many requests would
/// spend most of its time starting a curl for each. GET only; `Connection: close`.
enum RawHTTP {
    struct Answer {
        let status: Int
        let body: String
        var json: [String: Any] { (try? JSONSerialization.jsonObject(with: Data(body.utf8))) as? [String: Any] ?? [:] }
    }

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// With `statusOnly`, reads the status line and hangs up (an attachment is not read whole).
    static func get(_ socketPath: String, _ path: String, token: String?, statusOnly: Bool = false) throws -> Answer {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket: \(errno)") }
        defer { close(fd) }
        var timeout = timeval(tv_sec: 20, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(socketPath.utf8)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in for (i, b) in bytes.enumerated() { raw[i] = b } }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard connected == 0 else { throw Failure(description: "connect \(socketPath): errno \(errno)") }
        var request = "GET \(path) HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n"
        if let token { request += "Authorization: Bearer \(token)\r\n" }
        request += "\r\n"
        let data = Array(request.utf8)
        var sent = 0
        while sent < data.count {
            let n = data[sent...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            guard n > 0 else { throw Failure(description: "write: errno \(errno)") }
            sent += n
        }
        var response: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n == 0 { break }
            guard n > 0 else { throw Failure(description: "read \(path): errno \(errno)") }
            response += buffer[0..<n]
            if statusOnly, let line = response.firstIndex(of: 10) {
                let words = String(decoding: response[..<line], as: UTF8.self).split(separator: " ")
                guard words.count >= 2, let status = Int(words[1]) else {
                    throw Failure(description: "bad status line")
                }
                return Answer(status: status, body: "")
            }
        }
        let separator: [UInt8] = [13, 10, 13, 10]
        guard let end = (0..<max(0, response.count - 3)).first(where: { Array(response[$0..<$0 + 4]) == separator })
        else {
            throw Failure(description: "no complete response to \(path)")
        }
        let head = String(decoding: response[0..<end], as: UTF8.self)
        var body = Array(response[(end + 4)...])
        guard let statusText = head.split(separator: " ").dropFirst().first, let status = Int(statusText) else {
            throw Failure(description: "bad status line: \(head.prefix(80))")
        }
        if head.lowercased().contains("transfer-encoding: chunked") { body = try dechunk(body) }
        return Answer(status: status, body: String(decoding: body, as: UTF8.self))
    }

    static func dechunk(_ data: [UInt8]) throws -> [UInt8] {
        var out: [UInt8] = []
        var at = 0
        while true {
            guard let lineEnd = (at..<max(at, data.count - 1)).first(where: { data[$0] == 13 && data[$0 + 1] == 10 }),
                let size = Int(
                    String(decoding: data[at..<lineEnd], as: UTF8.self).split(separator: ";").first ?? "", radix: 16)
            else {
                throw Failure(description: "bad chunked body")
            }
            if size == 0 { return out }
            out += data[(lineEnd + 2)..<(lineEnd + 2 + size)]
            at = lineEnd + 2 + size + 2
        }
    }
}
