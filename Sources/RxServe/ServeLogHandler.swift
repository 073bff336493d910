import Foundation
import Logging

/// The server's log lines on stderr: `2026-11-23T08:06:18Z info rxvault.serve: key=value ...
/// [source] message`, the time in UTC as everywhere else in rxvault.
///
/// Not swift-log's StreamLogHandler: it formats local time with localtime(3), which looks at the
/// time zone files on every line, and writes through a locked stdio stream. With a line per
/// request that was a third of the server's time. Here the time is formatted once a second and
/// each line is one write(2), which the kernel keeps whole.
public struct ServeLogHandler: LogHandler {
    public var logLevel: Logger.Level = .info
    public var metadata: Logger.Metadata = [:]
    private let label: String

    public init(label: String) {
        self.label = label
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        // Hummingbird's own notices ("Server started and listening on ...") repeat what rxvault
        // says in its own words and style; its warnings and errors still show.
        if event.level < .warning, event.source.hasPrefix("Hummingbird") { return }
        var fields = metadata
        if let extra = event.metadata { fields.merge(extra) { _, new in new } }
        if let error = event.error { fields["error.message"] = "\(error)" }
        var line = Self.clock.now()
        line += " \(event.level) \(label):"
        for (key, value) in fields.sorted(by: { $0.key < $1.key }) { line += " \(key)=\(value)" }
        line += " [\(event.source)] \(event.message)\n"
        var bytes = Array(line.utf8)
        bytes.withUnsafeMutableBytes { raw in
            var offset = 0
            while offset < raw.count {
                let n = write(STDERR_FILENO, raw.baseAddress! + offset, raw.count - offset)
                if n < 0 && errno == EINTR { continue }
                guard n > 0 else { return }
                offset += n
            }
        }
    }

    /// "YYYY-MM-DDTHH:MM:SSZ", formatted anew only when the second changes.
    static let clock = SecondClock()

    final class SecondClock: @unchecked Sendable {
        private let lock = NSLock()
        private var second = -1
        private var text = ""

        func now() -> String {
            var spec = timespec()
            clock_gettime(CLOCK_REALTIME, &spec)
            let current = Int(spec.tv_sec)
            lock.lock()
            defer { lock.unlock() }
            if current != second {
                second = current
                text = Date(timeIntervalSince1970: TimeInterval(current)).formatted(.iso8601)
            }
            return text
        }
    }
}
