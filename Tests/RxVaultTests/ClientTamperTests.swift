import Foundation
import RxCrypto
import RxModel
import RxStore
import Testing

@testable import RxVault

/// A client holds data keys and (to log its reads) write access: it must still not be able to
/// change what the owner sees, restore a revoked grant, or forge the owner's log entries.
@Suite struct ClientTamperTests {
    func expectIntegrity(_ what: String, _ body: () throws -> Void) {
        do {
            try body()
            Issue.record("\(what): accepted")
        } catch let error as VaultError {
            guard case .integrity = error else {
                Issue.record("\(what): expected an integrity error, got \(error)")
                return
            }
        } catch {
            Issue.record("\(what): unexpected \(error)")
        }
    }

    func setUp() throws -> (TestVault, Vault, PrescriptionRecord, ClientSummary, AgeIdentity) {
        let t = try TestVault()
        let owner = try t.open()
        let (record, _) = try owner.add(TestVault.glasses(patient: "Ada"))
        let identity = try AgeIdentity.generate()
        let client = try owner.addClient(name: "shop", recipient: identity.recipient)
        try owner.grant(client, [record.id], expires: nil, includeAttachments: true)
        return (t, owner, record, client, identity)
    }

    @Test func aClientCannotRewriteGrantedContent() throws {
        let (t, owner, record, _, identity) = try setUp()
        let db = try t.raw()
        // The client opens its sealed keys and re-encrypts the content with the same key and AAD.
        let sealed = try db.blob("SELECT sealed_keys FROM access_grant")
        let keys = try #require(
            GrantKeys.decode(
                try X25519.open(sealed, publicKey: identity.recipient.publicKey, secretKey: identity.secretKey)))
        var forged = record.prescription
        forged.right?.sphere = Hundredths(raw: -2950)
        let content = RecordContent(schema: 1, recorded: record.recorded, prescription: forged, change: nil)
        let aad = AssociatedData.object(
            .content, vaultID: owner.header.vaultID, type: "prescription", id: record.id.hex,
            version: keys.context.version)
        let box = try AEAD.seal(Array(try JSONEncoderSorted.encode(content)), key: keys.dataKey, associatedData: aad)
        try db.prepare("UPDATE prescription_version SET content = ? WHERE prescription_id = ? AND version = ?")
            .run([.blob(box), .text(record.id.hex), .integer(Int64(keys.context.version))])
        // The client itself would now read the forgery (it cannot tell), but the owner refuses it.
        expectIntegrity("owner show") { _ = try owner.prescription(record.id) }
        #expect(!(try owner.check(readData: false)).isClean)
    }

    @Test func aRevokedGrantPutBackIsNotHonoured() throws {
        let (t, owner, record, client, identity) = try setUp()
        let db = try t.raw()
        let row: [Statement.Value] = try {
            // Read the row, then let the statement go (an open statement holds a read snapshot).
            let saved = try db.prepare("SELECT id, client_id, reference, sealed_keys, info, mac FROM access_grant")
            #expect(try saved.step())
            return [
                .text(saved.text(0)!), .text(saved.text(1)!), .text(saved.text(2)!), .blob(saved.blob(3)),
                .blob(saved.blob(4)), .blob(saved.blob(5))
            ]
        }()
        try owner.revoke(client, [record.id])
        try db.prepare(
            "INSERT INTO access_grant (id, client_id, reference, sealed_keys, info, mac) VALUES (?, ?, ?, ?, ?, ?)"
        ).run(row)
        // The next edit must not re-seal the new version to the replayed grant.
        #expect(throws: VaultError.self) { _ = try owner.edit(record.id) { $0.note = "new" } }
        expectIntegrity("grants listing") { _ = try owner.grants() }
        // And the replayed box only opens the old version's key, which opens nothing current.
        let view = try ClientVault.open(at: t.path, identity: identity, clock: .fixed(today: TestVault.today))
        if let seen = try? view.list().first {
            // (The owner's own commands now refuse this prescription until the grant is gone; read the rows.)
            #expect(
                Int64(seen.version) < (try db.integer("SELECT max(version) FROM prescription_version") ?? 0),
                "the client reads only what it had before")
        }
    }

    @Test func clientsCannotForgeOwnerLogEntriesOrDeleteTheLog() throws {
        let (t, owner, _, _, _) = try setUp()
        let db = try t.raw()
        // A writer appends an entry that claims to be the owner's, chained on correctly.
        let event = AuditEvent(time: "2026-01-01T00:00:00Z", actor: AuditEvent.ownerActor, action: .revoke, client: nil)
        try t.forgeAuditEntry(Array(try JSONEncoderSorted.encode(event)))
        _ = try owner.add(TestVault.glasses(patient: "trigger"))
        let report = try owner.check(readData: false)
        #expect(report.stages.last!.errors.contains { $0.contains("forged") }, "\(report.stages.last!.errors)")
        #expect(
            try db.integer("SELECT count(*) FROM audit_entry WHERE mac IS NULL") == 1,
            "the forged entry was not countersigned")

        let fresh = try TestVault()
        let vault = try fresh.open()
        #expect(try vault.check(readData: false).isClean)
        try fresh.raw().execute("DELETE FROM audit_entry; DELETE FROM audit_head;")
        #expect(!(try vault.check(readData: false)).isClean, "deleting the whole log is detected")
    }

    @Test func removedClientsAreNotNamedToOtherClients() throws {
        let (t, owner, record, client, _) = try setUp()
        let other = try AgeIdentity.generate()
        let second = try owner.addClient(name: "family", recipient: other.recipient)
        try owner.grant(second, [record.id], expires: nil, includeAttachments: true)
        try owner.removeClient(client)
        let view = try ClientVault.open(at: t.path, identity: other, clock: .fixed(today: TestVault.today))
        let seen = try view.prescription(record.id, version: nil)
        #expect(seen.change == "re-keyed: a client was removed")
        #expect(!(seen.change ?? "").contains("shop"))
    }
}
