/// Which format the stored tables are in, and the step from one format to the next that every
/// engine takes alike (docs/format.md). A store is created at the current format
/// (`StoredSchema`); a step runs inside the caller's write transaction (`StoreEngine.write`),
/// so an upgrade is stored whole or not at all.
///
/// The steps before format 4 are not here: only vault files take them (`SQLiteFormatUpgrade`),
/// since a server database is only ever created at format 4 or later.
public protocol SchemaStore: AnyObject {
    /// The format the stored tables are in (`1` until upgraded). Not authenticated: RxVault
    /// requires it to equal the header's format version, which is.
    func schemaVersion() throws(StoreError) -> Int
    /// One step from format `version - 1` to `version` (refused from any other, and past
    /// `StoredSchema.currentFormat`): creates `tables` (each from its description, in the
    /// engine's SQL) and moves the schema version and the header's format to `version`. Formats
    /// 5 and 6 add no table (RxVault changes the state root in the same transaction); a later
    /// format that adds one passes it here and lists it in `StoredSchema.tables`.
    func advanceFormat(to version: Int, adding tables: [StoredTable]) throws(StoreError)
}
