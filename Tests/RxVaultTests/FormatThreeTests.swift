import Foundation
import RxCrypto
import RxModel
import RxStore
import RxTestSupport
import Testing

@testable import RxVault

/// "what the file reveals without a key": in format 3 the file no longer says which
/// client may read which prescription, nor any client's public key; rows that would give the
/// graph away when moved are refused; format-2 vaults open, read and upgrade.
@Suite struct FormatThreeTests {
    /// Two clients, three prescriptions, grants of one prescription to both.
    func householdVault() throws -> (TestVault, Vault, [PrescriptionRecord], [(ClientSummary, AgeIdentity)]) {
        let t = try TestVault()
        let owner = try t.open()
        let records = try ["Ada", "Ben", "Cy"].map { try owner.add(TestVault.glasses(patient: $0)).0 }
        var clients: [(ClientSummary, AgeIdentity)] = []
        for name in ["insurer", "shop"] {
            let identity = try AgeIdentity.generate()
            clients.append((try owner.addClient(name: name, recipient: identity.recipient), identity))
        }
        try owner.grant(clients[0].0, [records[0].id, records[1].id], expires: nil, includeAttachments: true)
        try owner.grant(clients[1].0, [records[0].id], expires: nil, includeAttachments: false)
        return (t, owner, records, clients)
    }

    /// The whole file as one consistent byte string (what someone copying it would hold).
    func fileBytes(_ t: TestVault) throws -> Data {
        let copy = t.directory.appendingPathComponent("copy-\(UUID().uuidString).rxv").path
        let db = try t.raw()
        try db.prepare("VACUUM INTO ?").run([.text(copy)])
        return try Data(contentsOf: URL(fileURLWithPath: copy))
    }

    @Test func theFileNamesNoClientKeyAndNoGrantsPrescription() throws {
        let (t, owner, records, clients) = try householdVault()
        #expect(owner.header.formatVersion == VaultHeader.currentFormatVersion)
        let bytes = try fileBytes(t)
        for (client, _) in clients {
            #expect(
                bytes.range(of: Data(client.recipient.publicKey)) == nil,
                "client \(client.name)'s public key is in the file")
        }
        let db = try t.raw()
        // No grant row names a prescription, as text or as bytes, and no two rows share a reference.
        var references: [String] = []
        try db.prepare("SELECT reference, quote(sealed_keys) || quote(info) FROM access_grant").forEach { row in
            references.append(row.text(0) ?? "")
            for record in records {
                #expect(row.text(0) != record.id.hex)
                #expect(!(row.text(1) ?? "").lowercased().contains(record.id.hex))
            }
        }
        #expect(references.count == 3 && Set(references).count == 3)
        // The manifest is sealed: no prescription, grant or client id in it.
        let grantIDs = try owner.grants().map(\.id.hex)
        try db.prepare("SELECT content FROM manifest").forEach { row in
            let content = Data(row.blob(0))
            for id in records.map(\.id.hex) + grantIDs + clients.map(\.0.id.hex) {
                #expect(content.range(of: Data(SearchIndex.hexBytes(id))) == nil, "the manifest names \(id.prefix(8))")
            }
        }
        // The columns of format 2 are gone.
        #expect(throws: StoreError.self) { try db.prepare("SELECT public_key FROM client").run() }
        #expect(throws: StoreError.self) { try db.prepare("SELECT prescription_id FROM access_grant").run() }
        // Yet each client finds its own grants, and only those.
        let insurer = try ClientVault.open(at: t.path, identity: clients[0].1, clock: .fixed(today: TestVault.today))
        #expect(Set(try insurer.list().map(\.id)) == [records[0].id, records[1].id])
        let shop = try ClientVault.open(at: t.path, identity: clients[1].1, clock: .fixed(today: TestVault.today))
        #expect(try shop.list().map(\.id) == [records[0].id])
        // And the owner still lists who may read what.
        #expect(try owner.grants(prescription: records[0].id).count == 2)
        #expect(try owner.grants(client: clients[0].0).count == 2)
        #expect(try owner.check(readData: true).isClean)
    }

    @Test func grantAndClientRowsMovedBetweenPlacesAreRefused() throws {
        let (t, owner, records, clients) = try householdVault()
        let db = try t.raw()
        let insurerID = clients[0].0.id.hex
        let shopID = clients[1].0.id.hex
        func refused(_ what: String, _ body: () throws -> Void) {
            do {
                try body()
                Issue.record("\(what): accepted")
            } catch let error as VaultError {
                guard case .integrity = error else {
                    Issue.record("\(what): \(error)")
                    return
                }
            } catch { Issue.record("\(what): \(error)") }
        }
        // The shop's grant handed to the insurer (its row moved to the other client).
        try db.execute("PRAGMA foreign_keys = OFF")
        try db.prepare("UPDATE access_grant SET client_id = ? WHERE client_id = ?").run([
            .text(insurerID), .text(shopID)
        ])
        refused("grants after a row moved to another client") { _ = try owner.grants() }
        refused("edit after a row moved to another client") { _ = try owner.edit(records[0].id) { $0.note = "x" } }
        #expect(!(try owner.check(readData: false)).isClean)
        try db.prepare(
            "UPDATE access_grant SET client_id = ? WHERE client_id = ? AND id NOT IN (SELECT id FROM access_grant WHERE client_id = ? LIMIT 2)"
        )
        .run([.text(shopID), .text(insurerID), .text(insurerID)])
        #expect(try owner.check(readData: false).isClean, "put back as it was")
        // Two of the insurer's references swapped (its grants on Ada and Ben trade places).
        let rows = try db.rows(
            "SELECT id, reference FROM access_grant WHERE client_id = ? ORDER BY id", [.text(insurerID)]
        ) { ($0.text(0)!, $0.text(1)!) }
        #expect(rows.count == 2)
        try db.prepare("UPDATE access_grant SET reference = 'x' || substr(reference, 2) WHERE id = ?").run([
            .text(rows[0].0)
        ])
        try db.prepare("UPDATE access_grant SET reference = ? WHERE id = ?").run([.text(rows[0].1), .text(rows[1].0)])
        try db.prepare("UPDATE access_grant SET reference = ? WHERE id = ?").run([.text(rows[1].1), .text(rows[0].0)])
        refused("grants after references swapped") { _ = try owner.grants() }
        #expect(!(try owner.check(readData: false)).isClean)
        try db.prepare("UPDATE access_grant SET reference = 'x' || substr(reference, 2) WHERE id = ?").run([
            .text(rows[0].0)
        ])
        try db.prepare("UPDATE access_grant SET reference = ? WHERE id = ?").run([.text(rows[1].1), .text(rows[1].0)])
        try db.prepare("UPDATE access_grant SET reference = ? WHERE id = ?").run([.text(rows[0].1), .text(rows[0].0)])
        #expect(try owner.check(readData: false).isClean, "put back as it was")
        // Lookup tags swapped between the two client rows: each client would find the other's
        // grants; the owner's MACs cover the tags, and the clients find nothing they can open.
        let tags = try db.rows("SELECT id, lookup FROM client ORDER BY rowid") { ($0.text(0)!, $0.blob(1)) }
        try db.prepare("UPDATE client SET lookup = randomblob(32) WHERE id = ?").run([.text(tags[0].0)])
        try db.prepare("UPDATE client SET lookup = ? WHERE id = ?").run([.blob(tags[0].1), .text(tags[1].0)])
        try db.prepare("UPDATE client SET lookup = ? WHERE id = ?").run([.blob(tags[1].1), .text(tags[0].0)])
        refused("clients after lookup tags swapped") { _ = try owner.clients() }
        let insurer = try ClientVault.open(at: t.path, identity: clients[0].1, clock: .fixed(today: TestVault.today))
        #expect(try insurer.list().isEmpty, "the insurer finds the shop's row, whose boxes it cannot open")
    }

    @Test func aRemovedClientsGrantPutBackWithoutItsClientIsFoundByCheck() throws {
        let (t, owner, _, clients) = try householdVault()
        let db = try t.raw()
        let saved = try db.rows(
            "SELECT id, client_id, reference, sealed_keys, info, mac FROM access_grant WHERE client_id = ?",
            [.text(clients[1].0.id.hex)]
        ) { row -> [Statement.Value] in
            [
                .text(row.text(0)!), .text(row.text(1)!), .text(row.text(2)!), .blob(row.blob(3)), .blob(row.blob(4)),
                .blob(row.blob(5))
            ]
        }
        #expect(saved.count == 1)
        try owner.removeClient(clients[1].0)
        try db.execute("PRAGMA foreign_keys = OFF")
        try db.prepare(
            "INSERT INTO access_grant (id, client_id, reference, sealed_keys, info, mac) VALUES (?, ?, ?, ?, ?, ?)"
        ).run(saved[0])
        let errors = try owner.check(readData: false).stages.flatMap(\.errors)
        #expect(errors.contains { $0.contains("not one the owner holds current") }, "\(errors)")
    }

    // MARK: - Format 2

    @Test func aFormatTwoVaultOpensReadsAndIsUpgradedByTheFirstWrite() throws {
        let t = try TestVault()
        let path = try t.fixtureVault("format2")
        let passphrase = TestVault.secret("format two fixture")
        let today = CalendarDate(year: 2026, month: 6, day: 20)!
        func identity(_ name: String) throws -> AgeIdentity {
            try #require(
                AgeIdentity.parseFile(
                    try String(contentsOfFile: Repository.fixture("vaults/format2-\(name).age"), encoding: .utf8))?
                    .first)
        }
        let shop = try identity("lens-shop")
        let family = try identity("family")
        let vault = try Vault.open(at: path, with: .passphrase(passphrase), clock: .fixed(today: today))
        #expect(vault.header.formatVersion == 2)
        // Every read works on format 2 as it is.
        #expect(try vault.list().count == 2)
        let before = try vault.grants().map {
            "\($0.client.name) \($0.prescriptionID.short) \($0.includesAttachments) \($0.expires?.description ?? "-")"
        }.sorted()
        #expect(before == ["family 450f2f2a false 2026-12-31", "lens-shop 0b6299e8 true -"])
        #expect(try vault.check(readData: true).isClean)
        let readsBefore = try ClientVault.open(at: path, identity: shop, clock: .fixed(today: today)).list().map(
            \.id.short)
        #expect(readsBefore == ["0b6299e8"])

        #expect(try vault.upgrade() == (2, VaultHeader.currentFormatVersion))
        #expect(try VaultHeader.read(at: path).formatVersion == VaultHeader.currentFormatVersion)
        // Its log: the 7 entries of the fixture and the read above, the pending reads countersigned by the upgrade's write.
        let log = try vault.log()
        #expect(log.count == 8 && log.allSatisfy { $0.problem == nil && $0.countersigned }, "\(log)")
        let report = try vault.check(readData: true)
        #expect(report.isClean, "\(report.stages.flatMap(\.errors))")
        let after = try vault.grants().map {
            "\($0.client.name) \($0.prescriptionID.short) \($0.includesAttachments) \($0.expires?.description ?? "-")"
        }.sorted()
        #expect(after == before)
        #expect(
            try vault.grants().first { $0.client.name == "lens-shop" }?.lastRead != nil,
            "reads before the upgrade still count")
        // Both clients read what they were granted, found by their lookup tags.
        let shopView = try ClientVault.open(at: path, identity: shop, clock: .fixed(today: today))
        let granted = try shopView.list()
        #expect(granted.map(\.id.short) == ["0b6299e8"])
        #expect(try shopView.attachments(of: granted[0].id).count == 1)
        #expect(
            try ClientVault.open(at: path, identity: family, clock: .fixed(today: today)).list().map(\.id.short) == [
                "450f2f2a"
            ])
        #expect(
            try vault.upgrade() == (VaultHeader.currentFormatVersion, VaultHeader.currentFormatVersion),
            "nothing left to do")
        // The file of format 2 cannot be put back over the new tables: the header's format is
        // in the root key's associated data.
        let db = try Database(path: path)
        try db.execute("UPDATE vault_header SET format_version = 2; PRAGMA user_version = 2")
        RowRollbackTests().expectWrongPassphrase { _ = try Vault.open(at: path, with: .passphrase(passphrase)) }
    }

    @Test func aFormatTwoVaultWithARowPutBackIsNotUpgraded() throws {
        let t = try TestVault()
        let path = try t.fixtureVault("format2")
        // The family's revoked grant on 0b6299e8 cannot be put back (no copy of it), but deleting
        // the lens shop's grant row is a change the format-2 manifest sees.
        let db = try Database(path: path)
        try db.execute("DELETE FROM access_grant WHERE prescription_id LIKE '0b6299e8%'")
        let vault = try Vault.open(
            at: path, with: .passphrase(TestVault.secret("format two fixture")),
            clock: .fixed(today: CalendarDate(year: 2026, month: 6, day: 20)!))
        var refusal = "accepted: a damaged format-2 vault was upgraded (and its damage made current)"
        do { _ = try vault.upgrade() } catch { refusal = error.description }
        #expect(refusal.contains("deleted"), "\(refusal)")
        #expect(try VaultHeader.read(at: path).formatVersion == 2)
    }
}

extension Database {
    /// Every row of a query, mapped (statements cannot outlive their step).
    func rows<T>(_ sql: String, _ values: [Statement.Value] = [], _ map: (Statement) -> T) throws -> [T] {
        var out: [T] = []
        try prepare(sql).forEach(values) { out.append(map($0)) }
        return out
    }
}
