import Testing

@testable import RxStore

/// The one statement builder every engine's inserts go through (`RowInsert`): one row or many,
/// in the engine's placeholders, refusing or replacing a row whose key is stored.
@Suite struct RowInsertTests {
    @Test func manyRowsGoToOneStatementInTheEnginesPlaceholders() {
        let sql = RowInsert.prescriptionVersion.statement(rows: 2) { "$\($0)" }
        #expect(
            sql == "INSERT INTO prescription_version (prescription_id, version, wrapped_key, content, mac) "
                + "VALUES ($1, $2, $3, $4, $5), ($6, $7, $8, $9, $10)")
        #expect(RowInsert.prescription.statement(rows: 1) { "?\($0)" } == "INSERT INTO prescription (id) VALUES (?1)")
    }

    @Test func aReplacingInsertUpdatesEveryColumnButItsKey() {
        #expect(
            RowInsert.patient.statement(rows: 1) { _ in "?" }
                == "INSERT INTO person (id, info, mac) VALUES (?, ?, ?) "
                + "ON CONFLICT (id) DO UPDATE SET info = excluded.info, mac = excluded.mac")
        #expect(RowInsert.patient.conflictKeyPositions == [0])
        let grant = RowInsert(
            table: "access_grant", columns: ["id", "client_id", "prescription_id", "mac"],
            replacingOn: ["client_id", "prescription_id"])
        #expect(grant.statement(rows: 1) { "$\($0)" }.hasSuffix("DO UPDATE SET id = excluded.id, mac = excluded.mac"))
        #expect(grant.conflictKeyPositions == [1, 2])
    }

    @Test func aOneRowTableHasItsSingletonKey() {
        #expect(
            RowInsert(KeyRingRecord.self, replacingOn: ["singleton"]).statement(rows: 1) { "$\($0)" }
                == "INSERT INTO key_ring (singleton, write_counter, content, mac) VALUES (1, $1, $2, $3) "
                + "ON CONFLICT (singleton) DO UPDATE SET write_counter = excluded.write_counter, "
                + "content = excluded.content, mac = excluded.mac")
        #expect(
            VaultStateRecord.insertStatement { _ in "?" }
                == "INSERT INTO vault_state (singleton, write_counter, state, mac) VALUES (1, ?, ?, ?)")
    }
}
