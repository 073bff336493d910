/// `KeySlotStore`: `key_slot` and the one `key_ring` row (format 4).
extension SQLiteRecordStore {
    public func keySlots() throws(StoreError) -> [KeySlotRecord] {
        guard try schemaVersion() >= 4 else { return [] }
        return try database.prepare("SELECT \(KeySlotRecord.columnList) FROM key_slot ORDER BY id").records()
    }

    public func upsert(_ slot: KeySlotRecord) throws(StoreError) {
        try database.prepare(KeySlotRecord.insertStatement("INSERT OR REPLACE") { _ in "?" })
            .run(slot.storedValues)
    }

    public func deleteKeySlot(_ id: Int) throws(StoreError) {
        try database.prepare("DELETE FROM key_slot WHERE id = ?").run([.integer(Int64(id))])
    }

    public func keyRing() throws(StoreError) -> KeyRingRecord? {
        guard try schemaVersion() >= 4 else { return nil }
        return try database.prepare("SELECT \(KeyRingRecord.columnList) FROM key_ring WHERE singleton = 1").record()
    }

    public func setKeyRing(_ ring: KeyRingRecord) throws(StoreError) {
        try database.prepare(
            KeyRingRecord.insertStatement { _ in "?" }
                + " ON CONFLICT (singleton) DO UPDATE SET write_counter = excluded.write_counter,"
                + " content = excluded.content, mac = excluded.mac"
        ).run(ring.storedValues)
    }
}
