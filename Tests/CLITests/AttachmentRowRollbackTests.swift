import Foundation
import RxCrypto
import RxModel
import RxStore
import RxTestSupport
import Testing

@testable import RxVault

/// RowRollbackTests (RxVaultTests) for a vault with an attachment: in-process through the
/// RxVault API, but here because the attachment goes through the file checker, a child process
/// of the built rxvault binary, and library tests do not run the binary.
@Suite struct AttachmentRowRollbackTests {
    /// An export reads the grant rows and the attachment rows of the whole vault once for its read
    /// (`ReadBatch`): what it read must still be what the manifest pins. A revoked grant row put
    /// back, or an attachment row deleted, refuses the export.
    @Test func anExportRefusesAGrantPutBackOrAnAttachmentDeleted() throws {
        let t = try TestVault()
        let owner = try t.open()
        let (a, _) = try owner.add(TestVault.glasses(patient: "A"))
        let (b, _) = try owner.add(TestVault.glasses(patient: "B"))
        let parser = try CLIHarness.fileChecker()
        let pixel = Array(
            try Data(contentsOf: URL(fileURLWithPath: Repository.fixture("attachments/valid/png-1x1.png"))))
        var offset = 0
        _ = try owner.attach(to: b.id, name: "rx.png", parser: parser) { buffer in
            let n = min(buffer.count, pixel.count - offset)
            for k in 0..<n { buffer[k] = pixel[offset + k] }
            offset += n
            return n
        }
        let client = try owner.addClient(name: "shop", recipient: try AgeIdentity.generate().recipient)
        try owner.grant(client, [a.id], expires: nil, includeAttachments: true)
        let old = try t.consistentCopy("granted.rxv")
        try owner.revoke(client, [a.id])
        let export = {
            _ = try owner.exportItems(
                ids: nil, filter: PrescriptionFilter(), for: nil, attachments: true, versions: false)
        }
        #expect(
            try owner.exportItems(ids: nil, filter: PrescriptionFilter(), for: nil, attachments: true, versions: false)
                .flatMap(\.attachments).count == 1)
        let db = try t.attacker(old: old)
        try db.execute("INSERT INTO main.access_grant SELECT * FROM old.access_grant")
        expectIntegrity("export with a revoked grant put back", mentioning: [String(a.id.hex.prefix(8))]) {
            try export()
        }
        try db.execute("DELETE FROM main.access_grant")
        try export()
        try db.execute("DELETE FROM main.attachment WHERE prescription_id = '\(b.id.hex)'")
        expectIntegrity("export with an attachment deleted", mentioning: [String(b.id.hex.prefix(8))]) { try export() }
    }
}
