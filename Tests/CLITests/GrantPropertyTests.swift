import Foundation
import RxCrypto
import RxModel
import RxStore
import RxTestSupport
import RxValidate
import Testing

@testable import RxVault

/// For random vaults, clients and grant sets (including expired and revoked grants), every client
/// sees exactly its granted set, and decrypting every stored ciphertext by hand with a client's
/// secret key, straight from the SQLite file and bypassing rxvault, succeeds only for what it
/// was granted.
///
/// In-process through the RxVault API, but in CLITests: the attachments go through the file
/// checker, which runs as a child process of the built rxvault binary (`_parse-untrusted`),
/// and library tests do not run the binary.
@Suite struct GrantPropertyTests {
    static let day0 = CalendarDate(iso: "2026-06-15")!

    @Test(arguments: [UInt64(1), 2, 3, 4, 5, 6])
    func clientsSeeExactlyWhatTheyWereGranted(seed: UInt64) throws {
        var rng = SeededGenerator(seed: seed)
        let t = try TestVault()
        let owner = try Vault.open(at: t.path, with: .passphrase(t.passphrase), clock: .fixed(today: Self.day0))
        let pixel = Array(
            try Data(contentsOf: URL(fileURLWithPath: Repository.fixture("attachments/valid/png-1x1.png"))))
        let parser = try CLIHarness.fileChecker()

        // Prescriptions, some with an attachment.
        var prescriptions: [PrescriptionID] = []
        var attachmentsOf: [String: [String]] = [:]
        for i in 0..<Int.random(in: 3...7, using: &rng) {
            let (record, _) = try owner.add(
                TestVault.glasses(patient: "Patient \(i)", sphere: -25 * Int.random(in: 1...20, using: &rng)))
            prescriptions.append(record.id)
            if Bool.random(using: &rng) {
                var offset = 0
                let info = try owner.attach(to: record.id, name: "p\(i).png", parser: parser) { buffer in
                    let n = min(buffer.count, pixel.count - offset)
                    for k in 0..<n { buffer[k] = pixel[offset + k] }
                    offset += n
                    return n
                }
                attachmentsOf[record.id.hex] = [info.id.hex]
            }
        }
        // Clients with their identities.
        var clients: [(ClientSummary, AgeIdentity)] = []
        for i in 0..<Int.random(in: 2...4, using: &rng) {
            let identity = try AgeIdentity.generate()
            clients.append((try owner.addClient(name: "client-\(i)", recipient: identity.recipient), identity))
        }
        // Random grants: some open-ended, some expiring soon, some without attachments.
        struct Expected {
            var expires: CalendarDate?
            var attachments: Bool
        }
        var expected: [String: [String: Expected]] = [:]
        for (client, _) in clients {
            for p in prescriptions where Int.random(in: 0..<3, using: &rng) > 0 {
                let expires: CalendarDate? =
                    Bool.random(using: &rng) ? nil : Self.day0.adding(days: Int.random(in: 0...10, using: &rng))!
                let attachments = Bool.random(using: &rng)
                try owner.grant(client, [p], expires: expires, includeAttachments: attachments)
                expected[client.id.hex, default: [:]][p.hex] = Expected(expires: expires, attachments: attachments)
            }
        }
        // Some revokes, and an edit that must be re-sealed for the remaining grantees.
        for (client, _) in clients where Bool.random(using: &rng) {
            guard let victim = expected[client.id.hex]?.keys.sorted().first else { continue }
            try owner.revoke(client, [PrescriptionID(hex: victim)!])
            expected[client.id.hex]?[victim] = nil
        }
        _ = try owner.edit(prescriptions[0]) { $0.note = "edited after the grants" }

        // Time passes: some grants expire.
        let later = Self.day0.adding(days: 5)!
        for (client, identity) in clients {
            let view = try ClientVault.open(at: t.path, identity: identity, clock: .fixed(today: later))
            let visible = Set(try view.list().map(\.id.hex))
            let granted = expected[client.id.hex, default: [:]].filter { $0.value.expires.map { later <= $0 } ?? true }
            #expect(visible == Set(granted.keys), "client \(client.name) sees exactly its live grants")
            for p in prescriptions {
                if granted[p.hex] != nil {
                    let record = try view.prescription(try view.resolve(p.hex), version: nil)
                    #expect(
                        record.prescription == (try owner.prescription(p)).prescription,
                        "client reads the current version")
                    let seen = try view.attachments(of: p).map(\.id.hex)
                    #expect(seen == (granted[p.hex]!.attachments ? attachmentsOf[p.hex] ?? [] : []))
                } else {
                    #expect(throws: VaultError.self) { _ = try view.resolve(p.hex) }
                }
            }
            try Self.handDecryption(
                path: t.path, identity: identity, clientID: client.id.hex,
                expectGranted: Set(expected[client.id.hex, default: [:]].keys), attachmentsOf: attachmentsOf,
                withAttachments: Set(expected[client.id.hex, default: [:]].filter { $0.value.attachments }.keys))
        }

        // The owner's next write sweeps the expired grants and re-keys their prescriptions.
        let ownerLater = try Vault.open(at: t.path, with: .passphrase(t.passphrase), clock: .fixed(today: later))
        _ = try ownerLater.add(TestVault.glasses(patient: "trigger"))
        let remaining = try ownerLater.grants()
        #expect(remaining.allSatisfy { $0.isActive(on: later) })
        for (client, identity) in clients {
            let live = Set(
                expected[client.id.hex, default: [:]].filter { $0.value.expires.map { later <= $0 } ?? true }.keys)
            try Self.handDecryption(
                path: t.path, identity: identity, clientID: client.id.hex, expectGranted: live,
                attachmentsOf: attachmentsOf,
                withAttachments: Set(expected[client.id.hex, default: [:]].filter { $0.value.attachments }.keys)
                    .intersection(live))
        }
        let report = try ownerLater.check(readData: true)
        #expect(report.isClean, "\(report.stages.flatMap(\.errors))")
    }

    /// Straight from the SQLite file: which sealed boxes open with this client's key, and which
    /// stored ciphertexts the keys inside them open.
    static func handDecryption(
        path: String, identity: AgeIdentity, clientID: String, expectGranted: Set<String>,
        attachmentsOf: [String: [String]], withAttachments: Set<String>
    ) throws {
        let db = try Database(path: path)
        let vaultID = try db.blob("SELECT vault_id FROM vault_header")
        var dataKeys: [SecretBytes] = []
        var attachmentKeys: [SecretBytes] = []
        var opened: Set<String> = []
        // The file does not say which prescription a grant row is for (format 3): the sealed box does.
        try db.prepare("SELECT client_id, sealed_keys FROM access_grant").forEach { row in
            guard
                let plain = try? X25519.open(
                    row.blob(1), publicKey: identity.recipient.publicKey, secretKey: identity.secretKey)
            else { return }
            #expect(row.text(0) == clientID, "a sealed box of another client opened")
            let keys = GrantKeys.decode(plain)!
            opened.insert(keys.context.prescription)
            dataKeys.append(keys.dataKey)
            attachmentKeys += keys.attachmentKeys
        }
        // Every content row: which of our keys open it.
        var readable: Set<String> = []
        var latest: [String: Int] = [:]
        try db.prepare("SELECT prescription_id, max(version) FROM prescription_version GROUP BY prescription_id")
            .forEach { row in
                latest[row.text(0)!] = Int(row.int(1))
            }
        try db.prepare("SELECT prescription_id, version, content FROM prescription_version").forEach { row in
            let id = row.text(0)!
            let version = Int(row.int(1))
            let aad = AssociatedData.object(.content, vaultID: vaultID, type: "prescription", id: id, version: version)
            for key in dataKeys where (try? AEAD.open(row.blob(2), key: key, associatedData: aad)) != nil {
                #expect(version == latest[id], "a client key opens an old version of \(id.prefix(8))")
                readable.insert(id)
            }
        }
        #expect(readable == expectGranted, "hand decryption opens exactly the granted prescriptions")
        // Attachment metadata: which open with the attachment keys we hold.
        var readableAttachments: Set<String> = []
        try db.prepare("SELECT id, prescription_id, metadata FROM attachment").forEach { row in
            let aad = AssociatedData.attachment(
                .attachmentMetadata, vaultID: vaultID, id: row.text(0)!, prescriptionID: row.text(1)!)
            for key in attachmentKeys {
                let metadataKey = try! KeyDerivation.derive(from: key, id: 1, context: "rxattach")
                if (try? AEAD.open(row.blob(2), key: metadataKey, associatedData: aad)) != nil {
                    readableAttachments.insert(row.text(0)!)
                }
            }
        }
        let expectedAttachments = Set(withAttachments.flatMap { attachmentsOf[$0] ?? [] })
        #expect(readableAttachments == expectedAttachments)
        _ = opened
    }
}
