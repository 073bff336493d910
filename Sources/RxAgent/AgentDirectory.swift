import CRxAgent

#if canImport(Glibc)
    import Glibc
#endif

/// The folder that holds the agents' sockets: `$XDG_RUNTIME_DIR/rxvault` (the per-login tmpfs
/// the system makes for the user, mode 0700), else `/tmp/rxvault-<uid>`.
///
/// The folder is what keeps other users away from the sockets, so it must be the user's own,
/// a real folder (not a symbolic link) and closed to group and others; rxvault creates it so,
/// and refuses to use one that is not (someone else could have made it first in /tmp).
public struct AgentDirectory: Sendable, Equatable {
    public let path: String

    public init(path: String) { self.path = path }

    /// The folder this user's agents use, from the environment.
    public static func standard(environment: [String: String]) -> AgentDirectory {
        if let runtime = environment["XDG_RUNTIME_DIR"], runtime.hasPrefix("/") {
            return AgentDirectory(path: (runtime.hasSuffix("/") ? String(runtime.dropLast()) : runtime) + "/rxvault")
        }
        return AgentDirectory(path: "/tmp/rxvault-\(geteuid())")
    }

    /// Creates the folder (mode 0700) if it is missing, then checks it (`unlock`).
    public func prepare() throws(AgentError) {
        if mkdir(path, 0o700) != 0 && errno != EEXIST {
            let code = errno
            if code == ENOENT {
                throw .system("cannot create \(path): its parent folder does not exist (is XDG_RUNTIME_DIR right?)")
            }
            throw .errno("cannot create \(path)", code: code)
        }
        guard try isSafe() else { throw .system("\(path) disappeared while it was being created") }
    }

    /// Whether the folder exists; throws when it exists but is not safe to use. Never creates it
    /// (a command looking for an agent leaves nothing behind).
    public func isSafe() throws(AgentError) -> Bool {
        var info = stat()
        guard lstat(path, &info) == 0 else {
            if errno == ENOENT { return false }
            throw .errno("cannot look at \(path)")
        }
        guard info.st_mode & S_IFMT == S_IFDIR else {
            throw .unsafeDirectory(
                "\(path) is not a folder (a symbolic link or a file): rxvault will not put its agent's socket there")
        }
        guard info.st_uid == geteuid() else {
            throw .unsafeDirectory(
                "\(path) belongs to uid \(info.st_uid), not to you (uid \(geteuid())): rxvault will not use another user's folder for its agent"
            )
        }
        guard info.st_mode & 0o077 == 0 else {
            throw .unsafeDirectory(
                "\(path) is open to other users (mode \(String(info.st_mode & 0o777, radix: 8))): run 'chmod 700 \(path)'"
            )
        }
        return true
    }

    /// The socket of the agent for the vault with this id (hex): one agent per vault.
    public func socketPath(vaultIDHex: String) throws(AgentError) -> String {
        let socket = "\(path)/agent-\(vaultIDHex).sock"
        let limit = Int(rx_agent_max_socket_path())
        guard socket.utf8.count <= limit else {
            throw .socketPathTooLong(
                "the agent's socket path \(socket) is longer than a socket address holds (\(limit) bytes): set XDG_RUNTIME_DIR to a shorter folder"
            )
        }
        return socket
    }

    /// Every agent socket in the folder (`lock --all`).
    public func socketPaths() -> [String] {
        guard let dir = opendir(path) else { return [] }
        defer { closedir(dir) }
        var found: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) {
                String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name.hasPrefix("agent-") && name.hasSuffix(".sock") { found.append("\(path)/\(name)") }
        }
        return found.sorted()
    }
}
