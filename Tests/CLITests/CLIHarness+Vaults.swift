import Foundation
import RxStore
import RxTestSupport

extension CLIHarness {
    /// A new vault with two glasses prescriptions and no expiry written: `old` issued
    /// 2014-06-15 (Noor Haddad), `recent` issued `recentIssued` (Kim Park).
    static func withUndatedGlasses(recentIssued: String) throws -> (CLIHarness, old: String, recent: String) {
        let cli = try CLIHarness()
        try cli.initVault()
        let old = try cli.add([
            "add", "glasses", "--patient", "Noor Haddad", "--prescriber", "Dr Alvarez", "--issued", "2014-06-15",
            "--od", "-1.00", "--os", "-1.25"
        ])
        let recent = try cli.add([
            "add", "glasses", "--patient", "Kim Park", "--prescriber", "Dr Alvarez", "--issued", recentIssued,
            "--od", "-2.00", "--os", "-2.25"
        ])
        return (cli, old, recent)
    }

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
