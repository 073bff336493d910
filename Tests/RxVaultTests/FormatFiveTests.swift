import Foundation
import RxCrypto
import RxModel
import RxStore
import RxTestSupport
import Testing

@testable import RxVault

/// Format 5 (state schema 3): the root pins each search-index bucket by a digest of its nonce and
/// tag (`VaultState.sealDigest`) instead of the SHA-256 of the whole bucket. These tests hold the
/// two things that make it safe: every bucket is still opened (authenticated) after the compare,
/// and a format-4 vault is upgraded only after each bucket matched its whole hash. And the
/// header's format is bound by the root: an edited one is refused.
@Suite struct FormatFiveTests {
    func expectIntegrity(_ what: String, mentioning words: [String], _ body: () throws -> Void) {
        do {
            try body()
            Issue.record("\(what): accepted")
        } catch let error as VaultError {
            guard case .integrity(let message) = error else {
                Issue.record("\(what): expected an integrity error, got \(error)")
                return
            }
            for word in words where !message.contains(word) {
                Issue.record("\(what): '\(message)' does not mention '\(word)'")
            }
        } catch {
            Issue.record("\(what): unexpected \(error)")
        }
    }

    /// Makes the vault what rxvault wrote in format 4: the header and schema version 4 and the
    /// root with whole-bucket hashes, schema 2, MAC'd with the owner's key (the same counter, so
    /// the key ring still matches).
    static func downgradeToFormatFour(_ vault: Vault) throws {
        try vault.store.write {
            try (vault.store as! SQLiteRecordStore).database.execute(
                "UPDATE vault_header SET format_version = 4; PRAGMA user_version = 4")
            var state = try vault.rootState()
            state.knowledge = nil
            state.indexBySeal = false
            state.indexHashes = Array(repeating: VaultState.absentBucket, count: VaultState.bucketCount)
            for (bucket, sealed) in try vault.store.indexBuckets() {
                state.indexHashes[bucket] = VaultState.bucketHash(sealed)
            }
            try vault.store.setVaultState(
                VaultStateRecord(
                    writeCounter: state.counter, state: state.encoded(),
                    mac: try MAC.authenticate(state.macMessage(vaultID: vault.header.vaultID), key: vault.stateMACKey)))
        }
    }

    static func storedState(_ t: TestVault) throws -> (schema: UInt8, state: VaultState) {
        let vault = try t.open()
        let bytes = try #require(try vault.store.vaultState()).state
        return (bytes[0], try vault.rootState())
    }

    func vaultWithPrescriptions(_ t: TestVault, count: Int = 8) throws -> (Vault, [PrescriptionRecord]) {
        let owner = try t.open()
        var records: [PrescriptionRecord] = []
        for i in 0..<count { records.append(try owner.add(TestVault.glasses(patient: "Patient \(i)")).0) }
        return (owner, records)
    }

    @Test func aNewVaultPinsItsBucketsBySealDigest() throws {
        let t = try TestVault()
        _ = try vaultWithPrescriptions(t)
        let (schema, state) = try Self.storedState(t)
        #expect(schema == VaultState.knowledgeSchema)
        #expect(state.indexBySeal)
        let buckets = try t.open().store.indexBuckets()
        #expect(!buckets.isEmpty)
        for (bucket, sealed) in buckets {
            #expect(state.indexHashes[bucket] == VaultState.sealDigest(sealed))
            #expect(state.indexHashes[bucket] != VaultState.bucketHash(sealed))
        }
    }

    /// A format-4 vault reads as it is, and the next owner write moves it to format 5: its root
    /// to seal digests, without touching the buckets.
    @Test func aFormatFourVaultStillReadsAndTheNextOwnerWriteUpgradesIt() throws {
        let t = try TestVault()
        let (owner, records) = try vaultWithPrescriptions(t)
        try Self.downgradeToFormatFour(owner)
        #expect(try Self.storedState(t).schema == VaultState.patientsSchema)

        let reader = try t.open()
        #expect(Set(try reader.list().map(\.id)) == Set(records.map(\.id)))
        #expect(try reader.check(readData: false).isClean)
        #expect(try Self.storedState(t).schema == VaultState.patientsSchema, "reading does not write")

        let bucketsBefore = try reader.store.indexBuckets()
        let writer = try t.open()
        _ = try writer.edit(records[0].id) { $0.note = "after the upgrade" }
        let (schema, state) = try Self.storedState(t)
        // Through format 5 to the current format (6 and 7: no change to the index hashes).
        #expect(schema == VaultState.knowledgeSchema)
        #expect(try VaultHeader.read(at: t.path).formatVersion == VaultHeader.currentFormatVersion)
        let bucketsAfter = try writer.store.indexBuckets()
        for (bucket, sealed) in bucketsAfter { #expect(state.indexHashes[bucket] == VaultState.sealDigest(sealed)) }
        // Only the edited prescription's bucket was re-sealed; the others kept their bytes.
        let edited = SearchIndex.bucket(of: records[0].id.hex)
        let before = Dictionary(uniqueKeysWithValues: bucketsBefore)
        let after = Dictionary(uniqueKeysWithValues: bucketsAfter)
        for (bucket, sealed) in before where bucket != edited { #expect(after[bucket] == sealed) }
        #expect(try t.open().list().first { $0.id == records[0].id }?.prescription.note == "after the upgrade")
        #expect(try t.open().check(readData: false).isClean)
    }

    /// The upgrade compares every bucket with the whole hash the old root pins before it pins
    /// the bucket's seal: a bucket put back from an older copy is refused, not made current.
    @Test func aBucketPutBackBeforeTheUpgradeIsRefusedByTheUpgradingWrite() throws {
        let t = try TestVault()
        let (owner, records) = try vaultWithPrescriptions(t)
        let bucket = SearchIndex.bucket(of: records[0].id.hex)
        let old = try #require(try owner.store.indexBucket(bucket))
        _ = try owner.edit(records[0].id) { $0.note = "newer" }
        try Self.downgradeToFormatFour(owner)
        let db = try t.raw()
        try db.prepare("UPDATE search_index SET content = ? WHERE bucket = ?").run([.blob(old), .integer(Int64(bucket))]
        )

        expectIntegrity(
            "the upgrading write", mentioning: ["search index bucket \(bucket)", "not the one the owner wrote last"]
        ) {
            _ = try t.open().add(TestVault.glasses(patient: "Someone else"))
        }
        #expect(try Self.storedState(t).schema == VaultState.patientsSchema, "the refused write changed nothing")
        #expect(try VaultHeader.read(at: t.path).formatVersion == 4)
        expectIntegrity("list", mentioning: ["search index bucket \(bucket)"]) { _ = try t.open().list() }
    }

    /// In format 5 only the nonce and tag are compared with the root: other bytes under the
    /// pinned nonce and tag match the digest, and it is opening the bucket that refuses them.
    @Test func otherBytesUnderThePinnedNonceAndTagFailToOpen() throws {
        let t = try TestVault()
        let (owner, records) = try vaultWithPrescriptions(t)
        let bucket = SearchIndex.bucket(of: records[0].id.hex)
        var sealed = try #require(try owner.store.indexBucket(bucket))
        sealed[AEAD.nonceLength + 5] ^= 0x01
        #expect(VaultState.sealDigest(sealed) == (try owner.rootState()).indexHashes[bucket])
        let db = try t.raw()
        try db.prepare("UPDATE search_index SET content = ? WHERE bucket = ?").run([
            .blob(sealed), .integer(Int64(bucket))
        ])

        expectIntegrity("query", mentioning: ["search index bucket \(bucket) failed authentication"]) {
            _ = try t.open().query(PrescriptionFilter())
        }
        expectIntegrity("a write to the bucket", mentioning: ["search index bucket \(bucket) failed authentication"]) {
            _ = try t.open().edit(records[0].id) { $0.note = "on a forged bucket" }
        }
        #expect(
            try t.open().check(readData: false).stages.flatMap(\.errors).contains {
                $0.contains("search index bucket \(bucket) failed authentication")
            })
    }

    /// An older bucket of the same vault has its own random nonce: its digest is not the pinned one.
    @Test func anOlderBucketIsRefusedInFormatFive() throws {
        let t = try TestVault()
        let (owner, records) = try vaultWithPrescriptions(t)
        let bucket = SearchIndex.bucket(of: records[0].id.hex)
        let old = try #require(try owner.store.indexBucket(bucket))
        _ = try owner.edit(records[0].id) { $0.note = "newer" }
        #expect(try Self.storedState(t).state.indexBySeal)
        let db = try t.raw()
        try db.prepare("UPDATE search_index SET content = ? WHERE bucket = ?").run([.blob(old), .integer(Int64(bucket))]
        )

        expectIntegrity("query", mentioning: ["search index bucket \(bucket)", "not the one the owner wrote last"]) {
            _ = try t.open().query(PrescriptionFilter())
        }
        expectIntegrity("a write", mentioning: ["search index bucket \(bucket)"]) {
            _ = try t.open().edit(records[0].id) { $0.note = "on an older bucket" }
        }
        #expect(
            try t.open().check(readData: false).stages.flatMap(\.errors).contains {
                $0.contains("search index bucket \(bucket) is not the one")
            })
    }

    /// A root that pins a bucket the file no longer holds is refused, as before.
    @Test func aDeletedBucketIsRefusedInFormatFive() throws {
        let t = try TestVault()
        let (_, records) = try vaultWithPrescriptions(t)
        let bucket = SearchIndex.bucket(of: records[0].id.hex)
        try t.raw().prepare("DELETE FROM search_index WHERE bucket = ?").run([.integer(Int64(bucket))])
        expectIntegrity("query", mentioning: ["search index bucket \(bucket)", "not the one the owner wrote last"]) {
            _ = try t.open().query(PrescriptionFilter())
        }
        // A write to that bucket would otherwise write it anew with only its own entries, and
        // pin the loss of the others.
        expectIntegrity("a write to the deleted bucket", mentioning: ["search index bucket \(bucket)", "not the one"]) {
            _ = try t.open().edit(records[0].id) { $0.note = "into a deleted bucket" }
        }
    }

    /// The key slots bind format 4 from format 4 on, so an edited header format would still open:
    /// the MAC'd root's schema is what refuses it, both ways.
    @Test func anEditedHeaderFormatIsRefused() throws {
        let t = try TestVault()
        _ = try vaultWithPrescriptions(t, count: 2)
        try t.raw().execute("UPDATE vault_header SET format_version = 4; PRAGMA user_version = 4")
        expectIntegrity(
            "a format-5 vault made to look like format 4", mentioning: ["header's format version was edited"]
        ) {
            _ = try t.open().list()
        }
        let older = try TestVault()
        let (owner, _) = try vaultWithPrescriptions(older, count: 2)
        try Self.downgradeToFormatFour(owner)
        try older.raw().execute("UPDATE vault_header SET format_version = 5; PRAGMA user_version = 5")
        expectIntegrity(
            "a format-4 vault made to look like format 5", mentioning: ["header's format version was edited"]
        ) {
            _ = try older.open().list()
        }
    }

    /// `serve` keeps the vault it opened: a format-4 vault upgraded by another connection (its
    /// own audit writer, an owner command, another machine) is followed, not taken for an edited
    /// header.
    @Test func aVaultOpenedInFormatFourFollowsAnUpgradeByAnotherConnection() throws {
        let t = try TestVault()
        let (owner, records) = try vaultWithPrescriptions(t, count: 3)
        try Self.downgradeToFormatFour(owner)
        let server = try t.open()
        #expect(server.header.formatVersion == 4)
        #expect(try server.list().count == 3)
        _ = try t.open().edit(records[0].id) { $0.note = "upgraded by another connection" }
        #expect(try VaultHeader.read(at: t.path).formatVersion == VaultHeader.currentFormatVersion)
        #expect(try server.prescription(records[0].id).prescription.note == "upgraded by another connection")
        #expect(server.header.formatVersion == VaultHeader.currentFormatVersion)
        #expect(try server.query(PrescriptionFilter()).count == 3)
        _ = try server.edit(records[1].id) { $0.note = "written after following" }
        #expect(try t.open().check(readData: false).isClean)
    }
}
