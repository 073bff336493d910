import Foundation
import RxStore
import RxTestSupport
import RxVault
import Testing

/// `ConflictCopies` on real vault files: which files beside the vault it names, what it reads
/// of them without the key, and that looking makes nothing beside them.
@Suite struct ConflictCopiesTests {
    static let syncthingName = "vault.sync-conflict-20261207-101500-ABCDEFG.rxv"

    /// A vault with two writes, and the folder it is in.
    func vaultWithWrites() throws -> (TestVault, counter: Int) {
        let test = try TestVault()
        return (test, try write(to: test, patients: ["Ann Example", "Bob Example"]))
    }

    /// Adds a prescription for each patient and closes the vault (SQLite folds its WAL into the
    /// file then, as at the end of every command); returns the write counter.
    func write(to test: TestVault, patients: [String]) throws -> Int {
        let vault = try test.open()
        for patient in patients { _ = try vault.add(TestVault.glasses(patient: patient)) }
        return try vault.writeCounter()
    }

    func copy(_ test: TestVault, to name: String) throws -> String {
        let target = test.folder.path(name)
        try FileManager.default.copyItem(atPath: test.path, toPath: target)
        return target
    }

    func names(_ copies: [ConflictCopy]) -> Set<String> { Set(copies.map(\.name)) }

    @Test func findsTheSyncToolsCopiesAndOtherFilesOfTheVault() throws {
        let (test, counter) = try vaultWithWrites()
        let id = try VaultHeader.read(at: test.path).vaultID
        _ = try copy(test, to: Self.syncthingName)
        _ = try copy(test, to: "kept by hand.db")
        // Not copies: another vault (named as a copy or not), SQLite's and rxvault's companion
        // files, a file of zeros the size of a page, a folder with a copy's name.
        try createVault(at: test.folder.path("vault (conflicted copy 2026-12-07).rxv"), passphrase: "another")
        try createVault(at: test.folder.path("other.rxv"), passphrase: "another")
        _ = try copy(test, to: "kept by hand.db-wal")
        _ = try copy(test, to: "kept by hand.db-journal")
        _ = try copy(test, to: "vault.sync-conflict-20261207-101500-ABCDEFG.rxv-shm")
        _ = try copy(test, to: "vault.rxv.tmp-1f2e")
        try Data(count: 4096).write(to: test.folder.url.appendingPathComponent("zeros.bin"))
        try FileManager.default.createDirectory(
            atPath: test.folder.path("vault (conflicted copy 2026-12-08).rxv"), withIntermediateDirectories: false)
        // A sync tool's name on a file not (yet) readable as a vault: named, without a counter.
        try Data("half a file".utf8).write(
            to: test.folder.url.appendingPathComponent("vault_conflict-20261207-101500.rxv"))

        let found = ConflictCopies.find(besideVaultAt: test.path, vaultID: id)
        #expect(names(found) == [Self.syncthingName, "kept by hand.db", "vault_conflict-20261207-101500.rxv"])
        let byName = Dictionary(uniqueKeysWithValues: found.map { ($0.name, $0) })
        #expect(byName[Self.syncthingName]?.form == .syncthing)
        #expect(byName[Self.syncthingName]?.writeCounter == counter)
        #expect(byName[Self.syncthingName]?.path == test.folder.path(Self.syncthingName))
        #expect(byName["kept by hand.db"]?.form == .vaultCopy)
        #expect(byName["kept by hand.db"]?.writeCounter == counter)
        #expect(byName["vault_conflict-20261207-101500.rxv"]?.form == .nextcloud)
        #expect(byName["vault_conflict-20261207-101500.rxv"]?.writeCounter == nil)

        // Without the vault's id (its header unreadable), the sync tools' names alone.
        #expect(
            names(ConflictCopies.find(besideVaultAt: test.path, vaultID: nil))
                == [Self.syncthingName, "vault_conflict-20261207-101500.rxv", "vault (conflicted copy 2026-12-07).rxv"])
    }

    /// Each copy's counter is its own: the copy taken before a write is a write behind.
    @Test func newestFirstEachWithItsOwnCounter() throws {
        let (test, counter) = try vaultWithWrites()
        let older = try copy(test, to: "vault (conflicted copy 2026-12-07).rxv")
        try FileManager.default.setAttributes(
            [.modificationDate: Date(timeIntervalSinceNow: -3600)], ofItemAtPath: older)
        let newer = try write(to: test, patients: ["Cy Example"])
        _ = try copy(test, to: Self.syncthingName)
        let found = ConflictCopies.find(besideVaultAt: test.path, vaultID: try VaultHeader.read(at: test.path).vaultID)
        #expect(found.map(\.name) == [Self.syncthingName, "vault (conflicted copy 2026-12-07).rxv"])
        #expect(found.map(\.writeCounter) == [newer, counter])
        #expect(newer > counter)
        #expect(found.map(\.form) == [.syncthing, .dropbox])
    }

    @Test func aDatabaseOrAnEmptyFolderHasNone() throws {
        let (test, _) = try vaultWithWrites()
        #expect(ConflictCopies.find(besideVaultAt: test.path, vaultID: nil).isEmpty)
        #expect(ConflictCopies.find(besideVaultAt: "postgres://rx@127.0.0.1:1/none", vaultID: nil).isEmpty)
        #expect(ConflictCopies.find(besideVaultAt: test.folder.path("gone/vault.rxv"), vaultID: nil).isEmpty)
    }

    /// A plain read-only open of a WAL-mode file makes its -wal and -shm files (and leaves them
    /// behind): in a synced folder they would travel. Peeking makes nothing, writes nothing,
    /// and a write through the peeking connection fails.
    @Test func peekingMakesNothingBesideTheFile() throws {
        let (test, _) = try vaultWithWrites()
        let target = try copy(test, to: Self.syncthingName)
        try FileManager.default.removeItem(atPath: test.path)
        let before = try FileManager.default.contentsOfDirectory(atPath: test.folder.path)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: target))
        let store = try SQLiteRecordStore(peekingAt: target)
        #expect(try store.header().vaultID.count == VaultHeader.vaultIDLength)
        #expect(try FileManager.default.contentsOfDirectory(atPath: test.folder.path).sorted() == before.sorted())
        #expect(throws: StoreError.self) { try store.database.execute("CREATE TABLE peeked (x)") }
        let peeked = try PeekedVault.peek(at: target)
        #expect(peeked.writeCounter != nil)
        #expect(try FileManager.default.contentsOfDirectory(atPath: test.folder.path).sorted() == before.sorted())
        #expect(try Data(contentsOf: URL(fileURLWithPath: target)) == bytes)
    }

    /// A path with characters an SQLite URI would read otherwise (`?`, `#`, `%`, a space).
    @Test func peeksAFileWhateverItsName() throws {
        let (test, counter) = try vaultWithWrites()
        let odd = try copy(test, to: "vault?x=1#2 %41 (conflicted copy 2026-12-07).rxv")
        #expect(try PeekedVault.peek(at: odd).writeCounter == counter)
    }

    /// One listing, and only files that look like SQLite are opened: thousands of other files
    /// beside the vault are passed over in well under a second on any machine.
    @Test func aCrowdedFolderStaysCheap() throws {
        let (test, _) = try vaultWithWrites()
        let id = try VaultHeader.read(at: test.path).vaultID
        let photo = Data(count: 1024)
        for i in 0..<2000 { try photo.write(to: test.folder.url.appendingPathComponent("photo-\(i).jpg")) }
        _ = try copy(test, to: Self.syncthingName)
        let start = Date()
        let found = ConflictCopies.find(besideVaultAt: test.path, vaultID: id)
        let seconds = Date().timeIntervalSince(start)
        #expect(found.map(\.name) == [Self.syncthingName])
        #expect(seconds < 3, "\(seconds) s for 2000 files")
    }
}
