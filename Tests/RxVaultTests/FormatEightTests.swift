import Foundation
import RxCrypto
import RxStore
import RxTestSupport
import Testing

@testable import RxVault

/// Format 8 (issue 48): the state root carries the knowledge vector, every owner write counts
/// itself in it as one write of the computer's replica, and a format-7 vault is upgraded by its
/// next owner write with nothing lost.
@Suite struct FormatEightTests {
    /// Makes a format-8 vault look as format 7 wrote it: header, schema version and the root
    /// without its vector (MAC'd again with the owner's key, as format 7 would have).
    static func downgradeToFormatSeven(_ vault: Vault) throws {
        try vault.store.write {
            try (vault.store as! SQLiteRecordStore).database.execute(
                "UPDATE vault_header SET format_version = 7; PRAGMA user_version = 7")
            var state = try vault.rootState()
            state.knowledge = nil
            try vault.store.setVaultState(
                VaultStateRecord(
                    writeCounter: state.counter, state: state.encoded(),
                    mac: try MAC.authenticate(state.macMessage(vaultID: vault.header.vaultID), key: vault.stateMACKey)))
        }
    }

    func open(_ t: TestVault, anchor: RollbackAnchor) throws -> Vault {
        try Vault.open(
            at: t.path, with: .passphrase(t.passphrase), clock: .fixed(today: TestVault.today), anchor: anchor)
    }

    @Test func everyWriteCountsOnceForTheComputersReplica() throws {
        let t = try TestVault()
        let anchor = RollbackAnchor(directory: t.directory.appendingPathComponent("state/rxvault").path)
        let owner = try open(t, anchor: anchor)
        #expect(try owner.knowledge() == .empty)
        let (record, _) = try owner.add(TestVault.glasses())
        _ = try owner.edit(record.id) { $0.note = "second" }
        let known = try #require(anchor.knowledge(owner.header.vaultIDHex))
        #expect(try owner.knowledge() == KnowledgeVector([known.replica: 2]))
        #expect(known.seen == KnowledgeVector([known.replica: 2]))
        // A write that changes nothing writes nothing, so counts nothing.
        _ = try owner.edit(record.id) { $0.note = "second" }
        #expect(try owner.knowledge()[known.replica] == 2)
        // Another process of the same computer writes as the same replica.
        _ = try open(t, anchor: anchor).edit(record.id) { $0.note = "third" }
        #expect(try open(t, anchor: anchor).knowledge() == KnowledgeVector([known.replica: 3]))
    }

    @Test func aFormatSevenVaultReadsAndTheNextOwnerWriteUpgradesIt() throws {
        let t = try TestVault()
        let anchor = RollbackAnchor(directory: t.directory.appendingPathComponent("state/rxvault").path)
        // Made without an anchor: this computer first meets the vault in format 7.
        let owner = try t.open()
        let (record, _) = try owner.add(TestVault.glasses(patient: "Noor Haddad"))
        try Self.downgradeToFormatSeven(owner)

        let reader = try open(t, anchor: anchor)
        #expect(reader.header.formatVersion == 7)
        #expect(try reader.list().map(\.id) == [record.id])
        #expect(try FormatFiveTests.storedState(t).schema == VaultState.assumedValiditySchema, "reading writes nothing")

        let writer = try open(t, anchor: anchor)
        _ = try writer.edit(record.id) { $0.note = "after the upgrade" }
        #expect(try VaultHeader.read(at: t.path).formatVersion == 8)
        #expect(try FormatFiveTests.storedState(t).schema == VaultState.knowledgeSchema)
        let replica = try #require(anchor.knowledge(writer.header.vaultIDHex)).replica
        #expect(try writer.knowledge()[replica] >= 1)
        let upgraded = try open(t, anchor: anchor)
        #expect(try upgraded.history(record.id).count == 2)
        #expect(try upgraded.check(readData: false).isClean)
    }

    /// An rxvault that reads up to format 7 would write roots without the vector: the root,
    /// MAC'd by the owner, says 8, so a header edited back to 7 is refused.
    @Test func aHeaderEditedBackToFormatSevenIsRefused() throws {
        let t = try TestVault()
        let owner = try t.open()
        _ = try owner.add(TestVault.glasses())
        try t.raw().execute("UPDATE vault_header SET format_version = 7; PRAGMA user_version = 7")
        #expect(throws: VaultError.self) { _ = try t.open().list() }
    }

    /// The vector in the root is covered by its MAC: a vector edited in the file is a forged root.
    @Test func anEditedVectorIsAForgedRoot() throws {
        let t = try TestVault()
        let owner = try t.open()
        _ = try owner.add(TestVault.glasses())
        let db = try t.raw()
        let row = try #require(try owner.store.vaultState())
        var bytes = row.state
        bytes[bytes.count - 1] ^= 1
        try db.prepare("UPDATE vault_state SET state = ?").run([.blob(bytes)])
        #expect(throws: VaultError.self) { _ = try t.open().list() }
    }
}
