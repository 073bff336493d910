import Foundation
import RxStore
import RxTestSupport
import Testing

/// Keys, through the binary: more passphrases (key slots), a recovery code, the
/// key-derivation cost, the attachment size setting, and what someone who can write the file
/// (but holds no key) can and cannot do with slots.
@Suite struct KeySlotTests {
    /// A vault with one prescription and a second passphrase (interactive KDF) in slot 2; slot
    /// 1 at the suite's fast KDF, or made by `init --kdf interactive` when `initThroughCLI`.
    func withPartner(initThroughCLI: Bool = false) throws -> (CLIHarness, partner: String) {
        let cli = try CLIHarness()
        if initThroughCLI { try cli.initVault(through: "interactive") } else { try cli.initVault() }
        _ = try cli.add(CLIHarness.glassesArguments)
        let partner = try cli.write("partner's own passphrase 2026\n", to: "partner")
        let added = try cli.run([
            "key", "add", "--label", "partner", "--kdf", "interactive", "--new-passphrase-file", partner
        ])
        #expect(added.status == 0, "\(added)")
        #expect(
            added.stdout == "added passphrase slot 2 (partner) with the interactive key-derivation cost\n", "\(added)")
        return (cli, partner)
    }

    /// A slot cheaper than every other passphrase slot lowers what a guesser must pay for the
    /// whole vault: `key add` says so, and says nothing when the new slot costs as much or more.
    @Test func aCheaperPassphraseSlotIsNamedAsWhatTheVaultIsNowWorth() throws {
        let cli = try CLIHarness()
        try cli.initVault(through: "moderate")
        let partner = try cli.write("partner's own passphrase 2026\n", to: "partner")
        let same = try cli.run(["key", "add", "--new-passphrase-file", partner])
        #expect(same.status == 0 && !same.stderr.contains("cheaper"), "\(same)")
        let cheaper = try cli.run(["key", "add", "--kdf", "interactive", "--new-passphrase-file", partner])
        #expect(cheaper.status == 0, "\(cheaper)")
        #expect(
            cheaper.stderr.contains(
                "rxvault: warning: the new slot's key derivation (interactive) is cheaper than every other passphrase slot's (moderate): the vault is now only as hard to guess as this slot; give --kdf moderate to keep it as it was"
            ), "\(cheaper.stderr)")
        let again = try cli.run(["key", "add", "--kdf", "interactive", "--new-passphrase-file", partner])
        #expect(again.status == 0 && !again.stderr.contains("cheaper"), "\(again)")
    }

    func sql(_ cli: CLIHarness, _ statement: String) throws {
        let database = try Database(path: cli.vaultPath)
        try database.execute(statement)
    }

    func slotRowHex(_ cli: CLIHarness, _ id: Int) throws -> String {
        let python = try cli.tool([
            "python3", "-c",
            """
            import sqlite3, sys
            row = sqlite3.connect(sys.argv[1]).execute("SELECT id, kind, kdf_algorithm, kdf_ops_limit, kdf_mem_limit, hex(kdf_salt), hex(wrapped_root_key), hex(info) FROM key_slot WHERE id = ?", (int(sys.argv[2]),)).fetchone()
            print("INSERT INTO key_slot VALUES (%d, '%s', '%s', %d, %d, X'%s', X'%s', X'%s')" % row)
            """, cli.vaultPath, String(id)
        ])
        return python.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test func anySlotsPassphraseOpensTheVaultAndEveryChangeIsLogged() throws {
        // The log names each slot's cost: slot 1's is a preset here too.
        let (cli, partner) = try withPartner(initThroughCLI: true)
        // The partner's passphrase opens the vault for reading and writing.
        let listed = try cli.run(["list", "--passphrase-file", partner])
        #expect(listed.status == 0 && listed.stdout.contains("Quintessa Marlowe"), "\(listed)")
        #expect(try cli.run(CLIHarness.contactsArguments + ["--passphrase-file", partner]).status == 0)
        // key list: both slots, the one that opened marked; JSON with label, cost, creation time.
        let table = try cli.run(["key", "list", "--passphrase-file", partner])
        #expect(table.status == 0, "\(table)")
        #expect(table.stdout.contains("2*    passphrase  partner  interactive (ops 2, 64 MiB)"), "\(table)")
        let json = try cli.json(try cli.run(["key", "list", "--format", "json"]).stdout)
        let slots = try #require(json["slots"] as? [[String: Any]])
        #expect(slots.map { $0["slot"] as? Int } == [1, 2])
        #expect(slots.map { $0["kind"] as? String } == ["passphrase", "passphrase"])
        #expect(slots[1]["label"] as? String == "partner")
        #expect((slots[1]["kdf"] as? [String: Any])?["preset"] as? String == "interactive")
        #expect(slots[1]["created"] as? String != nil && slots[0]["opened"] as? Bool == true)
        // Removing slot 2: the partner's passphrase opens nothing any more.
        let removed = try cli.run(["key", "remove", "2", "--yes"])
        #expect(removed.status == 0 && removed.stdout == "removed key slot 2\n", "\(removed)")
        #expect(try cli.run(["list", "--passphrase-file", partner]).status == 77)
        #expect(try cli.run(["key", "remove", "2", "--yes"]).status == 67)
        // The last passphrase is never removed (65), whatever else is left.
        let last = try cli.run(["key", "remove", "1", "--yes"])
        #expect(
            last.status == 65
                && last.stderr.contains(
                    "slot 1 is the vault's last passphrase: removing it would leave no way into the vault"),
            "\(last)")
        #expect(try cli.run(["key", "add", "--recovery"]).status == 0)
        let stillLast = try cli.run(["key", "remove", "1", "--yes"])
        #expect(
            stillLast.status == 65 && stillLast.stderr.contains("would leave only the recovery code"), "\(stillLast)")
        // Slot 1 can go once another passphrase is there (slot 3: the recovery code took the
        // free slot 2); the other then opens everything.
        #expect(try cli.run(["key", "add", "--kdf", "interactive", "--new-passphrase-file", partner]).status == 0)
        #expect(try cli.run(["key", "remove", "1", "--yes"]).status == 0)
        #expect(try cli.run(["list"]).status == 77, "slot 1's passphrase is gone")
        let status = try cli.run(["status", "--passphrase-file", partner])
        #expect(
            status.stdout.contains("slot 1 removed")
                && status.stdout.contains("key slots      2 recovery: recovery code (160 bits, BLAKE2b); 3 passphrase"),
            "\(status)")
        // A confirmation is required without --yes (no terminal here: usage, nothing changed).
        #expect(try cli.run(["key", "remove", "3", "--passphrase-file", partner]).status == 64)
        let log = try cli.run(["log", "--passphrase-file", partner])
        for text in [
            "key-added    -                      slot 2 passphrase (interactive) \"partner\"",
            "key-removed  -                      slot 2 passphrase (interactive) \"partner\"",
            "key-added    -                      slot 2 recovery",
            "key-removed  -                      slot 1 passphrase (interactive)"
        ] {
            #expect(log.stdout.contains(text), "\(text)\n\(log)")
        }
        #expect(try cli.run(["check", "--passphrase-file", partner]).status == 0)
    }

    @Test func aRecoveryCodeSetsANewPassphraseWhenTheOldOneIsForgotten() throws {
        let cli = try CLIHarness()
        try cli.initVault()
        _ = try cli.add(CLIHarness.glassesArguments)
        let added = try cli.run(["key", "add", "--recovery", "--label", "paper in the safe"])
        #expect(added.status == 0, "\(added)")
        let code = added.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(
            code.range(of: "^([0-9A-HJKMNP-TV-Z]{5}-){7}[0-9A-HJKMNP-TV-Z]{5}$", options: .regularExpression) != nil,
            "\(code)")
        #expect(added.stderr.contains("shown this once"), "\(added)")
        // A backup made with the passphrase of the day, before it is forgotten.
        #expect(try cli.run(["backup", cli.path("before.age")]).status == 0)
        // The code is not a passphrase: it does not open the vault as one.
        let asPassphrase = try cli.write(code + "\n", to: "code-as-passphrase")
        #expect(try cli.run(["list", "--passphrase-file", asPassphrase]).status == 77)
        // The passphrase is forgotten.
        try cli.rewritePassphraseFile("something else entirely\n")
        #expect(try cli.run(["list"]).status == 77)
        let newPassphrase = try cli.write("a new passphrase after recovery\n", to: "new")
        // A mistyped group is named, and nothing changes.
        var groups = code.split(separator: "-").map(String.init)
        let third = Array(groups[2])
        let wrongCharacter: Character = third[1] == "7" ? "8" : "7"
        groups[2] = String(third[0]) + String(wrongCharacter) + String(third[2...])
        let typo = try cli.write(groups.joined(separator: "-") + "\n", to: "typo")
        let mistyped = try cli.run(["passwd", "--recovery-key-file", typo, "--new-passphrase-file", newPassphrase])
        #expect(
            mistyped.status == 65 && mistyped.stderr.contains("group 3 of the recovery code is mistyped"), "\(mistyped)"
        )
        let short = try cli.write(String(code.dropLast(5)) + "\n", to: "short")
        let cut = try cli.run(["passwd", "--recovery-key-file", short, "--new-passphrase-file", newPassphrase])
        #expect(
            cut.status == 65 && cut.stderr.contains("8 groups of 5 characters (40 in all); this one has 35"), "\(cut)")
        // Another vault's code is well formed but opens nothing here.
        let other = try CLIHarness()
        try other.initVault()
        let otherCode = try other.run(["key", "add", "--recovery"]).stdout
        let foreign = try cli.write(otherCode, to: "foreign")
        let wrong = try cli.run(["passwd", "--recovery-key-file", foreign, "--new-passphrase-file", newPassphrase])
        #expect(wrong.status == 77 && wrong.stderr.contains("the recovery code does not open this vault"), "\(wrong)")
        // Typed in lower case, in groups on two lines, with spaces: it still reads.
        let sloppy = code.lowercased().split(separator: "-")
        let retyped = try cli.write(
            sloppy[0..<4].joined(separator: " ") + "\n" + sloppy[4...].joined(separator: " ") + "\n", to: "retyped")
        let recovered = try cli.run(["passwd", "--recovery-key-file", retyped, "--new-passphrase-file", newPassphrase])
        #expect(recovered.status == 0, "\(recovered)")
        #expect(recovered.stdout.contains("passphrase changed (key slot 1"), "\(recovered)")
        #expect(recovered.stderr.contains("backups made before now still need the old passphrase"), "\(recovered)")
        let listed = try cli.run(["list", "--passphrase-file", newPassphrase])
        #expect(listed.status == 0 && listed.stdout.contains("Quintessa Marlowe"), "\(listed)")
        // The backup from before still wants the passphrase of its day, and restore says why.
        let restore = try cli.run([
            "restore", cli.path("before.age"), "--to", cli.path("restored.rxv"), "--passphrase-file", newPassphrase
        ])
        #expect(restore.status == 77 && restore.stderr.contains("older than the last passphrase change"), "\(restore)")
        #expect(!FileManager.default.fileExists(atPath: cli.path("restored.rxv")))
        // The code still works later (it stays until its slot is removed), and the change is logged.
        let log = try cli.run(["log", "--passphrase-file", newPassphrase])
        #expect(
            log.stdout.contains("passphrase-changed") && log.stdout.contains("with the recovery code of slot 2"),
            "\(log)")
        #expect(try cli.run(["check", "--passphrase-file", newPassphrase]).status == 0)
        // With no recovery slot, the error says so.
        let none = try other.run(["key", "remove", "2", "--yes"])
        #expect(none.status == 0, "\(none)")
        let noSlot = try other.run(["passwd", "--recovery-key-file", foreign, "--new-passphrase-file", newPassphrase])
        #expect(noSlot.status == 77 && noSlot.stderr.contains("this vault has no recovery key"), "\(noSlot)")
    }

    @Test func passwdChangesTheCostOfTheSlotItOpensAndStatusShowsIt() throws {
        let (cli, partner) = try withPartner()
        let moderate = try cli.run(["passwd", "--kdf", "moderate", "--new-passphrase-file", cli.passphraseFile])
        #expect(
            moderate.status == 0
                && moderate.stdout == "passphrase changed (key slot 1, moderate key-derivation cost)\n", "\(moderate)")
        let status = try cli.json(try cli.run(["status", "--format", "json"]).stdout)
        let slots = try #require(status["keySlots"] as? [[String: Any]])
        #expect(slots.compactMap { ($0["kdf"] as? [String: Any])?["preset"] as? String } == ["moderate", "interactive"])
        #expect((status["kdf"] as? [String: Any])?["preset"] as? String == "moderate")
        // The partner's passwd changes slot 2 only: slot 1's passphrase still opens.
        let newPartner = try cli.write("partner's second passphrase\n", to: "partner2")
        let changed = try cli.run(["passwd", "--passphrase-file", partner, "--new-passphrase-file", newPartner])
        #expect(changed.status == 0 && changed.stdout.contains("key slot 2, interactive"), "\(changed)")
        #expect(try cli.run(["list", "--passphrase-file", partner]).status == 77)
        #expect(try cli.run(["list", "--passphrase-file", newPartner]).status == 0)
        #expect(try cli.run(["list"]).status == 0)
        let text = try cli.run(["status"])
        #expect(
            text.stdout.contains(
                "key slots      1 passphrase: moderate (ops 3, 256 MiB); 2 passphrase: interactive (ops 2, 64 MiB)"),
            "\(text)")
    }

    /// What someone who can write the file but holds no key can do with slots: nothing that
    /// goes unnoticed by the owner's next command or `check`.
    @Test func slotsWrittenDroppedOrPutBackByAnyoneButTheOwnerAreCaught() throws {
        let (cli, partner) = try withPartner()
        #expect(try cli.run(["key", "add", "--recovery"]).status == 0)
        let partnerRow = try slotRowHex(cli, 2)
        // Dropping the recovery slot.
        try FileManager.default.copyItem(atPath: cli.vaultPath, toPath: cli.path("before.rxv"))
        try sql(cli, "DELETE FROM key_slot WHERE id = 3")
        let dropped = try cli.run(["list"])
        #expect(dropped.status == 76 && dropped.stderr.contains("key slot 3 was deleted from the file"), "\(dropped)")
        let check = try cli.run(["check"])
        #expect(check.status == 76 && check.stdout.contains("key slot 3 was deleted from the file"), "\(check)")
        // Back to the owner's file; the owner removes the partner's slot; someone puts it back.
        try FileManager.default.removeItem(atPath: cli.vaultPath)
        try FileManager.default.copyItem(atPath: cli.path("before.rxv"), toPath: cli.vaultPath)
        #expect(try cli.run(["key", "remove", "2", "--yes"]).status == 0)
        try sql(cli, partnerRow)
        // The old passphrase unwraps the same root key again (it always could, from any old
        // copy: SECURITY.md), but no owner command works on the file until the owner sees it.
        let putBack = try cli.run(["list", "--passphrase-file", partner])
        #expect(putBack.status == 76 && putBack.stderr.contains("key slot 2 is not one the owner added"), "\(putBack)")
        #expect(try cli.run(["list"]).status == 76)
        #expect(try cli.run(["check"]).stdout.contains("key slot 2 is not one the owner added"))
        try sql(cli, "DELETE FROM key_slot WHERE id = 2")
        #expect(try cli.run(["list"]).status == 0)
        // A slot taken from another vault (the writer's own, whose passphrase they know) opens nothing here.
        let other = try CLIHarness(passphrase: "the writer's own vault")
        try other.initVault()
        #expect(
            try other.run([
                "key", "add", "--kdf", "interactive", "--new-passphrase-file",
                try other.write("writer's slot\n", to: "w")
            ]).status == 0)
        try sql(cli, try slotRowHex(other, 2))
        let writer = try cli.run(["list", "--passphrase-file", other.path("w")])
        #expect(writer.status == 77, "\(writer)")
        #expect(try cli.run(["check"]).stdout.contains("key slot 2 is not one the owner added"))
        try sql(cli, "DELETE FROM key_slot WHERE id = 2")
        // A slot's cost lowered in place: it no longer opens (the cost is in its associated data) and check names it.
        let fresh = try cli.write("another partner passphrase\n", to: "p3")
        #expect(try cli.run(["key", "add", "--kdf", "moderate", "--new-passphrase-file", fresh]).status == 0)
        try sql(cli, "UPDATE key_slot SET kdf_ops_limit = 2, kdf_mem_limit = 67108864 WHERE id = 2")
        #expect(try cli.run(["list", "--passphrase-file", fresh]).status == 77)
        #expect(try cli.run(["check"]).stdout.contains("key slot 2 is not the one the owner wrote"))
    }

    @Test func theAttachmentSizeLimitIsASettingOnlyTheOwnerChanges() throws {
        let cli = try CLIHarness()
        try cli.initVault()
        let id = try cli.add(CLIHarness.glassesArguments)
        #expect(try cli.run(["config", "get", "max-attachment-size"]).stdout == "33554432\n")
        let set = try cli.run(["config", "set", "max-attachment-size", "100k"])
        #expect(set.status == 0 && set.stdout == "max-attachment-size: 32 MiB -> 100 KiB\n", "\(set)")
        let show = try cli.run(["config", "show"])
        #expect(show.stdout.hasPrefix("max-attachment-size  100 KiB (102400 bytes)\n"), "\(show)")
        let json = try cli.json(try cli.run(["config", "show", "--format", "json"]).stdout)
        #expect(json["max-attachment-size"] as? Int == 102_400)
        // The new limit is the one attach enforces, and the refusal says how to raise it.
        let big = cli.path("big.png")
        #expect(FileManager.default.createFile(atPath: big, contents: Data(count: 200_000)))
        let refused = try cli.run(["attach", id, big])
        #expect(refused.status == 65 && refused.stderr.contains("config set max-attachment-size"), "\(refused)")
        #expect(try cli.run(["config", "set", "max-attachment-size", "lots"]).status == 64)
        #expect(try cli.run(["config", "set", "max-attachment-size", "0"]).status == 64)
        #expect(try cli.run(["log"]).stdout.contains("max-attachment-size 33554432 -> 102400 bytes"))
        // Raised in the file by someone without the key: every owner command refuses, check names it.
        try sql(cli, "UPDATE vault_header SET max_attachment_bytes = 1099511627776")
        let edited = try cli.run(["list"])
        #expect(
            edited.status == 76
                && edited.stderr.contains(
                    "the header's attachment size limit (1099511627776 bytes) is not the one the owner set (102400 bytes)"
                ), "\(edited)")
        #expect(try cli.run(["check"]).status == 76)
        #expect(try cli.run(["config", "show"]).status == 76)
    }

    @Test func aFormatThreeVaultKeepsItsPassphraseAsSlotOne() throws {
        let cli = try CLIHarness(passphrase: "format three fixture", today: "2026-06-20")
        #expect(
            FileManager.default.createFile(atPath: cli.vaultPath, contents: nil, attributes: [.posixPermissions: 0o600])
        )
        let database = try Database(path: cli.vaultPath)
        try database.execute(try String(contentsOfFile: FormatUpgradeCLITests.fixture("format3.sql"), encoding: .utf8))
        // Reading needs no upgrade: slot 1 is the header's passphrase.
        let before = try cli.run(["key", "list", "--format", "json"])
        #expect(before.status == 0, "\(before)")
        #expect((try cli.json(before.stdout)["slots"] as? [[String: Any]])?.count == 1)
        #expect(try cli.run(["status"]).stdout.contains("format version 3"))
        let other = try CLIHarness()
        try other.initVault()
        let code = try cli.write(try other.run(["key", "add", "--recovery"]).stdout, to: "code")
        let recovery = try cli.run(["passwd", "--recovery-key-file", code, "--new-passphrase-file", cli.passphraseFile])
        #expect(
            recovery.status == 77 && recovery.stderr.contains("this vault has no recovery key (it is in format 3"),
            "\(recovery)")
        // Adding a slot upgrades the vault to format 5 (through 4) in the same write.
        let partner = try cli.write("partner of a format 3 vault\n", to: "partner")
        #expect(try cli.run(["key", "add", "--kdf", "interactive", "--new-passphrase-file", partner]).status == 0)
        #expect(try cli.run(["status"]).stdout.contains("format version 8"))
        for passphrase in [cli.passphraseFile, partner] {
            let listed = try cli.run(["list", "--passphrase-file", passphrase])
            #expect(
                listed.status == 0 && listed.stdout.contains("Ada Lovelace") && listed.stdout.contains("Ben Okri"),
                "\(listed)")
        }
        let check = try cli.run(["check"])
        #expect(check.status == 0, "\(check)")
        // The old rows still open for the clients.
        try FileManager.default.copyItem(
            atPath: FormatUpgradeCLITests.fixture("format3-lens-shop.age"), toPath: cli.path("lens-shop.key"))
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: cli.path("lens-shop.key"))
        let client = try cli.run(["list", "--identity", cli.path("lens-shop.key")])
        #expect(client.status == 0 && client.stdout.contains("Ada Lovelace"), "\(client)")
    }

    @Test func anUnlockedVaultLocksWhenItsSlotsChange() throws {
        let agent = try AgentHarness()
        let cli = agent.cli
        let partner = try cli.write("partner's own passphrase 2026\n", to: "partner")
        #expect(try cli.run(["key", "add", "--kdf", "interactive", "--new-passphrase-file", partner]).status == 0)
        // Unlocked with the partner's passphrase: owner commands then need none.
        let unlocked = try cli.run(["unlock", "--passphrase-file", partner])
        #expect(unlocked.status == 0, "\(unlocked)")
        #expect(try cli.run(["list", "--no-input"], environment: ["RXVAULT_PASSPHRASE_FILE": nil]).status == 0)
        // Adding a recovery code needs a passphrase, not the agent, and locks the agent.
        #expect(
            try cli.run(["key", "add", "--recovery", "--no-input"], environment: ["RXVAULT_PASSPHRASE_FILE": nil])
                .status == 64)
        let added = try cli.run(["key", "add", "--recovery"])
        #expect(added.status == 0 && added.stderr.contains("is locked now"), "\(added)")
        #expect(agent.eventually(5) { agent.agents().isEmpty })
        #expect(try cli.run(["list", "--no-input"], environment: ["RXVAULT_PASSPHRASE_FILE": nil]).status == 64)
        // A slot dropped from the file behind rxvault's back: the agent sees the key wrapping
        // changed, refuses and locks.
        #expect(try cli.run(["unlock"]).status == 0)
        let database = try Database(path: cli.vaultPath)
        try database.execute("DELETE FROM key_slot WHERE id = 2")
        let refused = try cli.run(["list"], environment: ["RXVAULT_PASSPHRASE_FILE": nil])
        #expect(refused.status != 0 && refused.stderr.contains("key slot added or removed"), "\(refused)")
    }
}
