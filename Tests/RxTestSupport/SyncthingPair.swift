import Foundation

/// Two real Syncthing devices on this machine carrying one folder between them, as two
/// computers carry a vault's folder (`SyncthingDevice`: each its own home, loopback only, no
/// discovery or relays). The devices know each other by id and by their static addresses;
/// the folder is send-receive on both, with no file-system watcher (the test says when to look:
/// `scan()`), Syncthing's default of 10 conflict copies, and an `.stignore` that keeps SQLite's
/// and rxvault's companion files (`-wal`, `-shm`, `-journal`, `.tmp-`) on their device, as
/// docs/guide.md tells users to.
///
/// `pause()` takes the devices apart (each pauses the other: as two computers offline) and
/// `resume()` brings them together; `waitUntilInSync()` waits until both have everything.
/// `stop()` (or the pair's release, or the test process's end) stops both.
public final class SyncthingPair: @unchecked Sendable {
    public let a: SyncthingDevice
    public let b: SyncthingDevice
    /// Each device's copy of the shared folder.
    public let folderA: String
    public let folderB: String
    public static let folderID = "rxvault-vault"
    /// What `.stignore` holds in each device's folder.
    public static let ignored = ["*-wal", "*-shm", "*-journal", "*.tmp-*"]

    /// Whether the pair can run here: `syncthing` and curl are installed.
    public static var isAvailable: Bool {
        SyncthingDevice.executable != nil && FileManager.default.isExecutableFile(atPath: "/usr/bin/curl")
    }

    /// Starts both devices with their homes and folders under `root` (`a/`, `b/`, `sync-a/`,
    /// `sync-b/`), introduces them and shares the folder; returns once they are connected.
    public init(in root: String) throws {
        folderA = root + "/sync-a"
        folderB = root + "/sync-b"
        for folder in [folderA, folderB] {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            try (Self.ignored.joined(separator: "\n") + "\n").write(
                toFile: folder + "/.stignore", atomically: true, encoding: .utf8)
        }
        a = try SyncthingDevice(name: "device A", home: root + "/a")
        do {
            b = try SyncthingDevice(name: "device B", home: root + "/b")
        } catch {
            a.stop()
            throw error
        }
        do {
            try introduce(a, to: b)
            try introduce(b, to: a)
            try share(folderA, on: a, with: b)
            try share(folderB, on: b, with: a)
            try waitUntil("the devices connect", within: 30) { try self.connected() }
        } catch {
            stop()
            throw error
        }
    }

    deinit { stop() }

    /// Stops both devices (each waits for its Syncthing to end).
    public func stop() {
        a.stop()
        b.stop()
    }

    private func introduce(_ device: SyncthingDevice, to other: SyncthingDevice) throws {
        try device.post(
            "/rest/config/devices",
            json: [
                "deviceID": other.id, "name": other.name, "addresses": [other.listenAddress],
                "autoAcceptFolders": false, "paused": false
            ])
    }

    private func share(_ folder: String, on device: SyncthingDevice, with other: SyncthingDevice) throws {
        try device.post(
            "/rest/config/folders",
            json: [
                "id": Self.folderID, "label": "rxvault", "path": folder, "type": "sendreceive",
                "devices": [["deviceID": device.id], ["deviceID": other.id]], "rescanIntervalS": 3600,
                "fsWatcherEnabled": false, "maxConflicts": 10, "paused": false
            ])
    }

    // MARK: - Driving

    /// Each device pauses the other: no connection, each side writes on its own.
    public func pause() throws {
        try a.post("/rest/system/pause?device=\(b.id)")
        try b.post("/rest/system/pause?device=\(a.id)")
        try waitUntil("the devices disconnect", within: 30) { try !self.connectedEitherWay() }
    }

    /// Each device resumes the other, and the pair waits until they are connected again.
    public func resume() throws {
        try a.post("/rest/system/resume?device=\(b.id)")
        try b.post("/rest/system/resume?device=\(a.id)")
        try waitUntil("the devices reconnect", within: 30) { try self.connected() }
    }

    /// Both devices look at their folder now (returns when each scan is done).
    public func scan() throws {
        for device in [a, b] { try device.post("/rest/db/scan?folder=\(Self.folderID)") }
    }

    /// Waits until both devices are idle, need nothing, and each has all the other has, three
    /// polls in a row; fails with both logs after `seconds`.
    public func waitUntilInSync(within seconds: Double = 40) throws {
        var steady = 0
        try waitUntil("the devices get in sync", within: seconds) {
            steady = try self.inSync() ? steady + 1 : 0
            return steady >= 3
        }
    }

    /// Polls `condition` every 0.1 s until it holds; fails after `seconds` saying `what`, with
    /// the REST API's view of the folder and both logs.
    public func waitUntil(_ what: String, within seconds: Double, _ condition: () throws -> Bool) throws {
        guard try eventuallyThrowing(within: seconds, condition) else {
            throw SyncthingError("\(what) did not happen within \(Int(seconds)) s\n" + state(), logs: logs())
        }
    }

    // MARK: - What the devices say

    func connected() throws -> Bool { try isConnected(a, to: b) && isConnected(b, to: a) }

    func connectedEitherWay() throws -> Bool { try isConnected(a, to: b) || isConnected(b, to: a) }

    private func isConnected(_ device: SyncthingDevice, to other: SyncthingDevice) throws -> Bool {
        let all = try device.get("/rest/system/connections") as? [String: Any]
        let connections = all?["connections"] as? [String: Any]
        return (connections?[other.id] as? [String: Any])?["connected"] as? Bool == true
    }

    func inSync() throws -> Bool {
        guard try connected() else { return false }
        var globals: [String] = []
        for (device, other) in [(a, b), (b, a)] {
            guard let status = try device.get("/rest/db/status?folder=\(Self.folderID)") as? [String: Any],
                let completion = try device.get("/rest/db/completion?folder=\(Self.folderID)&device=\(other.id)")
                    as? [String: Any]
            else { return false }
            guard status["state"] as? String == "idle", (status["needTotalItems"] as? Int ?? 1) == 0,
                (completion["completion"] as? Double ?? 0) >= 100, (completion["needItems"] as? Int ?? 1) == 0
            else { return false }
            globals.append("\(status["globalFiles"] ?? "?")/\(status["globalBytes"] ?? "?")")
        }
        return globals[0] == globals[1]
    }

    /// Each device's folder status and completion, for a failure's message.
    public func state() -> String {
        [(a, b), (b, a)].map { device, other in
            let status = (try? device.get("/rest/db/status?folder=\(Self.folderID)")).map { "\($0)" } ?? "?"
            let completion =
                (try? device.get("/rest/db/completion?folder=\(Self.folderID)&device=\(other.id)")).map { "\($0)" }
                ?? "?"
            return "--- \(device.name): status \(status)\n    completion of \(other.name): \(completion)"
        }.joined(separator: "\n")
    }

    /// Both devices' logs (their ends), for a failure's message.
    public func logs() -> String { a.log() + "\n" + b.log() }
}
