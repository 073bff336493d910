import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// What failed while starting, driving or stopping a test's Syncthing devices, with both
/// devices' logs: a test that needs Syncthing fails with this, and the message says why.
public struct SyncthingError: Error, CustomStringConvertible {
    public let description: String

    public init(_ what: String, logs: String = "") {
        description = "Syncthing test devices: \(what)" + (logs.isEmpty ? "" : "\n" + logs)
    }
}

/// One real Syncthing instance for a test (Debian's `syncthing`), kept to this machine: its own
/// home folder (keys, config.xml, index database, log), the REST API on a free 127.0.0.1 port
/// with a random API key, one listening address `tcp://127.0.0.1:PORT`, and global and local
/// discovery, relays, NAT traversal, usage reporting, crash reporting and upgrades off, all
/// set in config.xml before its first start so it never reaches past the loopback.
///
/// It runs under a small shell guardian (in a session of its own) whose standard input the
/// test process holds: when the test process closes it (`stop()`), or dies in any way (kill -9
/// included), the guardian stops Syncthing's process group (SIGTERM, then SIGKILL after 5 s) and
/// exits, so no test leaves a Syncthing behind.
public final class SyncthingDevice: @unchecked Sendable {
    public let name: String
    /// Syncthing's home: cert.pem, key.pem, config.xml, its database, `syncthing.log`.
    public let home: String
    public let guiPort: Int
    public let listenPort: Int
    public var listenAddress: String { "tcp://127.0.0.1:\(listenPort)" }
    /// The device id (`XXXXXXX-...`, eight groups) and its short form (the first group), which
    /// Syncthing writes into a conflict copy's name.
    public private(set) var id = ""
    public var shortID: String { String(id.prefix { $0 != "-" }) }
    public var logFile: String { home + "/syncthing.log" }

    private let apiKey: String
    private let headerFile: String
    private let guardian: Process
    private let guardianInput: Locked<Int32>

    /// The `syncthing` program: on PATH (/usr/bin for Debian's package), or nil.
    public static var executable: String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        for folder in path.split(separator: ":") + ["/usr/bin"] {
            let candidate = "\(folder)/syncthing"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }

    /// Makes the device's keys and config in `home` (which must not exist) and starts it; returns
    /// once its REST API answers.
    public init(name: String, home: String) throws {
        guard let syncthing = Self.executable else {
            throw SyncthingError("syncthing is not installed (apt-get install syncthing)")
        }
        self.name = name
        self.home = home
        try FileManager.default.createDirectory(
            atPath: home, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        guiPort = freeLoopbackPort()
        listenPort = freeLoopbackPort()
        apiKey = UUID().uuidString.replacingOccurrences(of: "-", with: "")
        headerFile = home + "/api-key-header"
        try ("X-API-Key: \(apiKey)\n").write(toFile: headerFile, atomically: true, encoding: .utf8)

        let environment = Self.environment(home: home)
        let generated = try Subprocess.run(
            [syncthing, "generate", "--home=\(home)", "--no-default-folder", "--skip-port-probing"],
            environment: environment, timeout: 60)
        guard generated.status == 0 else { throw SyncthingError("syncthing generate failed:\n\(generated)") }
        try Self.keepToLoopback(config: home + "/config.xml", gui: guiPort, listen: "tcp://127.0.0.1:\(listenPort)")

        // Syncthing in a process group of its own (setsid: it runs a monitor and a child), so the
        // guardian stops both, whatever state the test process left them in.
        let script = """
            trap '' INT HUP QUIT
            log=$1; shift
            setsid "$@" </dev/null >>"$log" 2>&1 &
            st=$!
            IFS= read -r _ || true
            kill -s TERM -- "-$st" 2>/dev/null
            i=0
            while [ "$i" -lt 50 ] && kill -s 0 -- "-$st" 2>/dev/null; do
                sleep 0.1
                i=$((i + 1))
            done
            kill -s KILL -- "-$st" 2>/dev/null
            wait "$st" 2>/dev/null
            exit 0
            """
        let watchdog: Watchdog
        do {
            watchdog = try Watchdog.start(
                script: script, name: "rxvault-syncthing-guardian",
                arguments: [
                    home + "/syncthing.log", syncthing,
                    "serve", "--home=\(home)", "--no-browser", "--no-restart", "--no-upgrade", "--no-default-folder",
                    "--gui-address=http://127.0.0.1:\(guiPort)", "--gui-apikey=\(apiKey)"
                ], directory: home, environment: environment)
        } catch {
            throw SyncthingError("could not start \(name)'s Syncthing: \(error)")
        }
        guardian = watchdog.process
        guardianInput = Locked(watchdog.end)
        do {
            guard try eventuallyThrowing(within: 30, { (try? get("/rest/system/ping")) != nil }) else {
                throw SyncthingError("\(name)'s REST API did not answer within 30 s", logs: log())
            }
            guard let status = try get("/rest/system/status") as? [String: Any], let id = status["myID"] as? String
            else { throw SyncthingError("\(name)'s /rest/system/status has no myID", logs: log()) }
            self.id = id
        } catch {
            stop()
            throw error
        }
    }

    deinit { stop() }

    /// Syncthing's environment: HOME its own (nothing read from or written to the user's), no
    /// upgrades, no restarts by a monitor process.
    static func environment(home: String) -> [String: String] {
        [
            "HOME": home, "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "STNOUPGRADE": "1", "STNORESTART": "1",
            "STNODEFAULTFOLDER": "1"
        ]
    }

    /// Rewrites the options of a freshly generated config.xml: each must be found as generated,
    /// so a Syncthing whose config reads otherwise fails here instead of reaching the network.
    static func keepToLoopback(config path: String, gui: Int, listen: String) throws {
        var text = try String(contentsOfFile: path, encoding: .utf8)
        let changes = [
            ("<listenAddress>default</listenAddress>", "<listenAddress>\(listen)</listenAddress>"),
            ("<globalAnnounceEnabled>true<", "<globalAnnounceEnabled>false<"),
            ("<localAnnounceEnabled>true<", "<localAnnounceEnabled>false<"),
            ("<relaysEnabled>true<", "<relaysEnabled>false<"), ("<natEnabled>true<", "<natEnabled>false<"),
            ("<startBrowser>true<", "<startBrowser>false<"), ("<urAccepted>0<", "<urAccepted>-1<"),
            ("<crashReportingEnabled>true<", "<crashReportingEnabled>false<"),
            ("<autoUpgradeIntervalH>12<", "<autoUpgradeIntervalH>0<"),
            ("<reconnectionIntervalS>60<", "<reconnectionIntervalS>1<"),
            ("<address>127.0.0.1:8384</address>", "<address>127.0.0.1:\(gui)</address>")
        ]
        for (from, to) in changes {
            guard text.contains(from) else {
                throw SyncthingError("the generated \(path) has no \(from): this Syncthing's config reads otherwise")
            }
            text = text.replacingOccurrences(of: from, with: to)
        }
        try text.write(toFile: path, atomically: true, encoding: .utf8)
    }

    // MARK: - The REST API

    /// GETs `path` (with its query) and returns the parsed JSON (nil for an empty body).
    @discardableResult
    public func get(_ path: String) throws -> Any? { try request("GET", path) }

    @discardableResult
    public func post(_ path: String, json body: Any? = nil) throws -> Any? { try request("POST", path, body) }

    @discardableResult
    public func patch(_ path: String, json body: Any) throws -> Any? { try request("PATCH", path, body) }

    private func request(_ method: String, _ path: String, _ body: Any? = nil) throws -> Any? {
        var command = [
            "/usr/bin/curl", "--silent", "--show-error", "--fail-with-body", "--max-time", "60", "-X", method,
            "-H", "@" + headerFile, "http://127.0.0.1:\(guiPort)\(path)"
        ]
        var input: Data?
        if let body {
            input = try JSONSerialization.data(withJSONObject: body)
            command += ["-H", "Content-Type: application/json", "--data-binary", "@-"]
        }
        let result = try Subprocess.run(command, stdin: input, timeout: 70)
        guard result.status == 0 else {
            throw SyncthingError("\(name): \(method) \(path) failed: \(result.stderr) \(result.stdout)")
        }
        guard !result.stdoutData.isEmpty else { return nil }
        return try? JSONSerialization.jsonObject(with: result.stdoutData, options: [.fragmentsAllowed])
    }

    /// The end of the device's log, for a failure's message.
    public func log(lines: Int = 60) -> String {
        let text = (try? String(contentsOfFile: logFile, encoding: .utf8)) ?? "(no log at \(logFile))"
        let tail = text.split(separator: "\n", omittingEmptySubsequences: false).suffix(lines).joined(separator: "\n")
        return "--- \(name)'s Syncthing log (\(logFile)), last \(lines) lines\n" + tail
    }

    // MARK: - Stopping

    /// Asks Syncthing to shut down, then closes the guardian's input (which stops it if it is
    /// still running) and waits for the guardian to exit: nothing of this device runs after.
    /// Once; later calls return at once.
    public func stop() {
        let fd = guardianInput.withLock { fd -> Int32 in
            defer { fd = -1 }
            return fd
        }
        guard fd >= 0 else { return }
        _ = try? Subprocess.run(
            [
                "/usr/bin/curl", "--silent", "--max-time", "5", "-X", "POST", "-H", "@" + headerFile,
                "http://127.0.0.1:\(guiPort)/rest/system/shutdown"
            ], timeout: 10)
        close(fd)
        let deadline = Date().addingTimeInterval(20)
        while guardian.isRunning && Date() < deadline { usleep(20_000) }
        if guardian.isRunning { Subprocess.killTree(guardian.processIdentifier) }
        guardian.waitUntilExit()
    }

    /// Whether the guardian (and so Syncthing under it) still runs.
    public var isRunning: Bool { guardian.isRunning }
}

/// `eventually` for a condition that may throw: polls every 0.1 s until it holds or `seconds`
/// pass; a throw ends the wait at once.
public func eventuallyThrowing(within seconds: Double, _ condition: () throws -> Bool) throws -> Bool {
    try eventually(within: seconds, every: 0.1, condition)
}
