import Foundation
import RxCrypto
import RxModel
import RxStore
import RxTestSupport
import Testing

@testable import RxVault

/// Someone who can write the file (a revoked client with an old copy, say) deletes
/// rows, puts rows back from an older copy of the same vault, or mixes copies. Every row keeps a
/// valid owner MAC, so only the state root and the manifest can tell: `check` must name what is
/// wrong, and the owner's commands must refuse before they show, extend or re-seal anything.
@Suite struct RowRollbackTests {
    func checkErrors(_ vault: Vault) throws -> [String] {
        try vault.check(readData: true).stages.flatMap(\.errors)
    }

    // MARK: - The headline

    @Test func aRevokedGrantPutBackWithItsVersionRowsAndBucketIsRefusedAndNothingIsSealedToIt() throws {
        let t = try TestVault()
        let owner = try t.open()
        let (record, _) = try owner.add(TestVault.glasses(patient: "Ada"))
        let identity = try AgeIdentity.generate()
        let client = try owner.addClient(name: "shop", recipient: identity.recipient)
        try owner.grant(client, [record.id], expires: nil, includeAttachments: true)
        let old = try t.consistentCopy("before-revoke.rxv")
        try owner.revoke(client, [record.id])
        let bucket = SearchIndex.bucket(of: record.id.hex)

        // The client puts back its grant, the versions that grant was sealed for (deleting the
        // re-keyed one) and the index bucket naming that version.
        let db = try t.attacker(old: old)
        try db.execute(
            "DELETE FROM main.prescription_version WHERE version > (SELECT max(version) FROM old.prescription_version)")
        try db.execute("INSERT INTO main.access_grant SELECT * FROM old.access_grant")
        try db.execute(
            "UPDATE main.search_index SET content = (SELECT content FROM old.search_index WHERE bucket = \(bucket)) WHERE bucket = \(bucket)"
        )

        let errors = try checkErrors(owner)
        #expect(errors.contains { $0.contains("grant") && $0.contains("revoked grant put back") }, "\(errors)")
        expectIntegrity("grants", mentioning: ["grant"]) { _ = try owner.grants() }
        expectIntegrity("show") { _ = try owner.prescription(record.id) }
        let versionsBefore = try db.integer("SELECT count(*) FROM main.prescription_version") ?? 0
        let grantBefore = try db.blob("SELECT sealed_keys FROM main.access_grant")
        expectIntegrity("edit", mentioning: ["grant"]) {
            _ = try owner.edit(record.id) { $0.note = "written after the revoke" }
        }
        // Nothing was written, nothing re-sealed: the client can read no newer version.
        #expect(try db.integer("SELECT count(*) FROM main.prescription_version") == versionsBefore)
        #expect(try db.blob("SELECT sealed_keys FROM main.access_grant") == grantBefore)
        let reader = try ClientVault.open(at: t.path, identity: identity, clock: .fixed(today: TestVault.today))
        for readable in try reader.list() { #expect(readable.prescription.note != "written after the revoke") }
    }

    // MARK: - Clients

    @Test func aRemovedClientPutBackAndADeletedClientAreRefused() throws {
        let t = try TestVault()
        let owner = try t.open()
        let (record, _) = try owner.add(TestVault.glasses())
        let removed = try owner.addClient(name: "gone", recipient: try AgeIdentity.generate().recipient)
        let kept = try owner.addClient(name: "kept", recipient: try AgeIdentity.generate().recipient)
        try owner.grant(removed, [record.id], expires: nil, includeAttachments: true)
        let old = try t.consistentCopy("with-client.rxv")
        try owner.removeClient(removed)

        let db = try t.attacker(old: old)
        try db.execute("INSERT INTO main.client SELECT * FROM old.client WHERE id = '\(removed.id.hex)'")
        #expect(try checkErrors(owner).contains { $0.contains("client list") })
        expectIntegrity("client list", mentioning: ["client"]) { _ = try owner.clients() }
        expectIntegrity("grant to the removed client") {
            try owner.grant(removed, [record.id], expires: nil, includeAttachments: true)
        }
        try db.execute("DELETE FROM main.client WHERE id = '\(removed.id.hex)'")
        #expect(try checkErrors(owner).isEmpty)

        try db.execute("DELETE FROM main.client WHERE id = '\(kept.id.hex)'")
        #expect(try checkErrors(owner).contains { $0.contains("client list") })
        expectIntegrity("add after a client row was deleted") { _ = try owner.add(TestVault.glasses()) }
    }

    // MARK: - Audit log

    @Test func anOlderStateOfTheWholeAuditLogIsDetected() throws {
        let t = try TestVault()
        let owner = try t.open()
        let (record, _) = try owner.add(TestVault.glasses())
        let client = try owner.addClient(name: "shop", recipient: try AgeIdentity.generate().recipient)
        let old = try t.consistentCopy("short-log.rxv")
        try owner.grant(client, [record.id], expires: nil, includeAttachments: true)
        try owner.revoke(client, [record.id])

        // An older, internally valid log: its entries, MACs and head all verify on their own.
        let db = try t.attacker(old: old)
        try db.execute("DELETE FROM main.audit_entry")
        try db.execute("INSERT INTO main.audit_entry SELECT * FROM old.audit_entry")
        try db.execute(
            "UPDATE main.audit_head SET seq = (SELECT seq FROM old.audit_head), hash = (SELECT hash FROM old.audit_head), mac = (SELECT mac FROM old.audit_head)"
        )
        #expect(try checkErrors(owner).contains { $0.contains("audit log's head") })
        expectIntegrity("log", mentioning: ["audit"]) { _ = try owner.log() }
        expectIntegrity("a write on a rolled-back log") { _ = try owner.add(TestVault.glasses()) }
    }

    // MARK: - Mixing copies

    @Test func bucketsAndRowsMixedFromTwoCopiesAreDetected() throws {
        let t = try TestVault()
        let owner = try t.open()
        var records: [PrescriptionRecord] = []
        for i in 0..<6 { records.append(try owner.add(TestVault.glasses(patient: "P\(i)")).0) }
        let first = try t.consistentCopy("first.rxv")
        for record in records { _ = try owner.edit(record.id) { $0.note = "second" } }

        // An index bucket and a manifest bucket from the older copy, next to newer rows.
        let db = try t.attacker(old: first)
        let bucket = SearchIndex.bucket(of: records[0].id.hex)
        try db.execute(
            "UPDATE main.search_index SET content = (SELECT content FROM old.search_index WHERE bucket = \(bucket)) WHERE bucket = \(bucket)"
        )
        #expect(try checkErrors(owner).contains { $0.contains("search index bucket \(bucket)") })
        expectIntegrity("list") { _ = try owner.list() }
        try db.execute("DELETE FROM main.search_index")
        try db.execute("INSERT INTO main.search_index SELECT * FROM old.search_index")
        try db.execute("DELETE FROM main.manifest")
        try db.execute("INSERT INTO main.manifest SELECT * FROM old.manifest")
        #expect(try checkErrors(owner).contains { $0.contains("manifest bucket") })
        expectIntegrity("show") { _ = try owner.prescription(records[0].id) }

        // The whole older state root with them, next to the newer version rows: a mix.
        try db.execute("DELETE FROM main.vault_state")
        try db.execute("INSERT INTO main.vault_state SELECT * FROM old.vault_state")
        #expect(
            try checkErrors(owner).contains { $0.contains("newest stored version is 2 but the owner wrote version 1") })
        expectIntegrity("edit on a mixed file") { _ = try owner.edit(records[1].id) { $0.note = "third" } }
    }

    @Test func aDeletedPrescriptionOrVersionIsNamed() throws {
        let t = try TestVault()
        let owner = try t.open()
        let (a, _) = try owner.add(TestVault.glasses(patient: "A"))
        let (b, _) = try owner.add(TestVault.glasses(patient: "B"))
        _ = try owner.edit(b.id) { $0.note = "v2" }
        _ = try owner.edit(b.id) { $0.note = "v3" }
        let db = try t.raw()
        try db.execute("PRAGMA foreign_keys = OFF")
        try db.execute("DELETE FROM prescription_version WHERE prescription_id = '\(b.id.hex)' AND version = 2")
        #expect(try checkErrors(owner).contains { $0.contains(b.id.hex.prefix(8)) && $0.contains("earlier versions") })
        expectIntegrity("history") { _ = try owner.history(b.id) }
        try db.execute("DELETE FROM prescription_version WHERE prescription_id = '\(a.id.hex)'")
        try db.execute("DELETE FROM prescription WHERE id = '\(a.id.hex)'")
        #expect(try checkErrors(owner).contains { $0.contains(a.id.hex.prefix(8)) && $0.contains("deleted") })
    }

    /// Reading a prescription checks its rows against the manifest first, in a single read and in
    /// an export's read scope (which checks each prescription once and keeps what it read): rows
    /// deleted from under a prescription the manifest holds are refused, not "not found".
    @Test func versionRowsDeletedUnderAPrescriptionAreRefusedOnReadAndExport() throws {
        let t = try TestVault()
        let owner = try t.open()
        let (a, _) = try owner.add(TestVault.glasses(patient: "A"))
        let (b, _) = try owner.add(TestVault.glasses(patient: "B"))
        #expect(
            try owner.exportItems(ids: nil, filter: PrescriptionFilter(), for: nil, attachments: true, versions: true)
                .count == 2)
        let db = try t.raw()
        try db.execute("PRAGMA foreign_keys = OFF")
        try db.execute("DELETE FROM prescription_version WHERE prescription_id = '\(a.id.hex)'")
        expectIntegrity("show", mentioning: [String(a.id.hex.prefix(8))]) { _ = try owner.prescription(a.id) }
        expectIntegrity("attachments", mentioning: [String(a.id.hex.prefix(8))]) { _ = try owner.attachments(of: a.id) }
        expectIntegrity("export", mentioning: [String(a.id.hex.prefix(8))]) {
            _ = try owner.exportItems(
                ids: nil, filter: PrescriptionFilter(), for: nil, attachments: true, versions: false)
        }
        // The other prescription still reads, in and out of a scope.
        #expect(try owner.prescription(b.id).id == b.id)
        #expect(
            try owner.exportItems(
                ids: [b.id], filter: PrescriptionFilter(), for: nil, attachments: true, versions: true
            ).count == 1)
    }

    // MARK: - Whole-file rollback and the anchor

    @Test func anAnchorSeesAWholeFileRollBack() throws {
        let t = try TestVault()
        let anchor = RollbackAnchor(directory: t.directory.appendingPathComponent("state/rxvault").path)
        func open() throws -> Vault {
            try Vault.open(
                at: t.path, with: .passphrase(t.passphrase), clock: .fixed(today: TestVault.today), anchor: anchor)
        }
        let owner = try open()
        let (record, _) = try owner.add(TestVault.glasses())
        let old = try t.consistentCopy("old.rxv")
        _ = try owner.edit(record.id) { $0.note = "newer" }
        let newest = try owner.writeCounter()
        let key = RollbackAnchor.Key(vaultIDHex: owner.header.vaultIDHex, path: t.path)
        #expect(anchor.seen(key) == newest)
        var mode = stat()
        #expect(stat(anchor.directory, &mode) == 0 && mode.st_mode & 0o777 == 0o700)
        #expect(stat(anchor.file(for: key), &mode) == 0 && mode.st_mode & 0o777 == 0o600)

        // The whole file replaced by the older copy: valid on its own.
        for suffix in ["-wal", "-shm"] { unlink(t.path + suffix) }
        try FileManager.default.removeItem(atPath: t.path)
        try FileManager.default.copyItem(atPath: old, toPath: t.path)
        let rolledBack = try open()
        let finding = try #require(rolledBack.rollback)
        #expect(finding.seen == newest && finding.found == newest - 1)
        // Format 8: the knowledge says the same, with the one write it lacks.
        #expect(finding.history?.relation == .earlier && finding.history?.missingHere == 1 && !finding.isFork)
        // `check` names it (exit 76), and nothing else is wrong with the file.
        let report = try rolledBack.check(readData: false)
        #expect(report.stages.filter { !$0.errors.isEmpty }.map(\.name) == ["line of history"])
        expectIntegrity("a write to a rolled-back vault", mentioning: ["accept-rollback"]) {
            _ = try rolledBack.add(TestVault.glasses())
        }
        try rolledBack.acceptCurrentState()
        #expect(anchor.seen(key) == newest - 1)
        #expect(try open().rollback == nil)
        _ = try rolledBack.add(TestVault.glasses())
    }

    // MARK: - Format 1

    /// The format-1 fixture is kept as SQL text (a vault file in git would look like a user's
    /// vault, and text diffs): loaded into a new file, byte-for-byte the rows rxvault 0.1.0 wrote.
    @Test func aFormatOneVaultOpensReadsAndIsUpgradedByTheFirstWrite() throws {
        let t = try TestVault()
        let path = try t.fixtureVault("format1")
        let passphrase = TestVault.secret("format one fixture")
        let vault = try Vault.open(at: path, with: .passphrase(passphrase), clock: .fixed(today: TestVault.today))
        #expect(vault.header.formatVersion == 1)
        let all = try vault.list()
        #expect(all.count == 2)
        let edited = try #require(all.first { $0.id.hex.hasPrefix("6070cf6e") })
        #expect(try vault.attachments(of: edited.id).count == 1)
        // The fixture's one client read was logged by rxvault 0.1.0, before clients authenticated
        // their entries, and still awaits the owner's countersignature, as format 1 did it.
        let before = try vault.check(readData: true)
        #expect(before.isClean, "\(before.stages.flatMap(\.errors))")
        #expect(try vault.log().last?.countersigned == false)
        // The first write upgrades (to format 5, through 2, 3 and 4), in the same transaction, and
        // countersigns that read as format 1 would have.
        _ = try vault.edit(edited.id) { $0.note = "after the upgrade" }
        #expect(vault.header.formatVersion == VaultHeader.currentFormatVersion)
        #expect(try VaultHeader.read(at: path).formatVersion == VaultHeader.currentFormatVersion)
        let report = try vault.check(readData: true)
        #expect(report.isClean, "\(report.stages.flatMap(\.errors))")
        #expect(try vault.grants().count == 1)
        // Opened again, the upgraded vault unwraps with the format-3 associated data.
        let again = try Vault.open(at: path, with: .passphrase(passphrase), clock: .fixed(today: TestVault.today))
        #expect(try again.prescription(edited.id).prescription.note == "after the upgrade")
        let log = try again.log()
        #expect(log.count == 3)
        #expect(log.allSatisfy { $0.countersigned && $0.problem == nil }, "\(log)")
        // The client still reads what it was granted, finding its row by its lookup tag.
        let identity = try #require(
            AgeIdentity.parseFile(
                try String(contentsOfFile: Repository.fixture("vaults/format1-client.age"), encoding: .utf8))?.first)
        let reader = try ClientVault.open(at: path, identity: identity, clock: .fixed(today: TestVault.today))
        #expect(try reader.list().map(\.id) == [edited.id])
        // Turning it back into format 1 (to have forged rows re-trusted) breaks the root key.
        let db = try Database(path: path)
        try db.execute(
            "UPDATE vault_header SET format_version = 1; DROP TABLE vault_state; DROP TABLE manifest; PRAGMA user_version = 1"
        )
        expectWrongPassphrase { _ = try Vault.open(at: path, with: .passphrase(passphrase)) }
    }
}

extension RowRollbackTests {
    func expectWrongPassphrase(_ body: () throws -> Void) {
        do {
            try body()
            Issue.record("a vault turned back into format 1 opened")
        } catch let error as VaultError {
            guard case .wrongPassphrase = error else {
                Issue.record("expected wrong passphrase, got \(error)")
                return
            }
        } catch {
            Issue.record("unexpected \(error)")
        }
    }
}
