import Foundation
import RxCrypto
import RxModel
import RxStore
import RxTestSupport
import Testing

@testable import RxVault

/// Format 7 (issue 47, item 10): the `assumed-validity` setting in the owner's key ring (ring
/// schema 2) and an assumed expiry kept in a record apart from its expiry. A format-6 vault reads
/// as it is and the next owner write upgrades it; a header edited back to format 6 is refused;
/// the ring decodes only as rxvault writes it.
@Suite struct FormatSevenTests {
    /// Makes a format-7 vault look as format 6 wrote it: header, schema version, the state root's
    /// schema byte and a schema-1 key ring (both MAC'd again with the owner's key, as format 6
    /// would have).
    static func downgradeToFormatSix(_ vault: Vault) throws {
        try vault.store.write {
            try (vault.store as! SQLiteRecordStore).database.execute(
                "UPDATE vault_header SET format_version = 6; PRAGMA user_version = 6")
            var state = try vault.rootState()
            state.knowledge = nil
            state.assumedValidity = false
            try vault.store.setVaultState(
                VaultStateRecord(
                    writeCounter: state.counter, state: state.encoded(),
                    mac: try MAC.authenticate(state.macMessage(vaultID: vault.header.vaultID), key: vault.stateMACKey)))
            try vault.store.setKeyRing(
                try KeyRing.record(
                    header: try vault.store.header(), slots: try vault.store.keySlots(), assumedValidity: nil,
                    counter: state.counter, key: vault.stateMACKey))
        }
    }

    static func ringSchema(_ t: TestVault) throws -> UInt8? {
        try t.open().store.keyRing()?.content.first
    }

    @Test func aFormatSixVaultReadsAndTheNextOwnerWriteUpgradesIt() throws {
        let t = try TestVault()
        let owner = try t.open()
        var undated = TestVault.glasses(patient: "Noor Haddad")
        undated.expires = nil
        undated.issued = CalendarDate(iso: "2024-07-01")!
        let (record, _) = try owner.add(undated)
        try Self.downgradeToFormatSix(owner)
        #expect(try Self.ringSchema(t) == KeyRing.schema)

        let reader = try t.open()
        #expect(reader.header.formatVersion == 6)
        #expect(try reader.assumedValidity() == .none)
        #expect(try reader.list().map(\.id) == [record.id])
        #expect(try reader.check(readData: false).isClean)
        #expect(
            try FormatFiveTests.storedState(t).schema == VaultState.measurementGrantsSchema, "reading writes nothing")

        let writer = try t.open()
        let glasses = try #require(AssumedValidity(parsing: "glasses=2y"))
        #expect(try writer.setAssumedValidity(glasses) == .none)
        #expect(try VaultHeader.read(at: t.path).formatVersion == VaultHeader.currentFormatVersion)
        #expect(try FormatFiveTests.storedState(t).schema == VaultState.knowledgeSchema)
        // Upgraded through format 7 to 8: the setting, then the stamps (ring schema 3).
        #expect(try Self.ringSchema(t) == KeyRing.historySchema)
        let upgraded = try t.open()
        #expect(try upgraded.assumedValidity() == glasses)
        #expect(try upgraded.check(readData: false).isClean)
        // The setting is carried by every later write's ring, not only the one that set it.
        _ = try upgraded.edit(record.id) { $0.note = "later" }
        #expect(try t.open().assumedValidity() == glasses)
        let recalls = Recall.due(
            try t.open().list(), today: TestVault.today, within: 60, assuming: try t.open().assumedValidity())
        #expect(recalls.map(\.expires) == [CalendarDate(iso: "2026-07-01")!] && recalls.allSatisfy(\.isAssumed))
    }

    /// An rxvault that reads up to format 6 would take a header that says 6 and call the ring
    /// forged, or drop a record's assumed expiry: the root, MAC'd by the owner, says 7.
    @Test func aHeaderEditedBackToFormatSixIsRefused() throws {
        let t = try TestVault()
        let owner = try t.open()
        _ = try owner.add(TestVault.glasses())
        try owner.setAssumedValidity(try #require(AssumedValidity(parsing: "contacts=1y")))
        try t.raw().execute("UPDATE vault_header SET format_version = 6; PRAGMA user_version = 6")
        #expect(throws: VaultError.self) { _ = try t.open().list() }
    }

    /// The ring decodes only as written: exact lengths, the setting in its one spelling.
    @Test func theRingDecodesOnlyAsRxvaultWritesIt() throws {
        let setting = try #require(AssumedValidity(parsing: "contacts=1y,glasses=2y"))
        #expect(setting.description == "glasses=2y,contacts=1y")
        let content = KeyRing.Content(maxAttachmentBytes: 1024, slots: [1: Array(repeating: 7, count: 32)])
        var withSetting = content
        withSetting.assumedValidity = setting
        for value in [content, withSetting] {
            #expect(KeyRing.decode(KeyRing.encode(value)) == value)
        }
        let bytes = KeyRing.encode(withSetting)
        #expect(bytes.first == KeyRing.settingsSchema && KeyRing.encode(content).first == KeyRing.schema)
        #expect(KeyRing.decode(bytes + [0]) == nil, "a byte more")
        #expect(KeyRing.decode(Array(bytes.dropLast())) == nil, "a byte less")
        // Another spelling of the same setting (or no setting at all) is not what rxvault writes.
        let text = Array("glasses=2y,contacts=1y".utf8)
        let slotsEnd = bytes.count - 2 - text.count
        let other = Array("contacts=1y,glasses=2y".utf8)
        #expect(KeyRing.decode(Array(bytes[..<slotsEnd]) + [0, UInt8(other.count)] + other) == nil)
        #expect(KeyRing.decode(Array(bytes[..<slotsEnd]) + [0, 0]) == nil)
        let none = KeyRing.Content(maxAttachmentBytes: 1024, slots: [:], assumedValidity: AssumedValidity.none)
        #expect(KeyRing.decode(KeyRing.encode(none)) == none)
    }

    @Test func theSettingParsesStrictly() {
        for good in ["glasses=2y", "contacts=18m", "glasses=26w,contacts=90d", "NONE", " glasses = 2y "] {
            #expect(AssumedValidity(parsing: good) != nil, "\(good)")
        }
        let bads = [
            "", "2y", "glasses", "glasses=", "glasses=2", "glasses=0y", "glasses=101y", "lenses=2y",
            "glasses=2y,glasses=2y", "glasses=2y,", "none,glasses=2y"
        ]
        for bad in bads {
            #expect(AssumedValidity(parsing: bad) == nil, "\(bad)")
        }
        let validity = AssumedValidity(parsing: "glasses=2y")!
        var rx = TestVault.glasses()
        rx.expires = nil
        rx.issued = CalendarDate(iso: "2024-02-29")!
        let leapDay = EffectiveExpiry(date: CalendarDate(iso: "2026-02-28")!, isAssumed: true)
        #expect(rx.expiry(assuming: validity) == leapDay)
        let year = AssumedValidity(parsing: "glasses=1y")!
        #expect(rx.status(on: CalendarDate(iso: "2026-02-15")!, assuming: year) == .expired)
        #expect(rx.status(on: CalendarDate(iso: "2026-02-15")!) == .valid, "without the setting: two years")
        rx.assumedExpiry = CalendarDate(iso: "2025-02-28")!
        #expect(rx.expiry(assuming: validity)?.date == CalendarDate(iso: "2025-02-28")!, "the record's own first")
        rx.expires = CalendarDate(iso: "2030-01-01")!
        #expect(rx.expiry(assuming: validity) == EffectiveExpiry(date: rx.expires!, isAssumed: false))
    }
}
