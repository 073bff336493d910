import Foundation
import RxStore
import RxTestSupport
import Testing

/// Clients, grants, reading as a client, revocation re-keying, expiry, the audit log and check,
/// all through the binary.
@Suite struct GrantTests {
    func run(_ tool: String, _ arguments: [String], in directory: URL) throws -> (Int32, String) {
        let r = try Subprocess.run([tool] + arguments, directory: directory)
        return (r.status, r.stdout + r.stderr)
    }

    func setUp() throws -> (CLIHarness, glasses: String, contacts: String) {
        let cli = try CLIHarness()
        try cli.initVault()
        let glasses = try cli.add(CLIHarness.glassesArguments)
        let contacts = try cli.add(CLIHarness.contactsArguments)
        return (cli, glasses, contacts)
    }

    /// An identity made by Debian's age-keygen works with rxvault --identity.
    @Test func ageKeygenIdentityReadsWhatWasGranted() throws {
        let (cli, glasses, contacts) = try setUp()
        let (status, output) = try run("age-keygen", ["-o", "shop.key"], in: cli.directory)
        try #require(status == 0, "age-keygen is needed for this interop test (apt-get install age): \(output)")
        let keyFile = try String(contentsOfFile: cli.path("shop.key"), encoding: .utf8)
        let recipient = try #require(
            keyFile.split(separator: "\n").first { $0.hasPrefix("# public key: ") }?.dropFirst(14))
        let added = try cli.run(["client", "add", "lens-shop", "--recipient", String(recipient)])
        #expect(added.status == 0, "\(added)")
        #expect(try cli.run(["grant", "lens-shop", glasses]).status == 0)

        let asClient = ["--identity", cli.path("shop.key")]
        let list = try cli.run(asClient + ["list", "--format", "json"], environment: ["RXVAULT_PASSPHRASE_FILE": nil])
        #expect(list.status == 0, "\(list)")
        let ids =
            (try cli.json(list.stdout)["prescriptions"] as? [[String: Any]])?.compactMap { $0["id"] as? String } ?? []
        #expect(ids.count == 1 && ids[0].hasPrefix(glasses))
        let show = try cli.run(asClient + ["show", glasses], environment: ["RXVAULT_PASSPHRASE_FILE": nil])
        #expect(show.stdout.contains("Quintessa Marlowe"))

        // Not granted and never existed: the same message shape and the same exit code.
        let ungranted = try cli.run(asClient + ["show", contacts])
        let absent = try cli.run(asClient + ["show", contacts.hasPrefix("0") ? "ffff" : "0000"])
        #expect(ungranted.status == 67 && absent.status == 67)
        #expect(
            ungranted.stderr.replacingOccurrences(of: contacts, with: "ID")
                == absent.stderr.replacingOccurrences(of: contacts.hasPrefix("0") ? "ffff" : "0000", with: "ID"))
        #expect(!ungranted.stderr.contains("Zylofocus") && !ungranted.stderr.contains("contacts"))

        // The owner's commands are refused with an identity.
        for command in [
            ["add", "glasses", "--patient", "x"], ["edit", glasses, "--note", "x"], ["remove", glasses, "--yes"],
            ["grant", "lens-shop", contacts], ["history", glasses], ["log"], ["check"]
        ] {
            let r = try cli.run(asClient + command)
            #expect(r.status == 64, "\(command): \(r)")
            #expect(r.stderr.contains("needs the owner's passphrase"), "\(command)")
        }
        let clientStatus = try cli.run(asClient + ["status"])
        #expect(clientStatus.stdout.contains("1 prescriptions shared with this identity"), "\(clientStatus)")
        #expect(!clientStatus.stdout.contains("(2 versions"))
        // A stranger's identity opens nothing.
        #expect(try run("age-keygen", ["-o", "stranger.key"], in: cli.directory).0 == 0)
        let stranger = try cli.run(["--identity", cli.path("stranger.key"), "list"])
        #expect(stranger.status == 77)
        #expect(stranger.stderr.contains("not a client of the vault"))
    }

    @Test func generatedIdentityAndClientCommands() throws {
        let (cli, glasses, contacts) = try setUp()
        let made = try cli.run(["client", "add", "moms-phone", "--generate", "--identity-out", cli.path("mom.key")])
        #expect(made.status == 0, "\(made)")
        let mode = try FileManager.default.attributesOfItem(atPath: cli.path("mom.key"))[.posixPermissions] as? Int
        #expect(mode == 0o600)
        #expect(
            try cli.run(["client", "add", "other", "--generate", "--identity-out", cli.path("mom.key")]).status == 73)
        #expect(
            try cli.run(["client", "add", "moms-phone", "--generate", "--identity-out", cli.path("x.key")]).status
                == 73,
            "names are unique (already exists, as a duplicate attachment)")
        #expect(try cli.run(["client", "add", "bad", "--recipient", "age1notakey"]).status == 65)
        #expect(try cli.run(["client", "add", "both", "--generate"]).status == 64)

        #expect(
            try cli.run(["grant", "moms-phone", glasses, contacts, "--expires", "2026-07-01", "--no-attachments"])
                .status == 0)
        let grants = try cli.json(try cli.run(["grants", "--format", "json"]).stdout)["grants"] as? [[String: Any]]
        #expect(grants?.count == 2)
        #expect(grants?.first?["expires"] as? String == "2026-07-01")
        #expect(grants?.first?["attachments"] as? Bool == false)
        let shown = try cli.run(["client", "show", "moms-phone"])
        #expect(shown.stdout.contains("grants     2"))
        #expect(try cli.run(["--identity", cli.path("mom.key"), "list"]).stdout.contains("Quintessa Marlowe"))
        let grantsAfterRead = try cli.run(["grants", "--client", "moms-phone"])
        #expect(!grantsAfterRead.stdout.contains("never"), "last read is recorded")

        #expect(try cli.run(["client", "remove", "moms-phone", "--yes"]).status == 0)
        #expect(try cli.run(["--identity", cli.path("mom.key"), "list"]).status == 77)
        #expect(try cli.run(["grants"]).stderr.contains("no grants"))
        #expect(try cli.run(["client", "list"]).stderr.contains("no clients"))
    }

    /// Revoking deletes the grant and re-keys: the old sealed key is gone from the file and WAL.
    @Test func revokeReKeysAndTheOldSealedKeyIsGone() throws {
        let (cli, glasses, _) = try setUp()
        #expect(try cli.run(["client", "add", "a", "--generate", "--identity-out", cli.path("a.key")]).status == 0)
        #expect(try cli.run(["client", "add", "b", "--generate", "--identity-out", cli.path("b.key")]).status == 0)
        #expect(try cli.run(["grant", "a", glasses]).status == 0)
        #expect(try cli.run(["grant", "b", glasses]).status == 0)
        let db = try Database(path: cli.vaultPath)
        let sealedForA = try db.blob(
            "SELECT sealed_keys FROM access_grant g JOIN client c ON c.id = g.client_id ORDER BY c.rowid LIMIT 1")
        #expect(sealedForA.count > 100)
        #expect(cli.vaultFileBytes().contains(Array(sealedForA[20..<80])))

        let revoked = try cli.run(["revoke", "a", glasses])
        #expect(revoked.status == 0, "\(revoked)")
        #expect(!cli.vaultFileBytes().contains(Array(sealedForA[20..<80])), "the revoked sealed key is still on disk")
        #expect(try cli.run(["--identity", cli.path("a.key"), "show", glasses]).status == 67)
        // The remaining grantee reads the re-keyed version.
        let b = try cli.run(["--identity", cli.path("b.key"), "show", glasses, "--format", "json"])
        #expect(b.status == 0)
        #expect(try cli.json(b.stdout)["version"] as? Int == 2)
        let history = try cli.run(["history", glasses])
        #expect(history.stdout.contains("re-keyed: access revoked"))
        let none = try cli.run(["revoke", "a", glasses])
        #expect(none.status == 67, "no grant left to revoke is not-found: \(none)")
        #expect(none.stderr.contains("client a has no grant on prescription \(glasses)"), "\(none.stderr)")
        #expect(try cli.run(["revoke", "b", "--all"]).stdout.contains("revoked b's access"))
    }

    /// Granting again keeps what is not restated: a grant that ends never silently becomes one
    /// that never ends, and attachments are added only when asked for. Each prescription's line
    /// says what changed; a re-grant that changes nothing writes nothing.
    @Test func regrantKeepsWhatItDoesNotRestate() throws {
        let (cli, glasses, contacts) = try setUp()
        #expect(
            try cli.run(["client", "add", "shop", "--generate", "--identity-out", cli.path("shop.key")]).status == 0)
        func grant(_ rx: String) throws -> [String: Any]? {
            let all =
                try cli.json(try cli.run(["grants", "--format", "json"]).stdout)["grants"] as? [[String: Any]] ?? []
            return all.first { ($0["prescription"] as? String)?.hasPrefix(rx) == true }
        }
        let first = try cli.run(["grant", "shop", glasses, "--expires", "2026-11-30", "--no-attachments"])
        #expect(first.status == 0, "\(first)")
        #expect(
            first.stdout.contains("shop: \(glasses) new grant until 2026-11-30, without attachments"), "\(first.stdout)"
        )

        // A client read is waiting to be countersigned: even so, a no-op re-grant writes nothing.
        #expect(try cli.run(["--identity", cli.path("shop.key"), "show", glasses]).status == 0)
        #expect(try cli.run(["grants"]).status == 0)
        let before = cli.vaultFileBytes()
        let again = try cli.run(["grant", "shop", glasses])
        #expect(again.status == 0, "\(again)")
        #expect(
            again.stdout.contains("shop: \(glasses) unchanged (until 2026-11-30, without attachments)"),
            "\(again.stdout)")
        #expect(
            try grant(glasses)?["expires"] as? String == "2026-11-30", "re-granting without --expires removed the end")
        #expect(
            try grant(glasses)?["attachments"] as? Bool == false,
            "re-granting without --no-attachments added attachments")
        #expect(cli.vaultFileBytes() == before, "a re-grant that changes nothing wrote to the vault")

        let later = try cli.run(["grant", "shop", glasses, "--expires", "2026-12-31"])
        #expect(later.stdout.contains("shop: \(glasses) now until 2026-12-31 (was 2026-11-30)"), "\(later.stdout)")
        #expect(try grant(glasses)?["attachments"] as? Bool == false)
        let widened = try cli.run(["grant", "shop", glasses, contacts, "--attachments"])
        #expect(widened.status == 0, "\(widened)")
        #expect(widened.stdout.contains("shop: \(glasses) now with attachments (was without)"), "\(widened.stdout)")
        #expect(widened.stdout.contains("shop: \(contacts) new grant with no end"), "\(widened.stdout)")
        #expect(try grant(glasses)?["attachments"] as? Bool == true)
        #expect(try grant(glasses)?["expires"] as? String == "2026-12-31")
        let endless = try cli.run(["grant", "shop", glasses, "--no-expiry"])
        #expect(endless.stdout.contains("shop: \(glasses) now with no end (was until 2026-12-31)"), "\(endless.stdout)")
        #expect(try grant(glasses)?["expires"] == nil)
        let narrowed = try cli.run(["grant", "shop", glasses, "--expires", "2026-09-30", "--no-attachments"])
        #expect(
            narrowed.stdout.contains(
                "shop: \(glasses) now until 2026-09-30 (was no end), now without attachments (was with)"),
            "\(narrowed.stdout)")
        #expect(try cli.run(["grant", "shop", glasses, "--expires", "never"]).stdout.contains("now with no end"))

        #expect(try cli.run(["grant", "shop", glasses, "--expires", "2026-12-31", "--no-expiry"]).status == 64)
        #expect(try cli.run(["grant", "shop", glasses, "--attachments", "--no-attachments"]).status == 64)

        // The audit log records each change, and nothing for the no-op.
        let log = try cli.json(try cli.run(["log", "--format", "json"]).stdout)["entries"] as? [[String: Any]] ?? []
        let details = log.filter { $0["action"] as? String == "grant" }.compactMap { $0["detail"] as? String }
        #expect(details.contains("now until 2026-12-31 (was 2026-11-30)"), "\(details)")
        #expect(details.contains("now with no end (was until 2026-12-31)"), "\(details)")
        #expect(details.contains("new grant with no end"), "\(details)")
        #expect(details.count == 7, "\(details)")
    }

    @Test func unknownClientsAndGrantsAreNotFound() throws {
        let (cli, glasses, _) = try setUp()
        // Said before any confirmation is asked or required, so --yes is not needed to learn it.
        let remove = try cli.run(["client", "remove", "nobody"])
        #expect(remove.status == 67, "\(remove)")
        #expect(remove.stderr.contains("no client nobody"))
        #expect(try cli.run(["grant", "nobody", glasses]).status == 67)
        #expect(
            try cli.run(["client", "add", "shop", "--generate", "--identity-out", cli.path("shop.key")]).status == 0)
        let revoke = try cli.run(["revoke", "shop", glasses])
        #expect(revoke.status == 67, "\(revoke)")
        #expect(revoke.stderr.contains("client shop has no grant on prescription \(glasses)"))
        #expect(try cli.run(["remove", "ffffffff"]).status == 67, "an unknown prescription before the missing --yes")
    }

    /// Nothing a client can see tells it to run an owner command.
    @Test func clientMessagesSpeakToClients() throws {
        let (cli, glasses, _) = try setUp()
        #expect(try cli.run(["attach", glasses, AttachmentTests.photo]).status == 0)
        #expect(
            try cli.run(["client", "add", "shop", "--generate", "--identity-out", cli.path("shop.key")]).status == 0)
        #expect(try cli.run(["grant", "shop", glasses, "--no-attachments"]).status == 0)
        let asShop = ["--identity", cli.path("shop.key")]
        let ownerCommands = [
            "rxvault attach", "rxvault add", "rxvault init", "rxvault grant", "restore it from a backup",
            "'rxvault list'"
        ]
        var seen: [CLIHarness.Result] = []
        let none = try cli.run(asShop + ["attachments", glasses])
        #expect(none.status == 0)
        #expect(
            none.stderr.contains("no attachments of prescription \(glasses) are shared with this identity"),
            "\(none.stderr)")
        seen.append(none)
        seen.append(
            try cli.run(
                asShop + ["extract", glasses, "png-prescription-photo-1200x1600.png", "--out", cli.path("x.png")]))
        #expect(seen.last?.status == 67)
        seen.append(try cli.run(asShop + ["show", glasses.hasPrefix("0") ? "ffff" : "0000"]))
        #expect(seen.last?.stderr.contains("shared with this identity") == true, "\(seen.last!)")
        seen.append(try cli.run(asShop + ["--vault", cli.path("nowhere.rxv"), "list"]))
        #expect(seen.last?.status == 66)
        seen.append(try cli.run(["--identity", cli.path("shop.key"), "query", "--patient", "nobody"]))
        for r in seen {
            for owner in ownerCommands { #expect(!r.stderr.contains(owner), "a client was told \(owner): \(r)") }
        }
    }

    @Test func editsAndNewAttachmentsReachGranteesAndExpiryStopsThem() throws {
        let (cli, glasses, _) = try setUp()
        #expect(
            try cli.run(["client", "add", "shop", "--generate", "--identity-out", cli.path("shop.key")]).status == 0)
        #expect(try cli.run(["grant", "shop", glasses, "--expires", "10d"]).stdout.contains("until 2026-06-25"))
        #expect(try cli.run(["edit", glasses, "--note", "Updated for the shop"]).status == 0)
        let shop = ["--identity", cli.path("shop.key")]
        #expect(try cli.run(shop + ["show", glasses]).stdout.contains("Updated for the shop"))
        let photo = AttachmentTests.photo
        #expect(try cli.run(["attach", glasses, photo]).status == 0)
        let attachments = try cli.run(shop + ["attachments", glasses])
        #expect(attachments.stdout.contains("png-prescription-photo-1200x1600.png"))
        #expect(
            try cli.run(
                shop + ["extract", glasses, "png-prescription-photo-1200x1600.png", "--out", cli.path("got.png")]
            ).status == 0)
        #expect(
            FileManager.default.contents(atPath: cli.path("got.png")) == FileManager.default.contents(atPath: photo))

        // On its last day the grant works; the day after it does not.
        #expect(try cli.run(shop + ["show", glasses], environment: ["RXVAULT_TODAY": "2026-06-25"]).status == 0)
        #expect(try cli.run(shop + ["show", glasses], environment: ["RXVAULT_TODAY": "2026-06-26"]).status == 67)
        let db = try Database(path: cli.vaultPath)
        #expect(try db.integer("SELECT count(*) FROM access_grant") == 1, "still stored until the owner's next write")
        // The owner's next write sweeps it away and re-keys.
        #expect(
            try cli.run(
                ["add"] + Array(CLIHarness.contactsArguments.dropFirst()), environment: ["RXVAULT_TODAY": "2026-06-26"]
            ).status == 0)
        #expect(try db.integer("SELECT count(*) FROM access_grant") == 0)
        let log = try cli.run(["log", "--format", "json"])
        let actions =
            (try cli.json(log.stdout)["entries"] as? [[String: Any]])?.compactMap { $0["action"] as? String } ?? []
        #expect(actions.contains("grant-expired"))
        #expect(try cli.run(["grant", "shop", glasses, "--expires", "2026-01-01"]).status == 65, "expiry in the past")
        #expect(try cli.run(["grant", "shop", glasses, "--expires", "soon"]).status == 65)
    }

    @Test func auditLogRecordsAndCheckDetectsTampering() throws {
        let (cli, glasses, contacts) = try setUp()
        #expect(
            try cli.run(["client", "add", "shop", "--generate", "--identity-out", cli.path("shop.key")]).status == 0)
        #expect(try cli.run(["grant", "shop", glasses]).status == 0)
        #expect(try cli.run(["--identity", cli.path("shop.key"), "show", glasses]).status == 0)
        #expect(try cli.run(["revoke", "shop", glasses]).status == 0)
        let log = try cli.json(try cli.run(["log", "--format", "json"]).stdout)
        let entries = try #require(log["entries"] as? [[String: Any]])
        #expect(entries.map { $0["action"] as? String } == ["client-added", "grant", "read", "revoke"])
        #expect(entries[2]["actor"] as? String == "shop")
        #expect(
            entries.allSatisfy { $0["countersigned"] as? Bool == true }, "the revoke countersigned the client's read")
        let filtered =
            try cli.json(try cli.run(["log", "--rx", contacts, "--format", "json"]).stdout)["entries"] as? [Any]
        #expect(filtered?.isEmpty == true)
        #expect(try cli.run(["check"]).status == 0)

        // The log is not readable in the file.
        #expect(!cli.vaultFileBytes().contains("revoke"))
        #expect(!cli.vaultFileBytes().contains("shop"))

        let db = try Database(path: cli.vaultPath)
        let saved = try db.blob("SELECT entry FROM audit_entry WHERE seq = 2")
        var edited = saved
        edited[10] ^= 1
        try db.prepare("UPDATE audit_entry SET entry = ? WHERE seq = 2").run([.blob(edited)])
        let check = try cli.run(["check"])
        #expect(check.status == 76, "\(check)")
        #expect(check.stdout.contains("audit entry 2 was altered"))
        #expect(try cli.run(["log"]).status == 76)
        try db.prepare("UPDATE audit_entry SET entry = ? WHERE seq = 2").run([.blob(saved)])
        #expect(try cli.run(["check"]).status == 0)

        try db.execute("DELETE FROM audit_entry WHERE seq = 4")
        let deleted = try cli.run(["check", "--format", "json"])
        #expect(deleted.status == 76)
        #expect(deleted.stdout.contains("were deleted"))
        // A forged grant row (its MAC cannot be made without the owner's key) is detected.
        try db.execute(
            "INSERT INTO access_grant SELECT lower(hex(randomblob(16))), id, lower(hex(randomblob(16))), x'00', x'00', x'00' FROM client"
        )
        let forged = try cli.run(["check"])
        #expect(forged.status == 76)
        #expect(
            forged.stdout.contains("failed authentication")
                && forged.stdout.contains("not one the owner holds current"), "\(forged.stdout)")
    }
}

@Suite struct ClientExportTests {
    /// A client exports what it is granted (rxvault --identity FILE export ...), logged as one read.
    @Test func aClientExportsItsGrantsOnly() throws {
        let cli = try CLIHarness()
        try cli.initVault()
        let glasses = try cli.add(CLIHarness.glassesArguments)
        let contacts = try cli.add(CLIHarness.contactsArguments)
        #expect(try cli.run(["attach", glasses, AttachmentTests.pdf]).status == 0)
        #expect(
            try cli.run(["client", "add", "shop", "--generate", "--identity-out", cli.path("shop.key")]).status == 0)
        #expect(try cli.run(["grant", "shop", glasses]).status == 0)
        let asShop = ["--identity", cli.path("shop.key")]
        let r = try cli.run(
            asShop + ["export", "--format", "fhir", "--out", cli.path("mine.json")],
            environment: ["RXVAULT_PASSPHRASE_FILE": nil])
        #expect(r.status == 0, "\(r)")
        let bundle = try cli.json(
            String(decoding: FileManager.default.contents(atPath: cli.path("mine.json"))!, as: UTF8.self))
        let kinds =
            (bundle["entry"] as? [[String: Any]])?.compactMap {
                ($0["resource"] as? [String: Any])?["resourceType"] as? String
            } ?? []
        #expect(kinds.filter { $0 == "VisionPrescription" }.count == 1)
        #expect(kinds.contains("DocumentReference"))
        #expect(
            try cli.run(asShop + ["export", contacts, "--format", "json", "--out", "-"]).status == 67,
            "not granted = not found")
        #expect(try cli.run(asShop + ["export", "--format", "json", "--for", "shop", "--out", "-"]).status == 64)
        let log = try cli.json(try cli.run(["log", "--format", "json"]).stdout)["entries"] as? [[String: Any]] ?? []
        #expect(
            log.filter { ($0["detail"] as? String)?.hasPrefix("export") == true && $0["actor"] as? String == "shop" }
                .count == 1)
    }
}
