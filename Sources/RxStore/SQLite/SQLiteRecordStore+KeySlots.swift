/// `KeySlotStore`: `key_slot` and the one `key_ring` row (format 4).
extension SQLiteRecordStore {
    public func keySlots() throws(StoreError) -> [KeySlotRecord] {
        guard try schemaVersion() >= 4 else { return [] }
        var slots: [KeySlotRecord] = []
        try database.prepare(
            """
            SELECT id, kind, kdf_algorithm, kdf_ops_limit, kdf_mem_limit, kdf_salt, wrapped_root_key, info
            FROM key_slot ORDER BY id
            """
        ).forEach { s throws(StoreError) in
            let row = s.row(of: "key_slot")
            slots.append(
                KeySlotRecord(
                    id: try row.integer(0, in: StoredRange.keySlot), kind: try row.text(1),
                    kdfAlgorithm: try row.text(2),
                    kdfOpsLimit: try row.unsigned(3), kdfMemLimit: try row.unsigned(4),
                    kdfSalt: try row.blob(5), wrappedRootKey: try row.blob(6), info: try row.blob(7)))
        }
        return slots
    }

    public func upsert(_ slot: KeySlotRecord) throws(StoreError) {
        try database.prepare(
            """
            INSERT OR REPLACE INTO key_slot (id, kind, kdf_algorithm, kdf_ops_limit, kdf_mem_limit, kdf_salt, wrapped_root_key, info)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?)
            """
        ).run([
            .integer(Int64(slot.id)), .text(slot.kind), .text(slot.kdfAlgorithm), .integer(Int64(slot.kdfOpsLimit)),
            .integer(Int64(slot.kdfMemLimit)), .blob(slot.kdfSalt), .blob(slot.wrappedRootKey), .blob(slot.info)
        ])
    }

    public func deleteKeySlot(_ id: Int) throws(StoreError) {
        try database.prepare("DELETE FROM key_slot WHERE id = ?").run([.integer(Int64(id))])
    }

    public func keyRing() throws(StoreError) -> KeyRingRecord? {
        guard try schemaVersion() >= 4 else { return nil }
        let s = try database.prepare("SELECT write_counter, content, mac FROM key_ring WHERE singleton = 1")
        guard try s.step() else { return nil }
        let row = s.row(of: "key_ring", keyColumns: 0)
        return KeyRingRecord(
            writeCounter: try row.integer(0, in: StoredRange.counter), content: try row.blob(1), mac: try row.blob(2))
    }

    public func setKeyRing(_ ring: KeyRingRecord) throws(StoreError) {
        try database.prepare(
            """
            INSERT INTO key_ring (singleton, write_counter, content, mac) VALUES (1, ?, ?, ?)
            ON CONFLICT (singleton) DO UPDATE SET write_counter = excluded.write_counter, content = excluded.content, mac = excluded.mac
            """
        ).run([.integer(Int64(ring.writeCounter)), .blob(ring.content), .blob(ring.mac)])
    }
}
