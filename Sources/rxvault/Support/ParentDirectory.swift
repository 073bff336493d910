import Foundation
import RxVault

/// Missing folders above a vault file the CLI is about to create (`init`, `restore`): made with
/// mode 0700, so a new machine's `~/.local/share/rxvault` is private from the start.
enum ParentDirectory {
    static func create(for path: String) throws {
        let parent = PathText.folder(of: path)
        guard !parent.isEmpty, !FileManager.default.fileExists(atPath: parent) else { return }
        do {
            try FileManager.default.createDirectory(
                atPath: parent, withIntermediateDirectories: true,
                attributes: [.posixPermissions: 0o700])
        } catch {
            throw CLIError(.cannotWrite, "cannot create the directory \(parent)")
        }
    }
}
