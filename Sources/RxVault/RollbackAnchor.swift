import Foundation

/// The newest write counter this computer has seen for each vault (DESIGN.md, "State root").
///
/// A whole file replaced by an older copy of itself is a valid vault: nothing inside it can
/// tell. So the newest counter seen is kept outside it, one small file per vault id in
/// `directory` (`$XDG_STATE_HOME/rxvault`, else `~/.local/state/rxvault`; mode 0700, files 0600),
/// like TUF's snapshot metadata. Only a vault opened on this machine with this state directory
/// is protected; see SECURITY.md, "Known limitations".
public struct RollbackAnchor: Sendable {
    public let directory: String

    public init(directory: String) { self.directory = directory }

    /// What the owner is told when a vault is older than what this computer has seen.
    public struct Finding: Sendable, Equatable {
        public let seen: Int
        public let found: Int
    }

    func file(_ vaultIDHex: String) -> String { directory + "/" + vaultIDHex }

    /// The newest counter recorded for the vault, nil when none (or unreadable: the anchor is a
    /// safety net, never a reason to refuse a vault on its own).
    public func seen(_ vaultIDHex: String) -> Int? {
        guard let text = try? String(contentsOfFile: file(vaultIDHex), encoding: .utf8) else { return nil }
        return Int(text.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    /// Records `counter` when it is newer than what was recorded (or always, with `force`: the
    /// owner chose to go back, e.g. `restore`). Failures are ignored (a read-only home must not
    /// stop the vault from working) but reported to the caller.
    @discardableResult
    public func record(_ vaultIDHex: String, counter: Int, force: Bool = false) -> Bool {
        if !force, let seen = seen(vaultIDHex), seen >= counter { return true }
        let fm = FileManager.default
        do {
            if !fm.fileExists(atPath: directory) {
                try fm.createDirectory(atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            }
            let temporary = file(vaultIDHex) + ".tmp-\(getpid())"
            guard fm.createFile(atPath: temporary, contents: Data("\(counter)\n".utf8), attributes: [.posixPermissions: 0o600]) else { return false }
            guard rename(temporary, file(vaultIDHex)) == 0 else { unlink(temporary); return false }
            return true
        } catch {
            return false
        }
    }
}
