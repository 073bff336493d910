import Foundation
import RxStore

extension CLIHarness {
    /// A consistent copy of the vault file as it is now (`VACUUM INTO`): what a client keeping a
    /// copy, a sync tool or an older backup would hold.
    func consistentCopy(_ name: String) throws -> String {
        let copy = path(name)
        let db = try Database(path: vaultPath)
        try db.prepare("VACUUM INTO ?").run([.text(copy)])
        return copy
    }

    /// Makes the vault file (mode 0600) from one of `Fixtures/vaults/*.sql`, as
    /// FormatUpgradeCLITests does: the fixtures are text so that no vault file is tracked.
    func loadVault(sql file: String) throws {
        guard FileManager.default.createFile(atPath: vaultPath, contents: nil, attributes: [.posixPermissions: 0o600])
        else {
            throw CocoaError(.fileWriteUnknown)
        }
        try Database(path: vaultPath).execute(try String(contentsOfFile: file, encoding: .utf8))
    }
}
