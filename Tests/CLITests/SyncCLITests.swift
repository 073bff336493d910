import Foundation
import RxTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `rxvault sync FOLDER` (issue 48, item 5) through the binary: two devices (A: the harness's
/// HOME; B: a HOME of its own, its vault started as a copy of A's file) keep in step through a
/// folder that holds only ciphertext; only what is new moves, a device in step moves nothing;
/// a revocation made on one device is never undone by the other's sync; an altered, rolled-back
/// or foreign remote is refused with nothing written.
@Suite struct SyncCLITests {
    static func json(_ result: CLIHarness.Result) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(result.stdout.utf8))) as? [String: Any] ?? [:]
    }

    @Test func twoDevicesKeepInStepThroughAFolderThatHoldsOnlyCiphertext() throws {
        let d = try DeviceForkTests.Devices()
        let remote = d.cli.path("remote")
        let ann = try #require(try d.a(DeviceForkTests.annGlasses).stdout.split(separator: "\n").first.map(String.init))
        let bob = try #require(
            try d.b(DeviceForkTests.bobContacts).stdout.split(separator: "\n").first.map(String.init))

        let first = try d.a(["sync", remote])
        #expect(first.status == 0 && first.stdout.contains("pushed this device's state"), "\(first)")
        let fromB = try d.b(["sync", remote, "--format", "json"])
        #expect(fromB.status == 0, "\(fromB)")
        let b1 = Self.json(fromB)
        #expect((b1["merged"] as? [Any])?.count == 1 && b1["pushed"] as? Bool == true, "\(fromB)")
        let backToA = try d.a(["sync", remote])
        #expect(backToA.status == 0 && backToA.stdout.contains("1 new prescription"), "\(backToA)")

        // In step: both read the heads and move nothing, in either order. (Before anything
        // else: an export is an owner write, its audit entry news to the other device.)
        for device in [d.b, d.a, d.b] {
            let again = try device(["sync", remote, "--format", "json"])
            let report = Self.json(again)
            #expect(again.status == 0 && report["inStep"] as? Bool == true, "\(again)")
            #expect(report["chunksUploaded"] as? Int == 0 && report["chunksDownloaded"] as? Int == 0, "\(again)")
        }
        #expect(try d.a(["sync", remote]).stdout.contains("in step with"))

        for device in [d.a, d.b] {
            let list = try device(["list"])
            #expect(list.stdout.contains(ann) && list.stdout.contains(bob), "\(list)")
            #expect(try device(["check"]).status == 0)
        }
        let exportA = MergeCLITests.exported(try d.a(["export", "--format", "json", "--out", "-"]))
        let exportB = MergeCLITests.exported(try d.b(["export", "--format", "json", "--out", "-"]))
        #expect(exportA == exportB)
        // Those exports were writes (their audit entries): a round carries them, then in step.
        for device in [d.a, d.b, d.a] { #expect(try device(["sync", remote]).status == 0) }
        #expect(try d.b(["sync", remote]).stdout.contains("in step with"))

        // The remote holds no plaintext: no name, no prescriber, no passphrase, not even the
        // vault file's own header, in any file but the marker (which names the vault id only).
        var files = 0
        let enumerator = try #require(FileManager.default.enumerator(atPath: remote))
        while let relative = enumerator.nextObject() as? String {
            let path = remote + "/" + relative
            var isFolder: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder), !isFolder.boolValue else {
                continue
            }
            files += 1
            let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
            for needle in ["Ann Example", "Bob Example", "Dr Who", "Acme", "SQLite format 3", d.cli.passphrase] {
                #expect(bytes.range(of: Data(needle.utf8)) == nil, "\(relative) holds \(needle)")
            }
        }
        #expect(files > 3)
        let marker = try String(contentsOfFile: remote + "/rxvault-remote.txt", encoding: .utf8)
        #expect(marker.hasPrefix("rxvault sync remote 1\nvault "), "\(marker)")
    }

    /// The remote keeps about one state per device: after a push, the pieces no head names that
    /// nobody wrote or relied on for a day are removed (here made a day old by hand), every
    /// piece a head names stays, and the other device pulls the new state whole. A device whose
    /// own head names a piece that is gone pushes again at its next sync.
    @Test func piecesNoDeviceNamesAreRemovedAfterADayAndALostPieceIsPushedAgain() throws {
        let d = try DeviceForkTests.Devices()
        let remote = d.cli.path("remote")
        #expect(try d.a(["sync", remote]).status == 0)
        #expect(try d.b(["sync", remote]).status == 0)
        func pieces() throws -> [String] {
            let enumerator = try #require(FileManager.default.enumerator(atPath: remote + "/chunks"))
            return enumerator.allObjects.compactMap { $0 as? String }.filter { $0.count == 67 }
        }
        func age(_ relative: [String]) {
            var times = [timespec(tv_sec: time(nil) - 2 * 86_400, tv_nsec: 0)]
            times.append(times[0])
            for piece in relative { utimensat(AT_FDCWD, remote + "/chunks/" + piece, &times, 0) }
        }
        let before = try pieces()
        age(before)
        let ann = try #require(try d.a(DeviceForkTests.annGlasses).stdout.split(separator: "\n").first.map(String.init))
        let pushed = try d.a(["sync", remote, "--format", "json"])
        let report = Self.json(pushed)
        #expect(pushed.status == 0 && report["pushed"] as? Bool == true, "\(pushed)")
        let pruned = report["chunksPruned"] as? Int ?? 0
        #expect(pruned > 0 && pruned < before.count, "the superseded pieces of A's state go: \(pushed)")
        #expect(try pieces().count == before.count + (report["chunksUploaded"] as? Int ?? 0) - pruned)
        let pulled = try d.b(["sync", remote])
        #expect(pulled.status == 0 && pulled.stdout.contains("1 new prescription"), "\(pulled)")
        #expect(try d.b(["list"]).stdout.contains(ann))

        // B writes and pushes (a head of its own), A pulls it. Then every piece is lost (a sync
        // tool's mistake): each device's next sync pushes its state again, though it has
        // nothing new, and then both are in step.
        #expect(try d.b(DeviceForkTests.bobContacts).status == 0)
        #expect(try d.b(["sync", remote]).status == 0)
        #expect(try d.a(["sync", remote]).stdout.contains("1 new prescription"))
        try FileManager.default.removeItem(atPath: remote + "/chunks")
        try FileManager.default.createDirectory(atPath: remote + "/chunks", withIntermediateDirectories: false)
        for device in [d.b, d.a] {
            let healed = try device(["sync", remote, "--format", "json"])
            #expect(healed.status == 0 && Self.json(healed)["pushed"] as? Bool == true, "\(healed)")
        }
        for device in [d.a, d.b] {
            let again = try device(["sync", remote])
            #expect(again.status == 0 && again.stdout.contains("in step with"), "\(again)")
            #expect(try device(["check"]).status == 0)
        }
    }

    /// A revokes while B, not knowing, edits the same prescription; both sync. The grant stays
    /// revoked on both, the client's read is refused on both, and the prescription is left in
    /// conflict for the owner (a sync never resolves one).
    @Test func aRevocationSurvivesEverySyncAndAConflictIsLeftForTheOwner() throws {
        let (d, remote, id, key) = try Self.twoDevicesWithAGrant()
        #expect(try d.b(["grants"]).stdout.contains("shop"), "B has the grant")

        #expect(try d.a(["revoke", "shop", String(id)]).status == 0)
        #expect(try d.a(["edit", String(id), "--od-sphere", "-3.00"]).status == 0)
        #expect(try d.b(["edit", String(id), "--os-sphere", "-3.25"]).status == 0)
        #expect(try d.a(["sync", remote]).status == 0)
        let intoB = try d.b(["sync", remote])
        #expect(intoB.status == 0 && intoB.stdout.contains("1 prescription in conflict"), "\(intoB)")
        let intoA = try d.a(["sync", remote])
        #expect(intoA.status == 0, "\(intoA)")
        for device in [d.a, d.b] {
            #expect(!(try device(["grants"])).stdout.contains("shop"), "the revoked grant stays revoked")
            #expect(try device(["conflicts"]).stdout.contains(String(id.prefix(8))))
            #expect(try device(["check"]).status == 0)
        }
        let read = try d.cli.run(["show", String(id), "--identity", key])
        #expect(read.status != 0, "the revoked client reads nothing: \(read)")
        #expect(
            MergeCLITests.exported(try d.a(["export", "--format", "json", "--out", "-"]))
                == MergeCLITests.exported(try d.b(["export", "--format", "json", "--out", "-"])))
    }

    @Test func aRemoteThatWasAlteredRolledBackOrIsAnotherVaultsIsRefusedWithNothingWritten() throws {
        let d = try DeviceForkTests.Devices()
        let remote = d.cli.path("remote")
        #expect(try d.a(["sync", remote]).status == 0)
        #expect(try d.b(DeviceForkTests.bobContacts).status == 0)
        // The remote as it was before B's push, kept to be put back later.
        let old = d.cli.path("remote-old")
        try FileManager.default.copyItem(atPath: remote, toPath: old)
        #expect(try d.b(["sync", remote]).status == 0)
        #expect(try d.a(["sync", remote]).status == 0)
        let before = try d.a(["status", "--format", "json"]).stdout
        func unchanged(_ why: String) throws {
            #expect(try d.a(["status", "--format", "json"]).stdout == before, "\(why) wrote nothing")
        }

        // Rolled back: the folder put back as it was before B's push, which A has seen.
        let saved = d.cli.path("remote-now")
        try FileManager.default.moveItem(atPath: remote, toPath: saved)
        try FileManager.default.copyItem(atPath: old, toPath: remote)
        let rolledBack = try d.a(["sync", remote])
        #expect(rolledBack.status == 76 && rolledBack.stderr.contains("was rolled back"), "\(rolledBack)")
        #expect(rolledBack.stderr.contains("--accept-rollback"), "\(rolledBack)")
        try unchanged("a rolled-back remote")
        try FileManager.default.removeItem(atPath: remote)
        try FileManager.default.moveItem(atPath: saved, toPath: remote)

        // A head deleted (to hide a device's writes, a revocation among them).
        let heads = try FileManager.default.contentsOfDirectory(atPath: remote + "/heads").sorted()
        #expect(heads.count == 2, "\(heads)")
        let hidden = d.cli.path("hidden-head")
        try FileManager.default.moveItem(atPath: remote + "/heads/" + heads[0], toPath: hidden)
        let gone = try d.a(["sync", remote])
        #expect(gone.status == 76 && gone.stderr.contains("seen there before, is gone"), "\(gone)")
        try FileManager.default.moveItem(atPath: hidden, toPath: remote + "/heads/" + heads[0])

        // A head altered by one byte.
        for head in heads {
            let path = remote + "/heads/" + head
            var bytes = try Data(contentsOf: URL(fileURLWithPath: path))
            bytes[bytes.count / 2] ^= 0x01
            try bytes.write(to: URL(fileURLWithPath: path))
        }
        let altered = try d.a(["sync", remote])
        #expect(altered.status == 76 && altered.stderr.contains("does not authenticate"), "\(altered)")
        try unchanged("an altered head")

        // Another vault's remote; a folder of other files.
        let other = d.cli.path("other.rxv")
        #expect(try d.cli.run(["init", "--kdf", "interactive"], environment: ["RXVAULT_PATH": other]).status == 0)
        let foreign = try d.cli.run(["sync", remote], environment: ["RXVAULT_PATH": other])
        #expect(foreign.status == 65 && foreign.stderr.contains("carries another vault (id "), "\(foreign)")
        let photos = d.cli.path("photos")
        try FileManager.default.createDirectory(atPath: photos, withIntermediateDirectories: true)
        FileManager.default.createFile(atPath: photos + "/cat.jpg", contents: Data([1, 2, 3]))
        let notRemote = try d.a(["sync", photos])
        #expect(notRemote.status == 65 && notRemote.stderr.contains("is not an rxvault remote"), "\(notRemote)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: photos) == ["cat.jpg"])
        try unchanged("a foreign remote")
    }

    /// A chunk altered, or not yet carried over by a sync tool: B's new state cannot be rebuilt,
    /// and A says so (76 altered, 69 incomplete) before merging anything.
    @Test func aMissingOrAlteredChunkStopsThePullBeforeAnyMerge() throws {
        let d = try DeviceForkTests.Devices()
        let remote = d.cli.path("remote")
        #expect(try d.a(["sync", remote]).status == 0)
        let chunksBefore = Set(try Self.chunks(in: remote))
        #expect(try d.b(DeviceForkTests.bobContacts).status == 0)
        #expect(try d.b(["sync", remote]).status == 0)
        let fresh = Set(try Self.chunks(in: remote)).subtracting(chunksBefore).sorted()
        #expect(!fresh.isEmpty)
        let before = try d.a(["status", "--format", "json"]).stdout

        let aside = d.cli.path("aside")
        for chunk in fresh {
            try FileManager.default.moveItem(atPath: chunk, toPath: aside + "-" + (chunk as NSString).lastPathComponent)
        }
        let incomplete = try d.a(["sync", remote])
        #expect(incomplete.status == 69 && incomplete.stderr.contains("is not complete"), "\(incomplete)")
        for chunk in fresh {
            try FileManager.default.moveItem(atPath: aside + "-" + (chunk as NSString).lastPathComponent, toPath: chunk)
        }

        var bytes = try Data(contentsOf: URL(fileURLWithPath: fresh[0]))
        bytes[bytes.count - 1] ^= 0x80
        try bytes.write(to: URL(fileURLWithPath: fresh[0]))
        let altered = try d.a(["sync", remote])
        #expect(altered.status == 76 && altered.stderr.contains("does not authenticate"), "\(altered)")
        #expect(try d.a(["status", "--format", "json"]).stdout == before, "nothing was merged")
        #expect(!(try d.a(["list"])).stdout.contains("Bob Example"))
    }

    /// `serve --sync REMOTE --sync-every 1s` on A: a revoke made on B and synced reaches A's
    /// vault through the server's own syncs, and the server stops serving the revoked grant;
    /// B's new prescription arrives the same way.
    @Test func aServerKeepsItsDeviceInStepAndServesWhatTheSyncBroughtIn() throws {
        let (d, remote, id, key) = try Self.twoDevicesWithAGrant()

        let server = try ServerProcess(
            d.cli, arguments: ["--socket", d.cli.path("api.sock"), "--sync", remote, "--sync-every", "1s"])
        defer { server.stop() }
        let token = try server.token(identity: key)
        let before = try server.curl("GET", "/VisionPrescription", token: token)
        #expect(before.status == 200 && (before.json["total"] as? Int) == 1, "\(before.body)")

        #expect(try d.b(["revoke", "shop", String(id)]).status == 0)
        #expect(try d.b(DeviceForkTests.bobContacts).status == 0)
        #expect(try d.b(["sync", remote]).status == 0)
        let deadline = Date().addingTimeInterval(30)
        while !(try d.a(["list"])).stdout.contains("Bob Example"), Date() < deadline { usleep(200_000) }
        #expect(
            try d.a(["list"]).stdout.contains("Bob Example"), "the server's sync brought B's write: \(server.stderr)")
        #expect(!(try d.a(["grants"])).stdout.contains("shop"), "and B's revoke")
        let after = try server.curl("GET", "/VisionPrescription", token: token)
        #expect(
            after.status != 200 || (after.json["total"] as? Int) == 0, "the revoked grant is not served: \(after.body)")
        #expect(server.stderr.contains("rxvault: synced with \(remote)"), "\(server.stderr)")
        #expect(server.stop() == 0)
        #expect(try d.a(["check"]).status == 0)
    }

    @Test func syncEveryNeedsARemote() throws {
        let cli = try CLIHarness()
        try cli.initVault()
        let alone = try cli.run(["serve", "--sync-every", "5m"])
        #expect(alone.status == 64 && alone.stderr.contains("--sync-every goes with --sync"), "\(alone)")
        let wrong = try cli.run(["serve", "--sync", cli.path("r"), "--sync-every", "soon"])
        #expect(wrong.status == 64, "\(wrong)")
    }

    /// A and B in step through a folder remote, A's prescription granted to the client "shop"
    /// (its identity in `key`).
    static func twoDevicesWithAGrant() throws -> (DeviceForkTests.Devices, remote: String, id: String, key: String) {
        let d = try DeviceForkTests.Devices()
        let remote = d.cli.path("remote")
        let id = try #require(try d.a(["list", "--format", "json"]).stdout.firstMatch(of: /"id" : "([0-9a-f]{32})"/)?.1)
        let key = d.cli.path("shop.key")
        #expect(try d.a(["client", "add", "shop", "--generate", "--identity-out", key]).status == 0)
        #expect(try d.a(["grant", "shop", String(id)]).status == 0)
        #expect(try d.a(["sync", remote]).status == 0)
        #expect(try d.b(["sync", remote]).status == 0)
        return (d, remote, String(id), key)
    }

    static func chunks(in remote: String) throws -> [String] {
        var out: [String] = []
        for folder in try FileManager.default.contentsOfDirectory(atPath: remote + "/chunks") {
            for name in try FileManager.default.contentsOfDirectory(atPath: remote + "/chunks/" + folder) {
                out.append(remote + "/chunks/" + folder + "/" + name)
            }
        }
        return out
    }
}
