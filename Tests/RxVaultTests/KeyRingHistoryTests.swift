import RxCrypto
import RxModel
import RxStore
import RxTestSupport
import Testing

@testable import RxVault

/// The key ring's history (format 8, ring schema 3): what `merge` decides key slots and settings
/// by. It round-trips exactly, is refused in any form rxvault never writes, and every owner write
/// keeps it without being told: a slot or setting it changed takes its stamp, a slot it removed
/// or re-wrapped leaves its hash behind.
@Suite struct KeyRingHistoryTests {
    static let replica = ReplicaID(bytes: [UInt8](repeating: 7, count: 16))!

    static func content(slots: [Int: [UInt8]], history: KeyRingHistory) -> KeyRing.Content {
        KeyRing.Content(
            maxAttachmentBytes: 1 << 20, slots: slots, assumedValidity: AssumedValidity.none, history: history)
    }

    @Test func aHistoryRoundTripsAndAnythingElseIsRefused() throws {
        var history = KeyRingHistory()
        history.slots[1] = WriteStamp(replica: Self.replica, clock: 3)
        history.settings[.assumedValidity] = WriteStamp(replica: Self.replica, clock: 9)
        history.removedSlots = [[UInt8](repeating: 1, count: 32), [UInt8](repeating: 2, count: 32)]
        let ring = Self.content(slots: [1: [UInt8](repeating: 5, count: 32)], history: history)
        let bytes = KeyRing.encode(ring)
        #expect(bytes[0] == KeyRing.historySchema)
        #expect(KeyRing.decode(bytes) == ring)

        #expect(KeyRing.decode(bytes + [0]) == nil, "nothing may follow")
        #expect(KeyRing.decode(Array(bytes.dropLast())) == nil, "a removed slot cut short")
        // A stamp for a slot the ring does not hold.
        let orphan = Self.content(slots: [2: [UInt8](repeating: 5, count: 32)], history: history)
        #expect(KeyRing.decode(KeyRing.encode(orphan)) == nil)
        // Schema 2 (no history) still reads, as before.
        var settingsOnly = ring
        settingsOnly.history = nil
        #expect(KeyRing.encode(settingsOnly)[0] == KeyRing.settingsSchema)
        #expect(KeyRing.decode(KeyRing.encode(settingsOnly)) == settingsOnly)
    }

    @Test func everyOwnerWriteKeepsTheStampsOfWhatItChanged() throws {
        let t = try TestVault()
        let owner = try t.open()
        func history() throws -> KeyRingHistory {
            try owner.read { try owner.storedRingHistory() }
        }
        #expect(try history() == KeyRingHistory(), "init's slot 1 is as old as the vault: unstamped")
        let slot = try owner.addPassphraseSlot(passphrase: secret("another one"), kdf: TestKDF.fast, label: nil)
        let added = try #require(try history().slots[slot])
        _ = try owner.add(TestVault.glasses(patient: "Ana"))
        #expect(try history().slots[slot] == added, "a write that leaves the slot keeps its stamp")
        #expect(try history().settings.isEmpty)
        try owner.setAssumedValidity(try #require(AssumedValidity(parsing: "glasses=2y")))
        let setting = try #require(try history().settings[.assumedValidity])
        #expect(setting.clock > added.clock)
        let before = try owner.read {
            KeyRing.content(header: try owner.store.header(), slots: try owner.store.keySlots())
        }
        try owner.removeKeySlot(slot)
        let after = try history()
        let removedHash = try #require(before.slots[slot])
        #expect(after.slots[slot] == nil)
        #expect(after.removedSlots == [removedHash])
        #expect(try owner.check(readData: false).isClean)
    }
}
