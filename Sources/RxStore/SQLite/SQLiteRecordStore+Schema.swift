/// `SchemaStore`: `PRAGMA user_version`, and the format steps every engine takes from format 4
/// on. The older steps, which only vault files take, are `SQLiteFormatUpgrade`.
extension SQLiteRecordStore {
    public func schemaVersion() throws(StoreError) -> Int {
        Int(try statement("PRAGMA user_version").first { $0.int(0) } ?? 0)
    }

    public func advanceFormat(to version: Int, adding tables: [StoredTable]) throws(StoreError) {
        guard version <= Schema.currentVersion else {
            throw StoreError.unsupportedVersion(found: version, supported: Schema.currentVersion)
        }
        guard try schemaVersion() == version - 1 else {
            throw StoreError.corrupt("the schema to upgrade is not version \(version - 1)")
        }
        if !tables.isEmpty { try database.execute(SQLiteDialect.script(tables)) }
        try database.execute("PRAGMA user_version = \(version)")
        try statement("UPDATE vault_header SET format_version = ? WHERE singleton = 1").run([.integer(Int64(version))])
    }
}
