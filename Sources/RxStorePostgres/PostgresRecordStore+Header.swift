import RxStore

/// `SchemaStore`: the schema version in `rxvault_schema`. (The header, key slots and key ring are
/// written once for both engines, `SQLStatements+Tables.swift`.)
extension PostgresRecordStore {
    // MARK: - Schema

    public func schemaVersion() throws(StoreError) -> Int {
        try first("SELECT version FROM rxvault_schema WHERE singleton = 1", table: "rxvault_schema", keyColumns: 0) {
            row throws(StoreError) in try row.integer(0, in: 0...Int64(Int32.max))
        } ?? 0
    }

    /// A database vault is created at format 4 or later (older vaults are upgraded as files, then
    /// copied in), so this is the only step it takes.
    public func advanceFormat(to version: Int, adding tables: [StoredTable]) throws(StoreError) {
        guard version <= PostgresSchema.version else {
            throw StoreError.unsupportedVersion(found: version, supported: PostgresSchema.version)
        }
        guard try schemaVersion() == version - 1 else {
            throw StoreError.corrupt("the schema to upgrade is not version \(version - 1)")
        }
        for statement in tables.flatMap(PostgresSchema.create) { try session.query(statement) }
        try session.query("UPDATE rxvault_schema SET version = $1 WHERE singleton = 1", [.integer(Int64(version))])
        try session.query(
            "UPDATE vault_header SET format_version = $1 WHERE singleton = 1", [.integer(Int64(version))])
    }
}
