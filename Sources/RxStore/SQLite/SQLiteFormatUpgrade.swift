/// The steps of a vault file from format 1 to format 4 (docs/format.md), which only vault files
/// take: a database vault is created at format 4 or later (an older vault is upgraded as a file,
/// then copied in). So they are no part of `RecordStore`, and no other engine answers them;
/// RxVault asks for them (`init?(_:)`) when it finds a vault older than format 4. The steps from
/// format 4 on are `SchemaStore.advanceFormat`, which every engine takes.
///
/// Each step runs the SQL it always ran (`Schema`), inside the caller's write transaction
/// (`StoreEngine.write`), so an upgrade is stored whole or not at all.
public struct SQLiteFormatUpgrade {
    let store: SQLiteRecordStore

    /// The steps for `store`; nil when it is no vault file.
    public init?(_ store: any RecordStore) {
        guard let file = store as? SQLiteRecordStore else { return nil }
        self.store = file
    }

    /// Format 1 to 2: adds the state root and manifest, and moves the header to format 2 with the
    /// root key re-wrapped for it.
    public func toFormat2(wrappedRootKey: [UInt8]) throws(StoreError) {
        try expect(version: 1)
        try store.database.execute(Schema.version2)
        try store.statement("UPDATE vault_header SET format_version = 2, wrapped_root_key = ? WHERE singleton = 1")
            .run([.blob(wrappedRootKey)])
        try store.database.execute("PRAGMA user_version = 2")
    }

    /// Format 2 to 3: rebuilds the client and grant tables in their format-3 form holding
    /// `clients` and `grants` (already in that form), and moves the header to format 3.
    public func toFormat3(wrappedRootKey: [UInt8], clients: [ClientRecord], grants: [GrantRecord])
        throws(StoreError)
    {
        try expect(version: 2)
        try store.database.execute(Schema.version3)
        try store.database.execute("PRAGMA user_version = 3")
        for client in clients { try store.insert(client) }
        for grant in grants { try store.upsert(grant) }
        try store.statement("UPDATE vault_header SET format_version = 3, wrapped_root_key = ? WHERE singleton = 1")
            .run([.blob(wrappedRootKey)])
    }

    /// Format 4, patients: creates the patient table (the header and schema version move with
    /// `toFormat4`).
    public func createPatientTable() throws(StoreError) {
        try expect(version: 3)
        try store.database.execute(Schema.version4Patients)
    }

    /// Format 4, key slots: creates the key-slot and key-ring tables.
    public func createKeySlotTables() throws(StoreError) {
        try store.database.execute(Schema.version4KeySlots)
    }

    /// Moves the header to format 4 with the root key re-wrapped for it, and the schema version
    /// to 4 (after each format-4 part added its tables).
    public func toFormat4(wrappedRootKey: [UInt8]) throws(StoreError) {
        try expect(version: 3)
        try store.database.execute("PRAGMA user_version = 4")
        try store.database.prepare(
            "UPDATE vault_header SET format_version = 4, wrapped_root_key = ? WHERE singleton = 1"
        ).run([.blob(wrappedRootKey)])
    }

    private func expect(version: Int) throws(StoreError) {
        guard try store.schemaVersion() == version else {
            throw StoreError.corrupt("the schema to upgrade is not version \(version)")
        }
    }
}
