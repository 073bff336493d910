import Foundation
import RxCrypto
import RxModel
import RxStore
import RxTestSupport
import Testing

@testable import RxVault

/// `grants` and `requests` read the audit log newest first and only as far as they need: a read older than a large entry is still found, a grant never read is "never", the answer
/// is the whole review's, and tampering with what they read is still refused.
@Suite struct AuditReadingTests {
    struct Setup {
        let t: TestVault
        let owner: Vault
        let glasses: PrescriptionRecord
        let contacts: PrescriptionRecord
        let unread: PrescriptionRecord
        let shop: ClientSummary
        let shopIdentity: AgeIdentity
        let family: ClientSummary
        let familyIdentity: AgeIdentity
    }

    /// The shop is granted three prescriptions; the family one of them.
    func setUp() throws -> Setup {
        let t = try TestVault()
        let owner = try t.open()
        let (glasses, _) = try owner.add(TestVault.glasses(patient: "Ada"))
        let (contacts, _) = try owner.add(TestVault.glasses(patient: "Bea"))
        let (unread, _) = try owner.add(TestVault.glasses(patient: "Cy"))
        let shopIdentity = try AgeIdentity.generate()
        let familyIdentity = try AgeIdentity.generate()
        let shop = try owner.addClient(name: "shop", recipient: shopIdentity.recipient)
        let family = try owner.addClient(name: "family", recipient: familyIdentity.recipient)
        try owner.grant(shop, [glasses.id, contacts.id, unread.id], expires: nil, includeAttachments: true)
        try owner.grant(family, [glasses.id], expires: nil, includeAttachments: true)
        return Setup(
            t: t, owner: owner, glasses: glasses, contacts: contacts, unread: unread, shop: shop,
            shopIdentity: shopIdentity,
            family: family, familyIdentity: familyIdentity)
    }

    /// A read logged by the client holding `identity`, as its rxvault logs it (pending until the owner's next write).
    func logRead(
        _ s: Setup, by client: ClientSummary, identity: AgeIdentity, of prescriptions: [PrescriptionRecord],
        time: String
    ) throws {
        let store = try SQLiteRecordStore(openingAt: s.t.path)
        try store.write {
            try AuditLog.appendClientRead(
                AuditEvent(
                    time: time, actor: client.id.hex, action: .read, client: client.id.hex,
                    prescriptions: prescriptions.map(\.id.hex), detail: "show"),
                store: store, vaultID: s.owner.header.vaultID, auditPublicKey: s.owner.header.auditPublicKey,
                identity: identity)
        }
    }

    /// An owner entry naming `count` prescriptions, as an import or export of a large vault writes.
    func logLargeExport(_ s: Setup, count: Int = 20_000) throws {
        let ids = (0..<count).map { _ in PrescriptionID.random().hex }
        try s.owner.recordExport(prescriptions: ids, attachments: [], format: "json", client: nil, recipients: nil)
    }

    /// "client-name prescription-short" -> last read ("never" for none), as `grants` shows them.
    func lastReads(_ s: Setup) throws -> [String: String] {
        Dictionary(
            uniqueKeysWithValues: try s.owner.grants().map {
                ("\($0.client.name) \($0.prescriptionID.short)", $0.lastRead ?? "never")
            })
    }

    /// What the whole review (every entry, oldest first) gives for the same grants.
    func wholeLogLastReads(_ s: Setup) throws -> [String: String] {
        let whole = try s.owner.lastReadTimesFromWholeLog()
        return Dictionary(
            uniqueKeysWithValues: try s.owner.grants().map {
                (
                    "\($0.client.name) \($0.prescriptionID.short)",
                    whole["\($0.client.id.hex) \($0.prescriptionID.hex)"] ?? "never"
                )
            })
    }

    func integrityError(_ body: () throws -> Void) -> String? {
        do { try body() } catch VaultError.integrity(let message) { return message } catch {
            return "not an integrity error: \(error)"
        }
        return nil
    }

    @Test func aReadOlderThanALargeEntryIsStillFoundAndAnUnreadGrantIsNever() throws {
        let s = try setUp()
        try logRead(s, by: s.shop, identity: s.shopIdentity, of: [s.glasses, s.contacts], time: "2026-06-01T09:00:00Z")
        try logRead(s, by: s.shop, identity: s.shopIdentity, of: [s.glasses], time: "2026-06-02T09:00:00Z")
        try logRead(s, by: s.family, identity: s.familyIdentity, of: [s.glasses], time: "2026-06-03T09:00:00Z")
        try logLargeExport(s) // countersigns the reads, then names 20,000 prescriptions after them
        var expected = [
            "shop \(s.glasses.id.short)": "2026-06-02T09:00:00Z", "shop \(s.contacts.id.short)": "2026-06-01T09:00:00Z",
            "shop \(s.unread.id.short)": "never", "family \(s.glasses.id.short)": "2026-06-03T09:00:00Z"
        ]
        #expect(try lastReads(s) == expected)
        #expect(try wholeLogLastReads(s) == expected)
        // A read after the head (not countersigned yet) is the newest; another large entry after it.
        try logRead(s, by: s.shop, identity: s.shopIdentity, of: [s.contacts], time: "2026-06-14T09:00:00Z")
        expected["shop \(s.contacts.id.short)"] = "2026-06-14T09:00:00Z"
        #expect(try lastReads(s) == expected)
        #expect(try wholeLogLastReads(s) == expected)
        try logLargeExport(s)
        #expect(try lastReads(s) == expected)
        #expect(try wholeLogLastReads(s) == expected)
        // One client's and one prescription's grants read the same.
        #expect(try s.owner.grants(client: s.family).map(\.lastRead) == ["2026-06-03T09:00:00Z"])
        #expect(try s.owner.grants(prescription: s.contacts.id).map(\.lastRead) == ["2026-06-14T09:00:00Z"])
    }

    /// A read of a prescription revoked and granted again, before the revoke, is still its last
    /// read (as the whole review says); the unread grant is still "never".
    @Test func aReadBeforeARevokeAndRegrantCounts() throws {
        let s = try setUp()
        try logRead(s, by: s.shop, identity: s.shopIdentity, of: [s.contacts], time: "2026-06-01T09:00:00Z")
        try s.owner.revoke(s.shop, [s.contacts.id])
        try logLargeExport(s)
        try s.owner.grant(s.shop, [s.contacts.id], expires: nil, includeAttachments: false)
        #expect(try lastReads(s)["shop \(s.contacts.id.short)"] == "2026-06-01T09:00:00Z")
        #expect(try lastReads(s) == wholeLogLastReads(s))
    }

    /// Pending reads the whole review refuses (in another client's name; of a prescription never
    /// granted to the client) are nobody's last read, and do not hide the genuine ones.
    @Test func refusedPendingReadsCountForNothing() throws {
        let s = try setUp()
        try logRead(s, by: s.shop, identity: s.shopIdentity, of: [s.glasses], time: "2026-06-01T09:00:00Z")
        try logLargeExport(s)
        // The shop, with its own key, in the family's name; and the family reading what it does not hold.
        try logRead(s, by: s.family, identity: s.shopIdentity, of: [s.glasses], time: "2026-06-10T09:00:00Z")
        try logRead(
            s, by: s.family, identity: s.familyIdentity, of: [s.glasses, s.contacts], time: "2026-06-11T09:00:00Z")
        try logRead(s, by: s.shop, identity: s.shopIdentity, of: [s.unread], time: "2026-06-12T09:00:00Z")
        let reads = try lastReads(s)
        #expect(reads["family \(s.glasses.id.short)"] == "never")
        #expect(reads["shop \(s.glasses.id.short)"] == "2026-06-01T09:00:00Z")
        #expect(reads["shop \(s.unread.id.short)"] == "2026-06-12T09:00:00Z")
        #expect(reads == (try wholeLogLastReads(s)))
    }

    /// A countersigned read whose sealed bytes are replaced by a newer forged read (its hash and
    /// MAC columns kept: the MAC covers the hash, not the bytes) breaks the chain: refused, not
    /// shown as the last read.
    @Test func aCountersignedEntryReplacedUnderItsHashIsRefused() throws {
        let s = try setUp()
        try logRead(s, by: s.shop, identity: s.shopIdentity, of: [s.glasses], time: "2026-06-01T09:00:00Z")
        try logLargeExport(s)
        let db = try s.t.raw()
        let read = Int(try #require(try db.integer("SELECT max(seq) FROM audit_entry")) - 1)
        let forged = AuditEvent(
            time: "2026-06-14T09:00:00Z", actor: s.shop.id.hex, action: .read, client: s.shop.id.hex,
            prescriptions: [s.glasses.id.hex], detail: "show")
        let auditKey = try db.blob("SELECT audit_public_key FROM vault_header")
        try db.prepare("UPDATE audit_entry SET entry = ? WHERE seq = ?")
            .run([
                .blob(try X25519.seal(Array(try JSONEncoderSorted.encode(forged)), to: auditKey)), .integer(Int64(read))
            ])
        #expect(
            integrityError { _ = try s.owner.grants() }
                == "audit entry \(read) was altered or an entry before it was removed")
        #expect(!(try s.owner.check(readData: false).isClean))
    }

    /// A MAC pasted onto a read the owner refused (so it would pass for countersigned) does not
    /// verify: refused, where the whole review used to take any MAC'd entry for the owner's.
    @Test func aMACAddedToARefusedReadIsRefused() throws {
        let s = try setUp()
        let forged = try s.t.forgeAuditEntry(
            Array(
                try JSONEncoderSorted.encode(
                    AuditEvent(
                        time: "2026-06-14T09:00:00Z", actor: s.shop.id.hex, action: .read, client: s.shop.id.hex,
                        prescriptions: [s.glasses.id.hex], detail: "show"))))
        try logLargeExport(s) // refuses it: it stays unsigned under the head
        #expect(try lastReads(s)["shop \(s.glasses.id.short)"] == "never")
        try s.t.raw().prepare("UPDATE audit_entry SET mac = ? WHERE seq = ?")
            .run([.blob([UInt8](repeating: 9, count: MAC.length)), .integer(Int64(forged))])
        #expect(integrityError { _ = try s.owner.grants() } == "audit entry \(forged) has a MAC that does not verify")
    }

    /// The same tampering, with an entry after the head that no client could have written: the
    /// newest-first reader cannot judge it and hands `grants` and `requests` to the whole-log
    /// review, which must refuse the altered log too (it checks the chain and every owner MAC
    /// first, as `log` does) instead of taking the pasted MAC for the owner's.
    @Test func tamperingIsRefusedWhenAnEntryAfterTheHeadSendsTheReadToTheWholeLog() throws {
        let s = try setUp()
        let read = Array(
            try JSONEncoderSorted.encode(
                AuditEvent(
                    time: "2026-06-14T09:00:00Z", actor: s.shop.id.hex, action: .read, client: s.shop.id.hex,
                    prescriptions: [s.glasses.id.hex], detail: "show")))
        let forged = try s.t.forgeAuditEntry(read)
        try logLargeExport(s) // refuses it: it stays unsigned under the head
        _ = try s.t.forgeAuditEntry(read) // after the head: not a genuine read
        #expect(try lastReads(s)["shop \(s.glasses.id.short)"] == "never")
        #expect(try s.owner.accessRequests().isEmpty)
        try s.t.raw().prepare("UPDATE audit_entry SET mac = ? WHERE seq = ?")
            .run([.blob([UInt8](repeating: 9, count: MAC.length)), .integer(Int64(forged))])
        for refusal in [
            integrityError { _ = try s.owner.grants() }, integrityError { _ = try s.owner.accessRequests() }
        ] {
            #expect(refusal?.contains("audit entry \(forged)") == true, "\(refusal ?? "accepted")")
        }
    }

    /// An entry deleted from under the head (the one `grants` needs, then the newest) is refused.
    @Test func aDeletedEntryIsRefused() throws {
        let s = try setUp()
        try logRead(s, by: s.shop, identity: s.shopIdentity, of: [s.glasses], time: "2026-06-01T09:00:00Z")
        try logLargeExport(s)
        let db = try s.t.raw()
        let last = Int(try #require(try db.integer("SELECT max(seq) FROM audit_entry")))
        try db.execute("DELETE FROM audit_entry WHERE seq = \(last - 1)")
        #expect(integrityError { _ = try s.owner.grants() } == "audit entry \(last - 1) is missing")
        try db.execute("DELETE FROM audit_entry WHERE seq = \(last)")
        #expect(integrityError { _ = try s.owner.grants() } == "audit entry \(last) is missing")
    }

    /// Every action as `AuditLog.encode` writes it starts with its "action" key, which is what
    /// lets an entry be skipped without decoding its list of prescriptions.
    @Test func theActionIsReadFromTheStartOfEveryEvent() throws {
        for action in AuditEvent.Action.allCases {
            let json = try AuditLog.encode(
                AuditEvent(
                    time: "2026-06-15T12:00:00Z", actor: "owner", action: action, client: "c",
                    prescriptions: ["p"], attachments: ["a"], detail: "d"))
            #expect(json.withUnsafeBytes { Vault.leadingAction($0[...]) } == action.rawValue)
        }
        #expect(
            Array(#"{"actor":"owner","action":"read"}"#.utf8).withUnsafeBytes { Vault.leadingAction($0[...]) } == nil)
        #expect(Array(#"{"action":"re\u0061d"}"#.utf8).withUnsafeBytes { Vault.leadingAction($0[...]) } == nil)
    }

    /// `requests` reads the same way: requests and answers older than a large entry, in order.
    @Test func requestsOlderThanALargeEntryAreFound() throws {
        let s = try setUp()
        let first = try s.owner.requestAccess(for: s.shop, reason: "new glasses", patient: nil, kinds: [])
        let second = try s.owner.requestAccess(for: s.family, reason: "contacts", patient: "Bea", kinds: [])
        try s.owner.deny(try s.owner.accessRequest(first.id))
        try logLargeExport(s)
        let requests = try s.owner.accessRequests()
        #expect(requests.map(\.id) == [second.id, first.id])
        #expect(requests.map(\.status) == [.pending, .denied])
        #expect(requests.map(\.id) == (try s.owner.accessRequestsFromWholeLog().reversed().map(\.id)))
        #expect(try s.owner.accessRequests(client: s.family).map(\.id) == [second.id])
    }
}
