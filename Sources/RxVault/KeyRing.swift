import RxCrypto
import RxModel
import RxStore

/// The owner's commitment to the ways into the vault and the header's settings (format 4,
/// `key_ring`; docs/format.md, "Format 4: key slots").
///
/// Key slots and the attachment size limit are read before any key is known, so they cannot be
/// authenticated by what they unlock. The owner writes, at every owner write, the list of slots
/// it holds current (a hash of each slot's row) and the limit, MAC'd under the state sub-key
/// with the state root's write counter: a slot added by someone without the key, a removed slot
/// put back from an older copy, a slot deleted or a limit edited shows at the owner's next
/// command and in `check`, and the ring itself cannot be swapped for an older one without the
/// state root going back with it (which the rollback anchor catches).
///
/// Format 7 (ring schema 2) adds the `assumed-validity` setting, held here and nowhere else:
/// unlike the limit it is never needed before the key is known, so it has no header column to
/// check against; the ring's MAC alone says it is the owner's, as it is now (an edit of it is a
/// ring that does not verify, at the next owner command and in `check`).
///
/// Format 8 (ring schema 3) adds, after the setting, the stamps of the slots and settings and
/// the hashes of the slots removed (`KeyRingHistory`), which `rxvault merge` decides them by.
enum KeyRing {
    static let schema: UInt8 = 1
    /// Format 7: the assumed validity follows the slots.
    static let settingsSchema: UInt8 = 2
    /// Format 8: the stamps and removed slots follow the assumed validity.
    static let historySchema: UInt8 = 3
    /// Longest setting text the ring holds (`glasses=100y,contacts=100y` is 26 bytes).
    static let maxSettingLength = 256

    struct Content: Equatable {
        var maxAttachmentBytes: Int
        /// Slot id -> hash of what the owner wrote there (slot 1: the header's key fields).
        var slots: [Int: [UInt8]]
        /// Format 7: the `assumed-validity` setting (`AssumedValidity.none` when unset); nil in
        /// a ring of schema 1 (formats 4 to 6).
        var assumedValidity: AssumedValidity? = nil
        /// Format 8: which write made each slot and setting, and the slots removed; nil in a
        /// ring of schema 1 or 2 (formats 4 to 7, and format-8 rings written before it).
        var history: KeyRingHistory? = nil
    }

    static func slotHash(
        id: Int, kind: String, algorithm: String, opsLimit: UInt64, memLimit: UInt64, salt: [UInt8],
        wrapped: [UInt8], info: [UInt8]
    ) -> [UInt8] {
        SHA256.hash(
            AssociatedData.build(
                .keyRing,
                [
                    .int(id), .text(kind), .text(algorithm), .integer(opsLimit),
                    .integer(memLimit), .bytes(salt), .bytes(wrapped), .bytes(info)
                ]))
    }

    /// What the file holds now, in the ring's terms.
    static func content(
        header: VaultHeaderRecord, slots: [KeySlotRecord], assumedValidity: AssumedValidity? = nil
    ) -> Content {
        var hashes: [Int: [UInt8]] = [:]
        if !header.wrappedRootKey.isEmpty {
            hashes[1] = slotHash(
                id: 1, kind: KeySlot.Kind.passphrase.rawValue, algorithm: header.kdfAlgorithm,
                opsLimit: header.kdfOpsLimit,
                memLimit: header.kdfMemLimit, salt: header.kdfSalt, wrapped: header.wrappedRootKey, info: [])
        }
        for slot in slots {
            hashes[slot.id] = slotHash(
                id: slot.id, kind: slot.kind, algorithm: slot.kdfAlgorithm, opsLimit: slot.kdfOpsLimit,
                memLimit: slot.kdfMemLimit, salt: slot.kdfSalt, wrapped: slot.wrappedRootKey, info: slot.info)
        }
        return Content(maxAttachmentBytes: header.maxAttachmentBytes, slots: hashes, assumedValidity: assumedValidity)
    }

    /// `u8 schema | u64 max attachment bytes | u32 n | n × (u64 slot id | 32 hash)`, slots by id;
    /// schema 2 (format 7) then `| u16 length | the assumed validity as text` (`none` when unset);
    /// schema 3 (format 8) then the history (`KeyRingHistory.encoded`).
    static func encode(_ content: Content) -> [UInt8] {
        let history = content.assumedValidity == nil ? nil : content.history
        var out: [UInt8] = [
            content.assumedValidity == nil ? schema : history == nil ? settingsSchema : historySchema
        ]
        out += AuditLog.bigEndian(content.maxAttachmentBytes)
        let n = content.slots.count
        out += [
            UInt8(truncatingIfNeeded: n >> 24), UInt8(truncatingIfNeeded: n >> 16), UInt8(truncatingIfNeeded: n >> 8),
            UInt8(truncatingIfNeeded: n)
        ]
        for (id, hash) in content.slots.sorted(by: { $0.key < $1.key }) { out += AuditLog.bigEndian(id) + hash }
        if let setting = content.assumedValidity {
            let text = Array(setting.description.utf8)
            out += [UInt8(truncatingIfNeeded: text.count >> 8), UInt8(truncatingIfNeeded: text.count)] + text
        }
        if let history { out += history.encoded() }
        return out
    }

    static func decode(_ bytes: [UInt8]) -> Content? {
        guard bytes.count >= 13, (schema...historySchema).contains(bytes[0]) else { return nil }
        func integer(_ at: Int, _ width: Int) -> Int { bytes[at..<at + width].reduce(0) { $0 << 8 | Int($1) } }
        let n = integer(9, 4)
        let slotsEnd = 13 + n * 40
        guard n <= KeySlot.maximumID else { return nil }
        guard bytes.count >= slotsEnd else { return nil }
        var slots: [Int: [UInt8]] = [:]
        for i in 0..<n {
            let at = 13 + i * 40
            slots[integer(at, 8)] = Array(bytes[at + 8..<at + 40])
        }
        var assumedValidity: AssumedValidity? = nil
        var history: KeyRingHistory? = nil
        if bytes[0] == schema {
            guard bytes.count == slotsEnd else { return nil }
        } else {
            // Exact lengths, as schema 1's: nothing unread may follow.
            guard bytes.count >= slotsEnd + 2 else { return nil }
            let length = integer(slotsEnd, 2)
            let textEnd = slotsEnd + 2 + length
            guard length <= maxSettingLength, bytes.count >= textEnd,
                bytes[0] == historySchema || bytes.count == textEnd,
                let text = String(validating: bytes[(slotsEnd + 2)..<textEnd], as: UTF8.self),
                let setting = AssumedValidity(parsing: text), setting.description == text
            else { return nil }
            assumedValidity = setting
            if bytes[0] == historySchema {
                guard let decoded = KeyRingHistory(decoding: bytes[textEnd...], slotIDs: Set(slots.keys)) else {
                    return nil
                }
                history = decoded
            }
        }
        return Content(
            maxAttachmentBytes: integer(1, 8), slots: slots, assumedValidity: assumedValidity, history: history)
    }

    static func macMessage(vaultID: [UInt8], counter: Int, content: [UInt8]) -> [UInt8] {
        AssociatedData.build(.keyRing, [.bytes(vaultID), .int(counter), .bytes(content)])
    }

    /// The ring row for what the file holds now, written with the state root's `counter`.
    /// `assumedValidity`: the setting, from format 7 (nil before).
    /// `history`: format 8's stamps and removed slots (nil before).
    static func record(
        header: VaultHeaderRecord, slots: [KeySlotRecord], assumedValidity: AssumedValidity? = nil,
        history: KeyRingHistory? = nil, counter: Int, key: SecretBytes
    ) throws
        -> KeyRingRecord
    {
        var ring = content(header: header, slots: slots, assumedValidity: assumedValidity)
        ring.history = history
        let content = encode(ring)
        return KeyRingRecord(
            writeCounter: counter, content: content,
            mac: try MAC.authenticate(macMessage(vaultID: header.vaultID, counter: counter, content: content), key: key)
        )
    }

    /// What differs between the ring the owner wrote (`ring`, at state counter `counter`) and
    /// the file, in words; empty when they agree.
    static func findings(
        ring: KeyRingRecord?, counter: Int, header: VaultHeaderRecord, slots: [KeySlotRecord], key: SecretBytes
    ) -> [String] {
        guard let ring else {
            return ["the key ring (the owner's list of key slots and settings) was deleted from the file"]
        }
        guard ring.writeCounter == counter,
            MAC.verify(
                ring.mac, macMessage(vaultID: header.vaultID, counter: counter, content: ring.content), key: key),
            let expected = decode(ring.content)
        else {
            return [
                "the key ring (the owner's list of key slots and settings) is not the one the owner wrote last (put back from an older copy, or forged)"
            ]
        }
        let actual = content(header: header, slots: slots)
        var out: [String] = []
        if actual.maxAttachmentBytes != expected.maxAttachmentBytes {
            out.append(
                "the header's attachment size limit (\(actual.maxAttachmentBytes) bytes) is not the one the owner set (\(expected.maxAttachmentBytes) bytes): the header was edited"
            )
        }
        for id in Set(expected.slots.keys).union(actual.slots.keys).sorted() {
            switch (expected.slots[id], actual.slots[id]) {
            case (nil, _?):
                out.append(
                    "key slot \(id) is not one the owner added (written by someone without the key, or a removed slot put back from an older copy)"
                )
            case (_?, nil):
                out.append("key slot \(id) was deleted from the file")
            case (let e?, let a?) where e != a:
                out.append("key slot \(id) is not the one the owner wrote (altered, or put back from an older copy)")
            default:
                break
            }
        }
        return out
    }
}
