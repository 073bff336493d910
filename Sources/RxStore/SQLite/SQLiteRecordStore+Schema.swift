/// `SchemaStore`: `PRAGMA user_version` and the steps from one format to the next (`Schema`).
extension SQLiteRecordStore {
    public func schemaVersion() throws(StoreError) -> Int {
        Int(try statement("PRAGMA user_version").first { $0.int(0) } ?? 0)
    }

    public func upgradeToFormat2(wrappedRootKey: [UInt8]) throws(StoreError) {
        guard try schemaVersion() == 1 else { throw StoreError.corrupt("the schema to upgrade is not version 1") }
        try database.execute(Schema.version2)
        try statement("UPDATE vault_header SET format_version = 2, wrapped_root_key = ? WHERE singleton = 1")
            .run([.blob(wrappedRootKey)])
        try database.execute("PRAGMA user_version = 2")
    }

    public func upgradeToFormat3(wrappedRootKey: [UInt8], clients: [ClientRecord], grants: [GrantRecord])
        throws(StoreError)
    {
        guard try schemaVersion() == 2 else { throw StoreError.corrupt("the schema to upgrade is not version 2") }
        try database.execute(Schema.version3)
        try database.execute("PRAGMA user_version = 3")
        for client in clients { try insert(client) }
        for grant in grants { try upsert(grant) }
        try statement("UPDATE vault_header SET format_version = 3, wrapped_root_key = ? WHERE singleton = 1")
            .run([.blob(wrappedRootKey)])
    }

    public func createPatientTable() throws(StoreError) {
        guard try schemaVersion() == 3 else { throw StoreError.corrupt("the schema to upgrade is not version 3") }
        try database.execute(Schema.version4Patients)
    }

    public func upgradeKeySlotsToFormat4() throws(StoreError) {
        try database.execute(Schema.version4KeySlots)
    }

    public func upgradeToFormat4(wrappedRootKey: [UInt8]) throws(StoreError) {
        guard try schemaVersion() == 3 else { throw StoreError.corrupt("the schema to upgrade is not version 3") }
        try database.execute("PRAGMA user_version = 4")
        try database.prepare("UPDATE vault_header SET format_version = 4, wrapped_root_key = ? WHERE singleton = 1")
            .run([.blob(wrappedRootKey)])
    }

    public func upgradeToFormat5() throws(StoreError) {
        guard try schemaVersion() == 4 else { throw StoreError.corrupt("the schema to upgrade is not version 4") }
        try database.execute("PRAGMA user_version = 5")
        try database.execute("UPDATE vault_header SET format_version = 5 WHERE singleton = 1")
    }

    public func upgradeToFormat6() throws(StoreError) {
        guard try schemaVersion() == 5 else { throw StoreError.corrupt("the schema to upgrade is not version 5") }
        try database.execute("PRAGMA user_version = 6")
        try database.execute("UPDATE vault_header SET format_version = 6 WHERE singleton = 1")
    }

    public func upgradeToFormat7() throws(StoreError) {
        guard try schemaVersion() == 6 else { throw StoreError.corrupt("the schema to upgrade is not version 6") }
        try database.execute("PRAGMA user_version = 7")
        try database.execute("UPDATE vault_header SET format_version = 7 WHERE singleton = 1")
    }
}
