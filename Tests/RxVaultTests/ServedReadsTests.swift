import Foundation
import RxModel
import RxTestSupport
import Testing

@testable import RxVault

/// What `rxvault serve` writes to the audit log (`Vault.logServedReads`) while the file under it
/// may be renamed over (a sync tool, a restore).
@Suite struct ServedReadsTests {
    static let read = AuditEvent(
        time: "2026-06-15T10:00:00Z", actor: "owner", action: .read, detail: "api read VisionPrescription")

    /// A write the rename overtook writes nothing, in either file: the old file's counter stays
    /// the copy's, so the copy is not taken for an older one, and the reads go to the new file.
    @Test func aWriteOvertakenByARenameWritesNothingAnywhere() throws {
        let t = try TestVault()
        let server = try t.open()
        _ = try server.add(TestVault.glasses())
        let before = try server.writeCounter()
        let copy = try t.consistentCopy("synced.rxv")
        #expect(rename(copy, t.path) == 0)
        #expect(server.fileWasReplaced)
        #expect(try server.logServedReads([Self.read]) == nil)
        #expect(try server.writeCounter() == before, "the old file took the write")
        // As the server lets go of the old file: its write-ahead log (whose name the new file
        // shares) emptied into it first.
        server.emptyWriteAheadLog()
        let reopened = try t.open()
        #expect(try reopened.writeCounter() == before)
        #expect(try reopened.logServedReads([Self.read]) != nil)
        #expect(try reopened.writeCounter() == before + 1)
        var logged: [String?] = []
        _ = try reopened.reading { read in
            try reopened.vouchedAuditEvents([.read], in: read) { event in
                logged.append(event.detail)
                return true
            }
        }
        #expect(logged == ["api read VisionPrescription"])
    }
}
