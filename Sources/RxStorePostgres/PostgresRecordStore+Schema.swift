import RxStore

/// `SchemaStore`: the format is in `rxvault_schema`, the table that also tells a vault from other
/// tables. A format step is written once for both engines (`SQLStatements+Tables.swift`); a
/// database vault is created at format 4 or later (older vaults are upgraded as files, then
/// copied in), so the steps from format 4 on are the only ones it takes.
extension PostgresRecordStore {
    public func schemaVersion() throws(StoreError) -> Int {
        try first("SELECT version FROM rxvault_schema WHERE singleton = 1", table: "rxvault_schema", keyColumns: 0) {
            row throws(StoreError) in try row.integer(0, in: 0...Int64(Int32.max))
        } ?? 0
    }

    public func setSchemaVersion(_ version: Int) throws(StoreError) {
        try session.query("UPDATE rxvault_schema SET version = $1 WHERE singleton = 1", [.integer(Int64(version))])
    }
}
