import Foundation
import RxCrypto
import RxStore
import Testing

/// Someone with write access to the vault file (a client on a shared disk) appends audit entries
/// in another client's name, using only what the file shows: the audit public key, the clients'
/// ids, the last entry's hash. The owner's next write must not countersign them; `check` names
/// them (76), `log` marks them and `grants` does not take them as a client's last read.
@Suite struct AuditForgeryTests {
    /// Appends `json` sealed to the vault's audit key, chained on correctly: what anyone can do.
    /// Returns its sequence number.
    @discardableResult
    static func forgeEntry(_ json: String, in db: Database) throws -> Int {
        let auditKey = try db.blob("SELECT audit_public_key FROM vault_header")
        let sequence = Int(try db.integer("SELECT coalesce(max(seq), 0) FROM audit_entry") ?? 0) + 1
        let previous =
            sequence == 1
            ? [UInt8](repeating: 0, count: 32)
            : try db.blob("SELECT hash FROM audit_entry WHERE seq = ?", [.integer(Int64(sequence - 1))])
        let sealed = try X25519.seal(Array(json.utf8), to: auditKey)
        let bigEndian = (0..<8).reversed().map { UInt8(truncatingIfNeeded: sequence >> (8 * $0)) }
        let hash = SHA256.hash(Array("rxvault/v1 audit".utf8) + previous + bigEndian + sealed)
        try db.prepare("INSERT INTO audit_entry (seq, entry, hash, mac) VALUES (?, ?, ?, NULL)")
            .run([.integer(Int64(sequence)), .blob(sealed), .blob(hash)])
        return sequence
    }

    static func readEvent(client: String, prescription: String, time: String) -> String {
        #"{"action":"read","actor":"\#(client)","client":"\#(client)","detail":"show","prescriptions":["\#(prescription)"],"time":"\#(time)"}"#
    }

    @Test func readsForgedInAClientsNameAreReportedNeverCountersigned() throws {
        let cli = try CLIHarness()
        try cli.initVault()
        let glasses = try cli.add(CLIHarness.glassesArguments)
        let contacts = try cli.add(CLIHarness.contactsArguments)
        #expect(
            try cli.run(["client", "add", "shop", "--generate", "--identity-out", cli.path("shop.key")]).status == 0)
        #expect(
            try cli.run(["client", "add", "family", "--generate", "--identity-out", cli.path("family.key")]).status == 0
        )
        #expect(try cli.run(["grant", "shop", glasses]).status == 0)
        let db = try Database(path: cli.vaultPath)
        let shop = try #require(try db.prepare("SELECT id FROM client ORDER BY rowid LIMIT 1").firstText())
        let family = try #require(try db.prepare("SELECT id FROM client ORDER BY rowid DESC LIMIT 1").firstText())
        let glassesID = try #require(
            try db.prepare("SELECT id FROM prescription WHERE id LIKE '\(glasses)%'").firstText())
        let contactsID = try #require(
            try db.prepare("SELECT id FROM prescription WHERE id LIKE '\(contacts)%'").firstText())

        // A genuine read by the shop, with its identity.
        #expect(try cli.run(["--identity", cli.path("shop.key"), "show", glasses]).status == 0)
        let genuine = Int(try db.integer("SELECT max(seq) FROM audit_entry") ?? 0)
        // "family" read contacts (never granted to it), back-dated; and the shop read glasses later than it did.
        let inFamilysName = try Self.forgeEntry(
            Self.readEvent(client: family, prescription: contactsID, time: "2026-01-01T08:00:00Z"), in: db)
        let inShopsName = try Self.forgeEntry(
            Self.readEvent(client: shop, prescription: glassesID, time: "2026-06-15T23:59:00Z"), in: db)
        // The owner's next write keeps working and countersigns only the genuine read.
        #expect(try cli.run(["grant", "shop", contacts]).status == 0)
        #expect(try db.integer("SELECT count(*) FROM audit_entry WHERE mac IS NULL") == 2)
        #expect(
            try db.integer(
                "SELECT count(*) FROM audit_entry WHERE mac IS NULL AND seq IN (\(inFamilysName), \(inShopsName))") == 2
        )
        #expect(try db.integer("SELECT count(*) FROM audit_entry WHERE mac IS NOT NULL AND seq = \(genuine)") == 1)

        let check = try cli.run(["check"])
        #expect(check.status == 76, "\(check)")
        #expect(
            check.stdout.contains("audit entry \(inFamilysName) claims to be a read by client \(family.prefix(8))"),
            "\(check.stdout)")
        #expect(
            check.stdout.contains("audit entry \(inShopsName) claims to be a read by client \(shop.prefix(8))"),
            "\(check.stdout)")
        #expect(!check.stdout.contains("audit entry \(genuine) "), "the genuine read is not blamed")

        // log shows every entry, the forged ones marked, and says so on stderr.
        let log = try cli.run(["log", "--format", "json"])
        #expect(log.status == 0, "\(log)")
        let entries = try #require(try cli.json(log.stdout)["entries"] as? [[String: Any]])
        let bySeq = Dictionary(uniqueKeysWithValues: entries.compactMap { e in (e["seq"] as? Int).map { ($0, e) } })
        #expect(bySeq[inFamilysName]?["verified"] as? Bool == false)
        #expect((bySeq[inFamilysName]?["problem"] as? String)?.contains("not authenticated") == true)
        #expect(bySeq[inShopsName]?["verified"] as? Bool == false)
        #expect(bySeq[genuine]?["verified"] as? Bool == true)
        #expect(entries.filter { $0["verified"] as? Bool == false }.count == 2)
        #expect(
            log.stderr.contains("rxvault: warning: entries \(inFamilysName), \(inShopsName) are NOT VERIFIED"),
            "\(log.stderr)")
        let table = try cli.run(["log"])
        let flagged = table.stdout.split(separator: "\n").filter { $0.contains("NOT VERIFIED") }
        #expect(
            flagged.count == 2
                && flagged.allSatisfy { $0.hasPrefix("\(inFamilysName) ") || $0.hasPrefix("\(inShopsName) ") },
            "\(table.stdout)")

        // The shop's last read is its genuine one, not the forged later one.
        let grants =
            try cli.json(try cli.run(["grants", "--client", "shop", "--format", "json"]).stdout)["grants"]
            as? [[String: Any]]
        let lastRead = grants?.first { ($0["prescription"] as? String) == glassesID }?["lastRead"] as? String
        #expect(lastRead == "2026-06-15T12:00:00Z", "\(String(describing: grants))")
    }

    /// A genuine read keeps being countersigned after a forged entry, and a copy of a genuine
    /// read appended again (a replay) is refused.
    @Test func aReplayedGenuineReadIsRefusedAndDoesNotBlockLaterReads() throws {
        let cli = try CLIHarness()
        try cli.initVault()
        let glasses = try cli.add(CLIHarness.glassesArguments)
        #expect(
            try cli.run(["client", "add", "shop", "--generate", "--identity-out", cli.path("shop.key")]).status == 0)
        #expect(try cli.run(["grant", "shop", glasses]).status == 0)
        #expect(try cli.run(["--identity", cli.path("shop.key"), "show", glasses]).status == 0)
        let db = try Database(path: cli.vaultPath)
        let genuine = Int(try db.integer("SELECT max(seq) FROM audit_entry") ?? 0)
        // Re-append the genuine read's sealed bytes at the end, chained on correctly.
        let sealed = try db.blob("SELECT entry FROM audit_entry WHERE seq = ?", [.integer(Int64(genuine))])
        let previous = try db.blob("SELECT hash FROM audit_entry WHERE seq = ?", [.integer(Int64(genuine))])
        let replay = genuine + 1
        let bigEndian = (0..<8).reversed().map { UInt8(truncatingIfNeeded: replay >> (8 * $0)) }
        try db.prepare("INSERT INTO audit_entry (seq, entry, hash, mac) VALUES (?, ?, ?, NULL)")
            .run([
                .integer(Int64(replay)), .blob(sealed),
                .blob(SHA256.hash(Array("rxvault/v1 audit".utf8) + previous + bigEndian + sealed))
            ])
        // A genuine read after it.
        #expect(try cli.run(["--identity", cli.path("shop.key"), "list"]).status == 0)
        let later = Int(try db.integer("SELECT max(seq) FROM audit_entry") ?? 0)
        #expect(later == replay + 1)
        #expect(try cli.run(["add"] + Array(CLIHarness.contactsArguments.dropFirst())).status == 0)

        #expect(try db.integer("SELECT count(*) FROM audit_entry WHERE mac IS NULL") == 1)
        #expect(
            try db.integer("SELECT count(*) FROM audit_entry WHERE mac IS NULL AND seq = \(replay)") == 1,
            "the replay was countersigned")
        let check = try cli.run(["check", "--format", "json"])
        #expect(check.status == 76)
        #expect(check.stdout.contains("audit entry \(replay) claims to be a read"), "\(check.stdout)")
        #expect(!check.stdout.contains("audit entry \(later) "))
    }
}

extension Statement {
    /// The first column of the first row, as text.
    func firstText() throws -> String? { try step() ? text(0) : nil }
}
