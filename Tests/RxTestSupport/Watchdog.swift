import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A shell script started in a session of its own (`setsid -w /bin/sh -c SCRIPT NAME ARGS...`)
/// whose standard input is one end of a socket pair the test process holds: the script learns
/// the test is over, however it ends (an orderly close, a crash, kill -9), when that end closes.
/// What it then does is its own (stop a PostgreSQL cluster and remove its folder, stop a
/// Syncthing process group): `PostgresServer`'s reaper and `SyncthingDevice`'s guardian.
///
/// The pair is made close-on-exec at once (pipe2 is not in Swift's Glibc), so no other program
/// the tests start holds the test's end open.
public struct Watchdog {
    public let process: Process
    /// The test process's end: write lines to it, close it to say the test is over.
    public let end: Int32

    public static func start(
        script: String, name: String, arguments: [String], directory: String,
        environment: [String: String]? = nil
    ) throws -> Watchdog {
        var ends: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue), 0, &ends) == 0 else {
            throw WatchdogError(description: "socketpair failed: \(String(cString: strerror(errno)))")
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/setsid")
        process.arguments = ["-w", "/bin/sh", "-c", script, name] + arguments
        if let environment { process.environment = environment }
        process.currentDirectoryURL = URL(fileURLWithPath: directory)
        let reading = FileHandle(fileDescriptor: ends[0], closeOnDealloc: true)
        process.standardInput = reading
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        do {
            try process.run()
        } catch {
            close(ends[1])
            throw WatchdogError(description: "could not start \(name) (/usr/bin/setsid, /bin/sh): \(error)")
        }
        try? reading.close()
        return Watchdog(process: process, end: ends[1])
    }
}

public struct WatchdogError: Error, CustomStringConvertible {
    public let description: String
}
