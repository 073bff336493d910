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
}
