import ArgumentParser
import Foundation
import RxCrypto
import RxVault

#if canImport(Glibc)
    import Glibc
#endif

/// A private scratch directory (mode 0700), removed with everything in it. Its name carries the
/// process id, so a later run can remove what a killed run left behind (an encrypted snapshot or
/// decrypted backup: still vault ciphertext, but it should not linger).
struct Scratch {
    let path: String
    init() throws {
        Self.sweep(in: NSTemporaryDirectory(), prefix: "rxvault-")
        var template = Array((NSTemporaryDirectory() + "/rxvault-\(getpid())-XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else { throw CLIError(.cannotWrite, "cannot create a temporary directory") }
        path = String(cString: made)
    }
    func remove() { try? FileManager.default.removeItem(atPath: path) }

    /// Removes entries named `prefix<pid>-...` in `directory` whose process no longer exists.
    static func sweep(in directory: String, prefix: String) {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return }
        for name in names where name.hasPrefix(prefix) {
            let rest = name.dropFirst(prefix.count)
            guard let dash = rest.firstIndex(of: "-"), let pid = pid_t(rest[..<dash]), pid > 0, pid != getpid() else {
                continue
            }
            if kill(pid, 0) != 0 && errno == ESRCH {
                try? FileManager.default.removeItem(atPath: PathText.join(directory, name))
            }
        }
    }
}
