/// `SchemaStore`: the format is `PRAGMA user_version`, in the file's header, read before any
/// table. A format step from format 4 on is written once for every engine
/// (`SQLStatements+Tables.swift`); the older steps, which only vault files take, are
/// `SQLiteFormatUpgrade`.
extension SQLiteRecordStore {
    public func schemaVersion() throws(StoreError) -> Int {
        Int(try statement("PRAGMA user_version").first { $0.int(0) } ?? 0)
    }

    /// A PRAGMA takes no parameter: the number is written into it.
    public func setSchemaVersion(_ version: Int) throws(StoreError) {
        try database.execute("PRAGMA user_version = \(version)")
    }
}
