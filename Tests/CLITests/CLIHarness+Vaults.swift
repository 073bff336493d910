import Foundation
import RxStore
import RxTestSupport

extension CLIHarness {
    /// A consistent copy of the vault file as it is now (`VACUUM INTO`): what a client keeping a
    /// copy, a sync tool or an older backup would hold.
    func consistentCopy(_ name: String) throws -> String {
        let copy = path(name)
        let db = try Database(path: vaultPath)
        try db.prepare("VACUUM INTO ?").run([.text(copy)])
        return copy
    }

    /// Makes the vault file (mode 0600) from one of `Fixtures/vaults/*.sql` (RxTestSupport's
    /// `loadVault(sqlFile:to:)`).
    func loadVault(sql file: String) throws {
        try RxTestSupport.loadVault(sqlFile: file, to: vaultPath)
    }
}
