import RxCrypto
import RxModel
import RxStore
import Testing

@testable import RxVault

/// An attacker with write access to the file must not make the vault show wrong data: every
/// change to a stored record, its wrapped key or the header is detected.
@Suite struct VaultTamperTests {
    func expectIntegrityFailure(_ body: () throws -> Void) {
        do {
            try body()
            Issue.record("tampered data was accepted")
        } catch let error as VaultError {
            guard case .integrity = error else {
                Issue.record("expected an integrity error, got \(error)")
                return
            }
        } catch {
            Issue.record("unexpected error \(error)")
        }
    }

    @Test func flippingAnyByteOfContentOrWrappedKeyIsDetected() throws {
        let t = try TestVault()
        let vault = try t.open()
        let (record, _) = try vault.add(TestVault.glasses())
        let id = record.id.hex
        let db = try t.raw()
        for column in ["content", "wrapped_key"] {
            let original = try db.blob(
                "SELECT \(column) FROM prescription_version WHERE prescription_id = ?", [.text(id)])
            #expect(original.count > AEAD.overhead)
            for index in original.indices {
                var tampered = original
                tampered[index] ^= 0x80
                try db.set(column, of: id, version: 1, to: tampered)
                expectIntegrityFailure { _ = try vault.prescription(record.id) }
            }
            try db.set(column, of: id, version: 1, to: original)
            #expect(try vault.prescription(record.id).prescription == record.prescription)
        }
    }

    @Test func deletingTheNewestVersionRollsNothingBack() throws {
        let t = try TestVault()
        let vault = try t.open()
        let (record, _) = try vault.add(TestVault.glasses(patient: "Alice", sphere: -100))
        _ = try vault.edit(record.id) { $0.patient = Patient(name: "Alice Corrected") }
        #expect(try vault.prescription(record.id).version == 2)
        let db = try t.raw()
        try db.execute("DELETE FROM prescription_version WHERE version = 2")
        // Version 1 still carries a valid MAC; only the index knows version 2 was written.
        #expect(try vault.prescription(record.id, version: 1).prescription.patient.name == "Alice")
        expectIntegrityFailure { _ = try vault.prescription(record.id) }
        expectIntegrityFailure { _ = try vault.edit(record.id) { $0.patient = Patient(name: "Built on the old one") } }
    }

    @Test func truncatedOrEmptyBlobsAreDetected() throws {
        let t = try TestVault()
        let vault = try t.open()
        let (record, _) = try vault.add(TestVault.glasses())
        let db = try t.raw()
        let content = try db.blob("SELECT content FROM prescription_version")
        for cut in [0, 1, AEAD.nonceLength, content.count - 1] {
            try db.set("content", of: record.id.hex, version: 1, to: Array(content.prefix(cut)))
            expectIntegrityFailure { _ = try vault.prescription(record.id) }
        }
    }

    @Test func aRecordCopiedOntoAnotherIdFailsToOpen() throws {
        let t = try TestVault()
        let vault = try t.open()
        let (a, _) = try vault.add(TestVault.glasses(patient: "Alice", sphere: -100))
        let (b, _) = try vault.add(TestVault.glasses(patient: "Bob", sphere: -500))
        let db = try t.raw()
        for column in ["content", "wrapped_key"] {
            let fromA = try db.blob(
                "SELECT \(column) FROM prescription_version WHERE prescription_id = ?", [.text(a.id.hex)])
            try db.set(column, of: b.id.hex, version: 1, to: fromA)
        }
        expectIntegrityFailure { _ = try vault.prescription(b.id) }
        #expect(try vault.prescription(a.id).prescription.patient.name == "Alice")
    }

    @Test func anOldVersionPutBackInPlaceOfTheNewFailsToOpen() throws {
        let t = try TestVault()
        let vault = try t.open()
        let (record, _) = try vault.add(TestVault.glasses(sphere: -100))
        _ = try #require(try vault.edit(record.id) { $0.right?.sphere = Hundredths(raw: -150) })
        let db = try t.raw()
        for column in ["content", "wrapped_key"] {
            let old = try db.blob(
                "SELECT \(column) FROM prescription_version WHERE prescription_id = ? AND version = 1",
                [.text(record.id.hex)])
            try db.set(column, of: record.id.hex, version: 2, to: old)
        }
        expectIntegrityFailure { _ = try vault.prescription(record.id) }
        // list reads the (separately authenticated) search index: it shows what the owner wrote,
        // never the substituted version, and check reports the damaged record.
        #expect(try vault.list().first?.prescription.right?.sphere == Hundredths(raw: -150))
        #expect(!(try vault.check(readData: false)).isClean)
    }

    @Test func aRecordFromAnotherVaultFailsToOpen() throws {
        // Same passphrase, different vault: the vault id in the associated data differs.
        let t1 = try TestVault()
        let t2 = try TestVault()
        let (a, _) = try t1.open().add(TestVault.glasses())
        let v2 = try t2.open()
        let (b, _) = try v2.add(TestVault.glasses())
        let stolen = try t1.raw().blob("SELECT content FROM prescription_version")
        try t2.raw().set("content", of: b.id.hex, version: 1, to: stolen)
        _ = a
        expectIntegrityFailure { _ = try v2.prescription(b.id) }
    }

    @Test func editingTheHeaderIsDetected() throws {
        let t = try TestVault()
        let db = try t.raw()
        // Weaker KDF parameters, another vault id or another salt: the root key no longer unwraps.
        let edits = [
            "UPDATE vault_header SET kdf_ops_limit = kdf_ops_limit + 1",
            "UPDATE vault_header SET vault_id = randomblob(16)",
            "UPDATE vault_header SET kdf_salt = randomblob(16)"
        ]
        for sql in edits {
            let saved = try db.blob("SELECT vault_id || kdf_salt FROM vault_header")
            let ops = try db.integer("SELECT kdf_ops_limit FROM vault_header")!
            try db.execute(sql)
            #expect(throws: VaultError.self) { _ = try t.open() }
            try db.prepare("UPDATE vault_header SET vault_id = ?, kdf_salt = ?, kdf_ops_limit = ?")
                .run([.blob(Array(saved.prefix(16))), .blob(Array(saved.suffix(16))), .integer(ops)])
            _ = try t.open()
        }
        let wrapped = try db.blob("SELECT wrapped_root_key FROM vault_header")
        for index in wrapped.indices {
            var tampered = wrapped
            tampered[index] ^= 1
            try db.prepare("UPDATE vault_header SET wrapped_root_key = ?").run([.blob(tampered)])
            #expect(throws: VaultError.self) { _ = try t.open() }
        }
    }
}
