import Foundation
import RxStore
import Testing

/// What is on disk: file mode, no plaintext anywhere, removal really removes.
@Suite struct VaultFileTests {
    @Test func initCreatesA0600FileAndNeverOverwrites() throws {
        let cli = try CLIHarness()
        try cli.initVault()
        let mode = try FileManager.default.attributesOfItem(atPath: cli.vaultPath)[.posixPermissions] as? Int
        #expect(mode == 0o600)
        let before = cli.vaultFileBytes()
        let again = try cli.run(["init", "--kdf", "interactive"])
        #expect(again.status == 73)
        #expect(again.stderr.contains("already exists"))
        #expect(cli.vaultFileBytes() == before)
        let entries = try FileManager.default.contentsOfDirectory(atPath: cli.directory.path)
        #expect(entries.allSatisfy { !$0.contains(".tmp-") })
    }

    @Test func defaultPathFollowsXDGAndCreatesPrivateDirectories() throws {
        let cli = try CLIHarness()
        let xdg = cli.path("xdg")
        let r = try cli.run(["init", "--kdf", "interactive"], environment: ["RXVAULT_PATH": nil, "XDG_DATA_HOME": xdg])
        #expect(r.status == 0, "\(r)")
        #expect(FileManager.default.fileExists(atPath: xdg + "/rxvault/vault.rxv"))
        let mode = try FileManager.default.attributesOfItem(atPath: xdg + "/rxvault")[.posixPermissions] as? Int
        #expect(mode == 0o700)
        let home = try cli.run(["init", "--kdf", "interactive"], environment: ["RXVAULT_PATH": nil])
        #expect(home.status == 0, "\(home)")
        #expect(FileManager.default.fileExists(atPath: cli.directory.path + "/.local/share/rxvault/vault.rxv"))
    }

    /// The search: no patient name, prescriber, brand, date or lens value written by a test
    /// appears in the vault file or its -wal/-shm, while the WAL still holds the fresh writes.
    @Test func nothingSensitiveIsStoredInPlaintext() throws {
        let cli = try CLIHarness()
        try cli.initVault()
        // Hold a reader connection open so the WAL is not folded away when rxvault exits.
        let reader = try Database(path: cli.vaultPath)
        _ = try reader.integer("SELECT count(*) FROM prescription")
        let id = try cli.add(CLIHarness.glassesArguments)
        _ = try cli.add(CLIHarness.contactsArguments)
        #expect(try cli.run(["edit", id, "--note", "Anti-glare coating requested"]).status == 0)
        #expect(FileManager.default.fileExists(atPath: cli.vaultPath + "-wal"))
        let bytes = cli.vaultFileBytes()
        #expect(bytes.count > 30_000, "the search must cover written data")
        let secrets = [
            "Quintessa", "Marlowe", "Fairweather", "Ignatius", "OPT-77123", "Zylofocus", "Aquaclear",
            "Varifocal", "Anti-glare", "2026-03-01", "2028-03-01", "2026-07-01", "1980-04-02",
            "-2.25", "-0.75", "-1.75", "-3.25", "-2.75", "-1.25", "+2.00", "63.5", "60.5", "14.2", "14.5", "baseCurve",
            "x180", "glasses", "contacts", "correct horse", "sphere", "patient"
        ]
        for secret in secrets {
            #expect(!bytes.contains(secret), "'\(secret)' found in the vault files")
            #expect(
                !bytes.contains(Array(secret.utf16).flatMap { [UInt8($0 & 0xff), UInt8($0 >> 8)] }),
                "'\(secret)' found as UTF-16")
        }
    }

    @Test func removeLeavesNoTraceOfTheContentInTheFileOrWAL() throws {
        let cli = try CLIHarness()
        try cli.initVault()
        let keep = try cli.add(CLIHarness.contactsArguments)
        let id = try cli.add(CLIHarness.glassesArguments)
        #expect(try cli.run(["edit", id, "--note", "second version"]).status == 0)
        let db = try Database(path: cli.vaultPath)
        var ciphertexts: [[UInt8]] = []
        try db.prepare("SELECT content, wrapped_key FROM prescription_version WHERE prescription_id LIKE ? || '%'")
            .forEach([.text(id)]) { row in ciphertexts += [row.blob(0), row.blob(1)] }
        #expect(ciphertexts.count == 4)
        // Probes from the middle of each ciphertext: present before (so this test can fail) ...
        let probes = ciphertexts.map { Array($0[24..<($0.count - 8)]) }
        let before = cli.vaultFileBytes()
        for probe in probes { #expect(before.contains(probe)) }

        let r = try cli.run(["remove", id, "--yes"])
        #expect(r.status == 0, "\(r)")
        // ... and gone from the file and the WAL after.
        let after = cli.vaultFileBytes()
        for probe in probes { #expect(!after.contains(probe), "removed ciphertext still on disk") }
        #expect(try cli.run(["show", id]).status == 67)
        #expect(try cli.run(["show", keep]).status == 0)
    }

    @Test func concurrentWritersWaitInsteadOfFailing() throws {
        let cli = try CLIHarness()
        try cli.initVault()
        let count = 6
        let results = LockedArray()
        DispatchQueue.concurrentPerform(iterations: count) { i in
            var arguments = CLIHarness.glassesArguments
            arguments[arguments.firstIndex(of: "--note")! + 1] = "writer \(i)"
            let status = (try? cli.run(arguments).status) ?? -1
            results.append(status)
        }
        #expect(results.values == Array(repeating: 0, count: count))
        let list = try cli.run(["list", "--format", "json"])
        let prescriptions = try #require(try cli.json(list.stdout)["prescriptions"] as? [Any])
        #expect(prescriptions.count == count)
    }
}

final class LockedArray: @unchecked Sendable {
    private var storage: [Int32] = []
    private let lock = NSLock()
    func append(_ value: Int32) {
        lock.lock()
        storage.append(value)
        lock.unlock()
    }
    var values: [Int32] {
        lock.lock()
        defer { lock.unlock() }
        return storage
    }
}
