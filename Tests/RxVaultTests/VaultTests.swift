import Foundation
import RxCrypto
import RxModel
import RxStore
import RxTestSupport
import Testing

@testable import RxVault

@Suite struct VaultTests {
    @Test func addListShowEditHistoryRemove() throws {
        let t = try TestVault()
        let vault = try t.open()
        let (record, advisories) = try vault.add(TestVault.glasses())
        #expect(advisories.isEmpty)
        #expect(record.version == 1)
        #expect(try vault.list().map(\.id) == [record.id])
        #expect(try vault.prescription(try vault.resolve(record.id.short)).prescription == record.prescription)

        let edited = try #require(try vault.edit(record.id) { $0.note = "new frames" })
        #expect(edited.0.version == 2)
        #expect(
            try vault.edit(record.id) { $0.note = "new frames" } == nil, "an edit that changes nothing adds no version")
        let history = try vault.history(record.id)
        #expect(history.map(\.version) == [1, 2])
        #expect(history[0].prescription.note == nil)
        #expect(try vault.prescription(record.id, version: 1).prescription.note == nil)
        #expect(try vault.counts().versions == 2)

        try vault.remove(record.id)
        #expect(try vault.list().isEmpty)
        #expect(try vault.counts().versions == 0)
        #expect(throws: VaultError.self) { try vault.remove(record.id) }
    }

    @Test func invalidPrescriptionWritesNothing() throws {
        let t = try TestVault()
        let vault = try t.open()
        var rx = TestVault.glasses()
        rx.right?.sphere = Hundredths(raw: 3025)
        #expect(throws: VaultError.self) { try vault.add(rx) }
        #expect(try vault.counts().prescriptions == 0)
        let (record, _) = try vault.add(TestVault.glasses())
        #expect(throws: VaultError.self) { try vault.edit(record.id) { $0.right?.axis = 200 } }
        #expect(try vault.history(record.id).count == 1)
    }

    @Test func wrongPassphraseIsItsOwnError() throws {
        let t = try TestVault()
        do {
            _ = try t.open(TestVault.secret("not the passphrase"))
            Issue.record("opened with a wrong passphrase")
        } catch let error as VaultError {
            guard case .wrongPassphrase = error else {
                Issue.record("got \(error)")
                return
            }
        }
    }

    @Test func changingThePassphraseRewrapsOnlyTheRootKey() throws {
        let t = try TestVault()
        let vault = try t.open()
        let (record, _) = try vault.add(TestVault.glasses())
        let before = try t.raw().blob("SELECT content || wrapped_key FROM prescription_version")
        let newPassphrase = TestVault.secret("a brand new passphrase")
        try vault.changePassphrase(to: newPassphrase)
        #expect(
            try t.raw().blob("SELECT content || wrapped_key FROM prescription_version") == before, "no record rewritten"
        )
        #expect(throws: VaultError.self) { _ = try t.open() }
        #expect(try t.open(newPassphrase).prescription(record.id).prescription == record.prescription)
    }

    @Test func prefixesResolveLikeGit() throws {
        let t = try TestVault()
        let vault = try t.open()
        let (record, _) = try vault.add(TestVault.glasses())
        #expect(try vault.resolve(String(record.id.hex.prefix(4))) == record.id)
        #expect(try vault.resolve(record.id.hex.uppercased()) == record.id)
        #expect(throws: VaultError.self) { try vault.resolve("abc") }
        #expect(throws: VaultError.self) { try vault.resolve("xyz1") }
        let other = record.id.hex.first == "0" ? "1111" : "0000"
        #expect(throws: VaultError.self) { try vault.resolve(other) }
    }

    @Test func shortFormsGrowWhereIdsShareAPrefix() {
        let a = PrescriptionID(hex: "0123456789abcdef0123456789abcdef")!
        let b = PrescriptionID(hex: "0123456789abffff0123456789abcdef")!
        let c = PrescriptionID(hex: "fedcba9876543210fedcba9876543210")!
        let forms = PrescriptionID.shortForms([a, b, c])
        #expect(forms[a] == "0123456789abc")
        #expect(forms[b] == "0123456789abf")
        #expect(forms[c] == "fedcba98")
    }

    @Test func createRefusesAnExistingFileAndLeavesNoTemporaryFiles() throws {
        let t = try TestVault()
        #expect(throws: VaultError.self) {
            try Vault.create(at: t.path, passphrase: t.passphrase, kdf: PasswordKDF(preset: .interactive))
        }
        let files = try FileManager.default.contentsOfDirectory(atPath: t.directory.path)
        #expect(files.allSatisfy { !$0.contains(".tmp-") })
        let mode = try FileManager.default.attributesOfItem(atPath: t.path)[.posixPermissions] as? Int
        #expect(mode == 0o600)
    }

    @Test func notAVault() throws {
        let t = try TestVault()
        let text = t.directory.appendingPathComponent("notes.txt").path
        try Data("hello, this is not a vault at all; it is long enough to look like a header".utf8).write(
            to: URL(fileURLWithPath: text))
        #expect(throws: VaultError.self) { _ = try VaultHeader.read(at: text) }
        #expect(throws: VaultError.self) {
            _ = try VaultHeader.read(at: t.directory.appendingPathComponent("missing.rxv").path)
        }
        let other = t.directory.appendingPathComponent("other.db").path
        let db = try SQLiteTestFile(path: other)
        _ = db
        #expect(throws: VaultError.self) { _ = try VaultHeader.read(at: other) }
    }
}

/// An SQLite database of "another program": right format, wrong application id.
struct SQLiteTestFile {
    init(path: String) throws {
        _ = FileManager.default.createFile(atPath: path, contents: nil)
        let db = try Database(path: path)
        try db.execute("CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (1);")
    }
}

/// Path splitting follows POSIX dirname/basename and never traps (Foundation's did on "V").
@Suite struct PathTextTests {
    @Test(arguments: [
        ("V", ".", "V"), ("a/b", "a", "b"), ("/v.rxv", "/", "v.rxv"), ("/", "/", "/"), ("", ".", ""),
        ("a/b/", "a", "b"), ("a//b", "a", "b"), ("//x", "/", "x"), (".", ".", "."), ("..", ".", ".."),
        ("dir/", ".", "dir"), ("a/b/c.age", "a/b", "c.age")
    ])
    func splits(path: String, folder: String, name: String) {
        #expect(PathText.folder(of: path) == folder, "folder of '\(path)'")
        #expect(PathText.name(of: path) == name, "name of '\(path)'")
    }

    @Test func joins() {
        #expect(PathText.join(".", "x") == "./x")
        #expect(PathText.join("/", "x") == "/x")
        #expect(PathText.join("a/b", "x") == "a/b/x")
    }
}

@Suite struct BackupWorkFactorTests {
    /// 2^logN KiB of scrypt memory against the Argon2id memory of the vault's passphrase, capped
    /// at age's default and floored at 10.
    @Test func theWorkFactorMatchesTheVaultsMemoryCost() {
        #expect(BackupFile.scryptWorkFactor(matching: PasswordKDF(preset: .interactive)) == 16)
        #expect(BackupFile.scryptWorkFactor(matching: PasswordKDF(preset: .moderate)) == 18)
        #expect(BackupFile.scryptWorkFactor(matching: PasswordKDF(preset: .sensitive)) == 18)
        #expect(BackupFile.scryptWorkFactor(matching: PasswordKDF(opsLimit: 1, memLimit: 8192)) == 10)
        #expect(BackupFile.scryptWorkFactor(matching: PasswordKDF(opsLimit: 2, memLimit: 3 << 20)) == 11)
    }
}
