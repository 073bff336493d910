import Foundation

/// A folder of its own for one test, removed (with everything in it) when the last reference
/// to it goes. `short` names it `/tmp/<prefix>-<8 hex>`: a Unix socket's path holds at most
/// 107 bytes, and `$TMPDIR` may be long.
public final class TemporaryDirectory: @unchecked Sendable {
    public let url: URL
    public var path: String { url.path }

    public init(prefix: String = "rxvault-test", short: Bool = false, permissions: Int? = nil) throws {
        if short {
            url = URL(fileURLWithPath: "/tmp/\(prefix)-\(UUID().uuidString.prefix(8))")
        } else {
            url = FileManager.default.temporaryDirectory.appendingPathComponent("\(prefix)-\(UUID().uuidString)")
        }
        try FileManager.default.createDirectory(
            at: url, withIntermediateDirectories: !short,
            attributes: permissions.map { [.posixPermissions: $0] })
    }

    deinit { try? FileManager.default.removeItem(at: url) }

    /// The path of `name` inside the folder.
    public func path(_ name: String) -> String { url.appendingPathComponent(name).path }
}
