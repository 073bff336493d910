import Foundation
import RxStore
import Testing

/// Through the binary: rows deleted or put back from an older copy of the vault, and
/// the whole file replaced by an older copy. `check` exits 76 naming what is wrong, the reading
/// command exits 76, and nothing is re-sealed to a revoked client.
@Suite struct RowRollbackCLITests {
    func copy(_ cli: CLIHarness, _ name: String) throws -> String { try cli.consistentCopy(name) }

    func attacker(_ cli: CLIHarness, old: String) throws -> Database {
        let db = try Database(path: cli.vaultPath)
        try db.execute("PRAGMA foreign_keys = OFF")
        try db.prepare("ATTACH DATABASE ? AS old").run([.text(old)])
        return db
    }

    @Test func aRevokedClientPuttingItsGrantBackReadsNothingNewer() throws {
        let cli = try CLIHarness()
        try cli.initVault()
        let rx = try cli.add(CLIHarness.glassesArguments)
        let recipient = try cli.ageKeygen("shop.key")
        #expect(try cli.run(["client", "add", "shop", "--recipient", recipient]).status == 0)
        #expect(try cli.run(["grant", "shop", rx]).status == 0)
        let old = try copy(cli, "kept-by-the-client.rxv")
        #expect(try cli.run(["revoke", "shop", rx]).status == 0)

        // The client puts back its grant row, the version rows it was sealed for and the old bucket.
        let db = try attacker(cli, old: old)
        try db.execute(
            "DELETE FROM main.prescription_version WHERE version > (SELECT max(version) FROM old.prescription_version)")
        try db.execute("INSERT INTO main.access_grant SELECT * FROM old.access_grant")
        try db.execute("DELETE FROM main.search_index")
        try db.execute("INSERT INTO main.search_index SELECT * FROM old.search_index")

        let check = try cli.run(["check"])
        #expect(check.status == 76, "\(check)")
        #expect(check.stdout.contains("revoked grant put back"), "\(check)")
        let grants = try cli.run(["grants"])
        #expect(grants.status == 76 && grants.stderr.contains("grant"), "\(grants)")
        let edit = try cli.run(["edit", rx, "--note", "written after the revoke"])
        #expect(edit.status == 76, "\(edit)")
        // Nothing was sealed to the client: with its identity it sees no newer version.
        let asClient = try cli.run(
            ["--identity", cli.path("shop.key"), "show", rx, "--format", "json"],
            environment: ["RXVAULT_PASSPHRASE_FILE": nil])
        #expect(!asClient.stdout.contains("written after the revoke"))
        #expect(
            try db.integer("SELECT max(version) FROM main.prescription_version")
                == db.integer("SELECT max(version) FROM old.prescription_version"))
    }

    @Test func attachmentRowsDeletedOrPutBackAreRefused() throws {
        let cli = try CLIHarness()
        try cli.initVault()
        let rx = try cli.add(CLIHarness.glassesArguments)
        #expect(try cli.run(["attach", rx, AttachmentTests.photo, "--name", "kept.png"]).status == 0)
        #expect(try cli.run(["attach", rx, AttachmentTests.pdf, "--name", "detached.pdf"]).status == 0)
        let old = try copy(cli, "both.rxv")
        #expect(try cli.run(["detach", rx, "detached.pdf", "--yes"]).status == 0)
        #expect(try cli.run(["check", "--read-data"]).status == 0)

        // A detached attachment put back (with its chunks) is not listed, and would not be re-sealed.
        let db = try attacker(cli, old: old)
        try db.execute(
            "INSERT INTO main.attachment SELECT * FROM old.attachment WHERE id NOT IN (SELECT id FROM main.attachment)")
        try db.execute(
            "INSERT INTO main.attachment_chunk SELECT * FROM old.attachment_chunk WHERE attachment_id NOT IN (SELECT attachment_id FROM main.attachment_chunk)"
        )
        var check = try cli.run(["check", "--read-data"])
        #expect(check.status == 76 && check.stdout.contains("detached attachment put back"), "\(check)")
        var list = try cli.run(["attachments", rx])
        #expect(list.status == 76 && !list.stdout.contains("detached.pdf"), "\(list)")

        // The kept one's row deleted: --read-data used to pass.
        try db.execute("DELETE FROM main.attachment_chunk WHERE attachment_id IN (SELECT id FROM main.attachment)")
        try db.execute("DELETE FROM main.attachment")
        check = try cli.run(["check", "--read-data"])
        #expect(check.status == 76 && check.stdout.contains("was deleted from the file"), "\(check)")
        list = try cli.run(["attachments", rx])
        #expect(list.status == 76, "\(list)")
    }

    @Test func aWholeOlderFileWarnsAndRestoreRecordsTheChoice() throws {
        let cli = try CLIHarness()
        let state = cli.path("state")
        cli.environment["XDG_STATE_HOME"] = state
        try cli.initVault()
        let rx = try cli.add(CLIHarness.glassesArguments)
        #expect(try cli.run(["backup", cli.path("old.age")]).status == 0)
        let old = try copy(cli, "old.rxv")
        #expect(try cli.run(["edit", rx, "--note", "newer"]).status == 0)
        // One counter anchor for the file, and (format 8) what this computer knows of the vault
        // and the backups it made.
        let folder = try FileManager.default.contentsOfDirectory(atPath: state + "/rxvault")
        let anchors = folder.filter {
            !$0.hasSuffix(".knowledge") && !$0.hasSuffix(".lock") && !$0.hasSuffix(".backups")
        }
        #expect(anchors.count == 1, "\(folder)")
        #expect(folder.contains { $0.hasSuffix(".backups") }, "the backup is remembered: \(folder)")

        // The file replaced by its older copy: it reads, with a warning; writes are refused.
        for suffix in ["", "-wal", "-shm"] { unlink(cli.vaultPath + suffix) }
        try FileManager.default.copyItem(atPath: old, toPath: cli.vaultPath)
        let show = try cli.run(["show", rx])
        #expect(
            show.status == 0
                && show.stderr.contains("warning: this vault is older than a copy of it this computer has seen"),
            "\(show)")
        let write = try cli.run(["edit", rx, "--note", "on the old copy"])
        #expect(write.status == 76 && write.stderr.contains("--accept-rollback"), "\(write)")
        let accept = try cli.run(["check", "--accept-rollback"])
        #expect(accept.status == 0, "\(accept)")
        let after = try cli.run(["show", rx])
        #expect(after.status == 0 && !after.stderr.contains("warning"), "\(after)")

        // Back to the newer state, then restore the old backup: restore records the choice.
        #expect(try cli.run(["edit", rx, "--note", "newer again"]).status == 0)
        #expect(try cli.run(["edit", rx, "--note", "and again"]).status == 0)
        let restore = try cli.run(["restore", cli.path("old.age"), "--to", cli.vaultPath, "--force"])
        #expect(restore.status == 0, "\(restore)")
        let restored = try cli.run(["show", rx])
        #expect(restored.status == 0 && !restored.stderr.contains("warning"), "\(restored)")
        #expect(try cli.run(["edit", rx, "--note", "after the restore"]).status == 0)
    }
}
