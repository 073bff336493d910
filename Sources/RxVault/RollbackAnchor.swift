import Foundation
import RxCrypto

#if canImport(Glibc)
    import Glibc
#endif

/// The newest write counter this computer has seen of each vault file (DESIGN.md, "State root").
///
/// A whole file replaced by an older copy of itself is a valid vault: nothing inside it can
/// tell. So the newest counter seen is kept outside it, one small file per vault file in
/// `directory` (`$XDG_STATE_HOME/rxvault`, else `~/.local/state/rxvault`; mode 0700, files 0600),
/// like TUF's snapshot metadata. Only a vault opened on this machine with this state directory
/// is protected; see SECURITY.md, "Known limitations".
///
/// An anchor belongs to the vault file it was taken from, not to every file holding that vault:
/// it is named by the vault id and the file's canonical path (`Key`), so a second copy of the
/// same vault (`restore --to` a side path, a copy kept for a client) has an anchor of its own,
/// and writing one never makes the other look rolled back. The path and not the inode: a
/// restore over the vault, a copy put back by hand and a sync tool all replace the file by a
/// rename, which keeps the path and changes the inode, and the file at that path is still the
/// one the owner calls their vault (an older copy put there must still be caught). A vault
/// moved to another path starts a new anchor there.
///
/// Anchors written before this (named by the vault id alone, "legacy") still protect the file
/// they were taken from, which is not named in them: a file of that vault without an anchor of
/// its own is compared with the legacy one, as before; the first such file that opens at or past
/// its counter (the file it protected, or a newer copy of it) records its own; the legacy one is
/// never removed, as the file it protected may not have opened yet.
public struct RollbackAnchor: Sendable {
    public let directory: String
    /// Told why, each time an anchor cannot be written (the CLI warns once per command).
    let notKept: @Sendable (String) -> Void

    public init(directory: String, whenNotKept notKept: @escaping @Sendable (String) -> Void = { _ in }) {
        self.directory = directory
        self.notKept = notKept
    }

    /// Which anchor: a vault and the file it is in.
    public struct Key: Sendable, Equatable {
        public let vaultIDHex: String
        /// The file's canonical absolute path (links resolved, as the file SQLite opens).
        public let file: String

        public init(vaultIDHex: String, path: String) {
            self.vaultIDHex = vaultIDHex
            self.file = Self.canonical(path)
        }

        /// `path` with links resolved, else (a file not there) made absolute as written.
        static func canonical(_ path: String) -> String {
            // A database has no file: its URL with every part filled in names it.
            if VaultLocation.isDatabase(path) { return VaultLocation.display(path) }
            if let resolved = realpath(path, nil) {
                defer { free(resolved) }
                return String(cString: resolved)
            }
            let absolute = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
            return (absolute as NSString).standardizingPath
        }

        /// `<vault id>-<first 16 bytes of SHA-256 of the path, hex>`: fixed length whatever the
        /// path, and no character of the path in a file name.
        var fileName: String {
            vaultIDHex + "-"
                + SHA256.hash(Array(file.utf8)).prefix(16).map { String($0, radix: 16).padding(2) }.joined()
        }
    }

    /// What the owner is told when a vault is older than what this computer has seen.
    public struct Finding: Sendable, Equatable {
        /// Write counters: the newest this computer saw of the file, and the file's (for a fork
        /// they say little: two lines count writes apart).
        public let seen: Int
        public let found: Int
        /// Format 8: the file against what this computer knows of the vault (an older copy, or
        /// another line of history), with the writes it lacks; nil for a finding by counters.
        public var history: HistoryFinding? = nil

        /// Another line of history, not only an older copy.
        public var isFork: Bool { history?.relation == .forked }
    }

    /// Where the anchor of `key` is kept.
    public func file(for key: Key) -> String { directory + "/" + key.fileName }

    /// Where rxvault before per-file anchors kept the vault's one anchor.
    public func legacyFile(_ vaultIDHex: String) -> String { directory + "/" + vaultIDHex }

    /// The newest counter recorded for the file: its own anchor's, else the vault's legacy
    /// anchor's; nil when none (or unreadable: the anchor is a safety net, never a reason to
    /// refuse a vault on its own).
    public func seen(_ key: Key) -> Int? { own(key) ?? legacy(key.vaultIDHex) }

    func own(_ key: Key) -> Int? { Self.counter(in: file(for: key)) }

    func legacy(_ vaultIDHex: String) -> Int? { Self.counter(in: legacyFile(vaultIDHex)) }

    /// The first line of an anchor file: the decimal counter (the second, if any, names the file).
    static func counter(in path: String) -> Int? {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8),
            let first = text.split(separator: "\n", omittingEmptySubsequences: false).first
        else { return nil }
        return Int(first.trimmingCharacters(in: .whitespaces))
    }

    /// Records `counter` for the file when it is newer than its own anchor (or always, with
    /// `force`: the owner chose to go back, e.g. `restore`). A failure does not stop the vault
    /// (a read-only home must not), but is told to `notKept` and returned as false.
    @discardableResult
    public func record(_ key: Key, counter: Int, force: Bool = false) -> Bool {
        if !force, let seen = own(key), seen >= counter { return true }
        if let problem = write("\(counter)\n\(key.file)\n", to: file(for: key)) {
            notKept(problem)
            return false
        }
        return true
    }

    /// At open, a file at or past the legacy anchor's counter records its own anchor. The legacy
    /// one stays: the file it was taken from may be another than this one (a side copy opened
    /// first), and it must keep protecting that file until it has an anchor of its own.
    func takeOverLegacy(_ key: Key, counter: Int) {
        record(key, counter: counter)
    }

    /// Writes `text` to `path` through a temporary file and a rename; returns why not.
    func write(_ text: String, to path: String) -> String? {
        if let problem = makeDirectory() { return problem }
        let temporary = path + ".tmp-\(getpid())"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return "cannot write in \(directory): \(Self.lastError())" }
        let bytes = Array(text.utf8)
        let written = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        let why = written == bytes.count ? nil : "cannot write in \(directory): \(Self.lastError())"
        close(fd)
        if let why {
            unlink(temporary)
            return why
        }
        guard rename(temporary, path) == 0 else {
            let why = "cannot write in \(directory): \(Self.lastError())"
            unlink(temporary)
            return why
        }
        return nil
    }

    /// Creates `directory` and any missing folder above it, each mode 0700 (what the XDG spec
    /// asks of the state home); returns why not.
    func makeDirectory() -> String? {
        var info = stat()
        if stat(directory, &info) == 0 {
            return info.st_mode & S_IFMT == S_IFDIR ? nil : "\(directory) is not a folder"
        }
        var built = directory.hasPrefix("/") ? "" : "."
        for component in directory.split(separator: "/") {
            built += "/" + component
            if mkdir(built, 0o700) != 0 && errno != EEXIST { return "cannot create \(built): \(Self.lastError())" }
        }
        guard stat(directory, &info) == 0, info.st_mode & S_IFMT == S_IFDIR else {
            return "\(directory) is not a folder"
        }
        return nil
    }

    static func lastError() -> String { String(cString: strerror(errno)) }
}
