import Foundation
import RxCrypto
import RxModel
import RxTestSupport
import Testing

@testable import RxVault

/// What `serve` writes where it may only read and append (a vault in PostgreSQL under the role
/// docs/deploy.md sets up): its reads and access requests as client-form entries, authenticated
/// from the owner's side, which the owner's next write countersigns. On a file here: the vault
/// code is the engine's either way.
extension AuditAuthenticationTests {
    @Test func readsAServerAppendsAreTheClientsAndTheNextOwnerWriteCountersignsThem() throws {
        let s = try setUp()
        let before = try s.owner.writeCounter()
        let keys = [s.shop.id: s.shop.recipient.publicKey, s.family.id: s.family.recipient.publicKey]
        try s.owner.appendServedReads(
            [read(by: s.shop, of: s.glasses), read(by: s.family, of: s.contacts)], clientKeys: keys)
        #expect(try s.owner.writeCounter() == before, "an append is no owner write")
        #expect(try unsigned(s.t).count == 2)
        let pending = try s.owner.check(readData: false)
        #expect(pending.isClean, "\(pending.stages.flatMap(\.errors))")
        #expect(pending.stages.last!.notes.first?.contains("2 entries written by clients await") == true)
        // The newest-first reader takes them as they are (`grants` shows each last read).
        var reads: [String] = []
        #expect(
            try s.owner.reading { read in
                try s.owner.vouchedAuditEvents([.read], in: read) {
                    reads.append($0.actor)
                    return true
                }
            })
        #expect(reads.prefix(2) == [s.family.id.hex, s.shop.id.hex])
        let swept = try s.owner.sweep()
        #expect(swept.countersigned == 2 && swept.refused == 0 && swept.expiredGrants == 0)
        #expect(try unsigned(s.t).isEmpty)
        #expect(try s.owner.check(readData: false).isClean)
    }

    /// A read the server appends for a client under another client's key is the forgery it
    /// would be from anyone else: refused, never countersigned.
    @Test func aServedReadUnderTheWrongClientsKeyIsRefused() throws {
        let s = try setUp()
        try s.owner.appendServedReads(
            [read(by: s.shop, of: s.glasses)], clientKeys: [s.shop.id: s.family.recipient.publicKey])
        #expect(try auditErrors(s.owner).contains { $0.contains("not authenticated by that client's key") })
        let swept = try s.owner.sweep()
        #expect(swept.countersigned == 0 && swept.refused == 1)
    }

    /// An access request the server took is appended the same way: the owner sees it waiting at
    /// once, answers it with an owner write (which countersigns it first), and the client learns
    /// the answer.
    @Test func anAccessRequestAServerAppendsIsTheOwnersToAnswer() throws {
        let s = try setUp()
        let before = try s.owner.writeCounter()
        let asked = try s.owner.requestAccess(
            for: s.shop, reason: "ordering contact lenses", patient: nil, kinds: [.contacts], ownerWrite: false)
        #expect(try s.owner.writeCounter() == before)
        #expect(try s.owner.accessRequests().map(\.id) == [asked.id])
        #expect(try s.owner.accessRequestsFromWholeLog().map(\.status) == [.pending])
        #expect(try s.owner.check(readData: false).isClean)
        _ = try s.owner.approve(asked, prescriptions: [s.contacts.id], expires: nil, attachments: false)
        #expect(try unsigned(s.t).isEmpty)
        #expect(try s.owner.accessRequests(client: s.shop).first?.status == .approved)
        #expect(try s.owner.check(readData: false).isClean)
    }

    /// A read served in the second before its client's removal and appended just after it names
    /// a client whose key is gone: a note, not an error, and never countersigned. One dated after
    /// the removal is the forgery it looks like.
    @Test func aReadServedJustBeforeItsClientsRemovalIsANoteNotAForgery() throws {
        let s = try setUp()
        let keys = [s.shop.id: s.shop.recipient.publicKey]
        try s.owner.removeClient(s.shop)
        try s.owner.appendServedReads([read(by: s.shop, of: s.glasses)], clientKeys: keys)
        let report = try s.owner.check(readData: false)
        #expect(report.isClean, "\(report.stages.flatMap(\.errors))")
        #expect(
            report.stages.flatMap(\.notes).contains { $0.contains("dated around its removal") },
            "\(report.stages.flatMap(\.notes))")
        #expect(try s.owner.sweep().refused == 1)
        #expect(try s.owner.check(readData: false).isClean)
        let late = "2026-06-15T13:00:00Z"
        try s.owner.appendServedReads([read(by: s.shop, of: s.glasses, time: late)], clientKeys: keys)
        #expect(try auditErrors(s.owner).contains { $0.contains("not a registered client") })
    }

    /// An entry with a valid owner MAC after the owner's head is what another holder of the
    /// vault's keys writes (a `serve` whose role may only append): `check` reports it, and every
    /// owner write refuses the vault rather than move the head past it and vouch for it.
    @Test func anOwnerMACAfterTheHeadIsNotTheOwners() throws {
        let s = try setUp()
        try s.owner.appendServedReads(
            [read(by: s.shop, of: s.glasses)], clientKeys: [s.shop.id: s.shop.recipient.publicKey])
        let seq = try s.t.lastSequence()
        let row = try #require(try s.owner.store.auditEntries(after: seq - 1).first)
        let mac = try AuditLog.entryMAC(sequence: seq, hash: row.hash, key: s.owner.auditMACKey)
        try s.t.raw().prepare("UPDATE audit_entry SET mac = ? WHERE seq = ?").run([.blob(mac), .integer(Int64(seq))])
        #expect(try auditErrors(s.owner).contains { $0.contains("lies after the owner's head") })
        #expect(throws: VaultError.self) { try s.owner.sweep() }
        #expect(try auditErrors(s.owner).contains { $0.contains("lies after the owner's head") })
    }

    /// A client holding the file can append its own access requests in the client form; only
    /// one the server could have taken is countersigned (the checks `requestAccess` makes).
    @Test func anAccessRequestTheServerWouldRefuseIsNeverCountersigned() throws {
        let s = try setUp()
        let key = try s.owner.clientEntryKey(publicKey: s.shop.recipient.publicKey)
        func request(_ detail: String, time: String = "2026-06-15T12:00:00Z") throws {
            try s.owner.store.write {
                try AuditLog.appendClientEntry(
                    AuditEvent(
                        time: time, actor: s.shop.id.hex, action: .accessRequested, client: s.shop.id.hex,
                        detail: detail),
                    store: s.owner.store, vaultID: s.owner.header.vaultID,
                    auditPublicKey: s.owner.header.auditPublicKey, key: key)
            }
        }
        let good =
            #"{"expires":"2026-06-22T12:00:00Z","id":"0123456789abcdef","kinds":["contacts"],"reason":"new lenses"}"#
        try request(good)
        #expect(try auditErrors(s.owner).isEmpty)
        try request(#"{"expires":"2099-01-01T00:00:00Z","id":"0123456789abcdea","kinds":[],"reason":"forever"}"#)
        try request(#"{"expires":"2026-06-22T12:00:00Z","id":"not-an-id","kinds":[],"reason":"x"}"#)
        try request(#"{"expires":"2026-06-22T12:00:00Z","id":"0123456789abcdeb","kinds":["monocle"],"reason":"x"}"#)
        try request("not a request")
        let errors = try auditErrors(s.owner)
        #expect(errors.count == 4, "\(errors)")
        #expect(errors.allSatisfy { $0.contains("is an access request by client") }, "\(errors)")
        let swept = try s.owner.sweep()
        #expect(swept.countersigned == 1 && swept.refused == 4)
        #expect(try s.owner.accessRequests().map(\.id) == ["0123456789abcdef"])
    }
}
