import RxCrypto
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
enum KeyRing {
    static let schema: UInt8 = 1

    struct Content: Equatable {
        var maxAttachmentBytes: Int
        /// Slot id -> hash of what the owner wrote there (slot 1: the header's key fields).
        var slots: [Int: [UInt8]]
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
    static func content(header: VaultHeaderRecord, slots: [KeySlotRecord]) -> Content {
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
        return Content(maxAttachmentBytes: header.maxAttachmentBytes, slots: hashes)
    }

    /// `u8 schema | u64 max attachment bytes | u32 n | n × (u64 slot id | 32 hash)`, slots by id.
    static func encode(_ content: Content) -> [UInt8] {
        var out: [UInt8] = [schema]
        out += AuditLog.bigEndian(content.maxAttachmentBytes)
        let n = content.slots.count
        out += [
            UInt8(truncatingIfNeeded: n >> 24), UInt8(truncatingIfNeeded: n >> 16), UInt8(truncatingIfNeeded: n >> 8),
            UInt8(truncatingIfNeeded: n)
        ]
        for (id, hash) in content.slots.sorted(by: { $0.key < $1.key }) { out += AuditLog.bigEndian(id) + hash }
        return out
    }

    static func decode(_ bytes: [UInt8]) -> Content? {
        guard bytes.count >= 13, bytes[0] == schema else { return nil }
        func integer(_ at: Int, _ width: Int) -> Int { bytes[at..<at + width].reduce(0) { $0 << 8 | Int($1) } }
        let n = integer(9, 4)
        guard n <= KeySlot.maximumID, bytes.count == 13 + n * 40 else { return nil }
        var slots: [Int: [UInt8]] = [:]
        for i in 0..<n {
            let at = 13 + i * 40
            slots[integer(at, 8)] = Array(bytes[at + 8..<at + 40])
        }
        return Content(maxAttachmentBytes: integer(1, 8), slots: slots)
    }

    static func macMessage(vaultID: [UInt8], counter: Int, content: [UInt8]) -> [UInt8] {
        AssociatedData.build(.keyRing, [.bytes(vaultID), .int(counter), .bytes(content)])
    }

    /// The ring row for what the file holds now, written with the state root's `counter`.
    static func record(header: VaultHeaderRecord, slots: [KeySlotRecord], counter: Int, key: SecretBytes) throws
        -> KeyRingRecord
    {
        let content = encode(content(header: header, slots: slots))
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
