import Foundation
import RxCrypto
import RxModel
import RxStore
import RxTestSupport
import Testing

@testable import RxVault

/// Client audit entries must be authenticated to the client they name: someone with
/// write access (another client, holding its own identity and the file's public data) cannot log
/// a read in another client's name, and the owner never countersigns what does not verify.
@Suite struct AuditAuthenticationTests {
    struct Setup {
        let t: TestVault
        let owner: Vault
        let glasses: PrescriptionRecord
        let contacts: PrescriptionRecord
        let shop: ClientSummary
        let shopIdentity: AgeIdentity
        let family: ClientSummary
        let familyIdentity: AgeIdentity
    }

    /// Two clients: the shop is granted the glasses, the family the contacts.
    func setUp() throws -> Setup {
        let t = try TestVault()
        let owner = try t.open()
        let (glasses, _) = try owner.add(TestVault.glasses(patient: "Ada"))
        let (contacts, _) = try owner.add(TestVault.glasses(patient: "Bea"))
        let shopIdentity = try AgeIdentity.generate()
        let familyIdentity = try AgeIdentity.generate()
        let shop = try owner.addClient(name: "shop", recipient: shopIdentity.recipient)
        let family = try owner.addClient(name: "family", recipient: familyIdentity.recipient)
        try owner.grant(shop, [glasses.id], expires: nil, includeAttachments: true)
        try owner.grant(family, [contacts.id], expires: nil, includeAttachments: true)
        return Setup(
            t: t, owner: owner, glasses: glasses, contacts: contacts, shop: shop, shopIdentity: shopIdentity,
            family: family, familyIdentity: familyIdentity)
    }

    func read(by client: ClientSummary, of prescription: PrescriptionRecord, time: String = "2026-06-15T12:00:00Z")
        -> AuditEvent
    {
        AuditEvent(
            time: time, actor: client.id.hex, action: .read, client: client.id.hex,
            prescriptions: [prescription.id.hex], detail: "show")
    }

    func unsigned(_ t: TestVault) throws -> Set<Int> {
        var seqs: Set<Int> = []
        try t.raw().prepare("SELECT seq FROM audit_entry WHERE mac IS NULL").forEach { seqs.insert(Int($0.int(0))) }
        return seqs
    }

    func auditErrors(_ vault: Vault) throws -> [String] {
        try vault.check(readData: false).stages.first { $0.name.hasPrefix("audit") }!.errors
    }

    /// A trigger for the owner's countersigning: any owner write.
    func ownerWrites(_ s: Setup) throws { _ = try s.owner.add(TestVault.glasses(patient: "trigger")) }

    @Test func aGenuineClientReadIsCountersigned() throws {
        let s = try setUp()
        let view = try ClientVault.open(at: s.t.path, identity: s.shopIdentity, clock: .fixed(today: TestVault.today))
        _ = try view.prescription(s.glasses.id)
        let seq = try s.t.lastSequence()
        #expect(try unsigned(s.t) == [seq])
        let pending = try s.owner.check(readData: false)
        #expect(pending.isClean, "\(pending.stages.flatMap(\.errors))")
        #expect(pending.stages.last!.notes.first?.contains("1 entries written by clients await") == true)
        try ownerWrites(s)
        #expect(try unsigned(s.t).isEmpty)
        #expect(try s.owner.check(readData: false).isClean)
        let record = try #require(try s.owner.log().first { $0.sequence == seq })
        #expect(record.countersigned && record.isVerified && record.event.actor == s.shop.id.hex)
    }

    /// The shop, holding its own identity, logs a read in the family's name, authenticated with
    /// its own key: it does not verify under the family's key.
    @Test func aReadAuthenticatedWithAnotherClientsKeyIsRefused() throws {
        let s = try setUp()
        let store = try SQLiteRecordStore(openingAt: s.t.path)
        try store.write {
            try AuditLog.appendClientRead(
                read(by: s.family, of: s.contacts), store: store, vaultID: s.owner.header.vaultID,
                auditPublicKey: s.owner.header.auditPublicKey, identity: s.shopIdentity)
        }
        let forged = try s.t.lastSequence()
        try ownerWrites(s)
        #expect(try unsigned(s.t) == [forged], "the owner countersigned a read the family never made")
        let errors = try auditErrors(s.owner)
        #expect(
            errors == [
                "audit entry \(forged) claims to be a read by client \(s.family.id.hex.prefix(8)) but is not authenticated by that client's key at this place in the log (forged, copied or altered)"
            ],
            "\(errors)")
        let record = try #require(try s.owner.log().first { $0.sequence == forged })
        #expect(!record.countersigned && !record.isVerified)
        #expect(
            try s.owner.grants().first { $0.client.id == s.family.id }?.lastRead == nil,
            "a forged read is no one's last read")
    }

    /// What any writer can make: the event sealed to the audit key in the plain form (the form
    /// rxvault's clients wrote before they authenticated their entries), in another's name.
    @Test func anUnauthenticatedReadInAnotherClientsNameIsRefused() throws {
        let s = try setUp()
        let forged = try s.t.forgeAuditEntry(
            Array(try JSONEncoderSorted.encode(read(by: s.family, of: s.glasses, time: "2025-01-01T00:00:00Z"))))
        // A genuine read after it is still countersigned.
        let view = try ClientVault.open(at: s.t.path, identity: s.shopIdentity, clock: .fixed(today: TestVault.today))
        _ = try view.list()
        let genuine = try s.t.lastSequence()
        try ownerWrites(s)
        #expect(try unsigned(s.t) == [forged])
        let errors = try auditErrors(s.owner)
        #expect(
            errors.count == 1
                && errors[0].hasPrefix(
                    "audit entry \(forged) claims to be a read by client \(s.family.id.hex.prefix(8)) but is not authenticated by any client's key"
                ),
            "\(errors)")
        let log = try s.owner.log()
        #expect(log.filter { !$0.isVerified }.map(\.sequence) == [forged])
        #expect(log.first { $0.sequence == genuine }?.countersigned == true)
    }

    @Test func anEntryNamingARemovedClientIsRefused() throws {
        let s = try setUp()
        // The family's identity still works for the view it opened before its removal. Its read
        // is dated five minutes after the removal: one dated up to a minute after it would be
        // taken for what a server writes for a read it served just before (a note:
        // ServedAppendTests).
        let later = VaultClock(today: { TestVault.today }, timestamp: { "\(TestVault.today)T12:05:00Z" })
        let view = try ClientVault.open(at: s.t.path, identity: s.familyIdentity, clock: later)
        try s.owner.removeClient(s.family)
        _ = try view.list()
        let late = try s.t.lastSequence()
        try ownerWrites(s)
        #expect(try unsigned(s.t) == [late])
        let errors = try auditErrors(s.owner)
        #expect(
            errors == [
                "audit entry \(late) claims to be a read by client \(s.family.id.hex.prefix(8)), which is not a registered client (removed, or never added)"
            ], "\(errors)")
    }

    /// A client's key authenticates only its own reads of what it was granted, dated now.
    @Test func aClientCannotLogReadsOfWhatItWasNeverGrantedOrFromTheFuture() throws {
        let s = try setUp()
        let store = try SQLiteRecordStore(openingAt: s.t.path)
        func append(_ event: AuditEvent) throws -> Int {
            try store.write {
                try AuditLog.appendClientRead(
                    event, store: store, vaultID: s.owner.header.vaultID,
                    auditPublicKey: s.owner.header.auditPublicKey, identity: s.shopIdentity)
            }
            return try s.t.lastSequence()
        }
        let ungranted = try append(read(by: s.shop, of: s.contacts))
        let future = try append(read(by: s.shop, of: s.glasses, time: "2026-06-17T12:00:00Z"))
        let skewed = try append(read(by: s.shop, of: s.glasses, time: "2026-06-16T11:00:00Z"))
        try ownerWrites(s)
        #expect(try unsigned(s.t) == [ungranted, future])
        let errors = try auditErrors(s.owner)
        let shop = s.shop.id.hex.prefix(8)
        #expect(
            errors == [
                "audit entry \(ungranted) is a read by client \(shop) of prescription \(s.contacts.id.short), which was never granted to it",
                "audit entry \(future) is a read by client \(shop) dated 2026-06-17T12:00:00Z, in the future"
            ], "\(errors)")
        #expect(
            try s.owner.log().first { $0.sequence == skewed }?.countersigned == true,
            "a clock a few hours ahead is tolerated")
    }

    /// A pending client entry altered (and the chain recomputed after it) or copied to the end.
    @Test func tamperingWithAPendingClientEntryIsDetected() throws {
        let s = try setUp()
        let view = try ClientVault.open(at: s.t.path, identity: s.shopIdentity, clock: .fixed(today: TestVault.today))
        _ = try view.prescription(s.glasses.id)
        let genuine = try s.t.lastSequence()
        let db = try s.t.raw()
        let sealed = try db.blob("SELECT entry FROM audit_entry WHERE seq = ?", [.integer(Int64(genuine))])
        // Replaced by a re-sealed copy whose authenticator is flipped (the chain recomputed).
        try db.execute("DELETE FROM audit_entry WHERE seq = \(genuine)")
        let json = Array(try JSONEncoderSorted.encode(read(by: s.shop, of: s.glasses)))
        let altered = try s.t.forgeAuditEntry(
            [AuditPlaintext.clientTag] + [UInt8](repeating: 7, count: MAC.length) + json)
        #expect(altered == genuine)
        // And the original sealed bytes appended again after it.
        let replay = try s.t.appendRawAuditEntry(sealed)
        try ownerWrites(s)
        #expect(try unsigned(s.t) == [altered, replay])
        let errors = try auditErrors(s.owner)
        #expect(
            errors.count == 2
                && errors.allSatisfy {
                    $0.contains("is not authenticated by that client's key at this place in the log")
                }, "\(errors)")
    }

    /// An unsigned entry the owner's head covers, whose MAC was deleted: reported, and `log`
    /// flags it instead of refusing the whole log.
    @Test func aCountersignedEntryThatLostItsMACIsReported() throws {
        let s = try setUp()
        let view = try ClientVault.open(at: s.t.path, identity: s.shopIdentity, clock: .fixed(today: TestVault.today))
        _ = try view.list()
        let genuine = try s.t.lastSequence()
        try ownerWrites(s)
        try s.t.raw().execute("UPDATE audit_entry SET mac = NULL WHERE seq = \(genuine)")
        #expect(try auditErrors(s.owner) == ["audit entry \(genuine) lost its MAC (the owner's head covers it)"])
        #expect(
            try s.owner.log().first { $0.sequence == genuine }?.problem == "lost its MAC (the owner's head covers it)")
    }
}

extension TestVault {
    func lastSequence() throws -> Int { Int(try raw().integer("SELECT max(seq) FROM audit_entry") ?? 0) }

    /// Seals `plaintext` to the vault's audit key and appends it, chained on correctly, with no
    /// MAC: what anyone with write access and the file's public data can do.
    @discardableResult
    func forgeAuditEntry(_ plaintext: [UInt8]) throws -> Int {
        let auditKey = try raw().blob("SELECT audit_public_key FROM vault_header")
        return try appendRawAuditEntry(try X25519.seal(plaintext, to: auditKey))
    }

    @discardableResult
    func appendRawAuditEntry(_ sealed: [UInt8]) throws -> Int {
        let db = try raw()
        let sequence = try lastSequence() + 1
        let previous =
            sequence == 1
            ? AuditLog.zeroHash
            : try db.blob("SELECT hash FROM audit_entry WHERE seq = ?", [.integer(Int64(sequence - 1))])
        try db.prepare("INSERT INTO audit_entry (seq, entry, hash, mac) VALUES (?, ?, ?, NULL)")
            .run([
                .integer(Int64(sequence)), .blob(sealed),
                .blob(AuditLog.hash(previous: previous, sequence: sequence, sealed: sealed))
            ])
        return sequence
    }
}
