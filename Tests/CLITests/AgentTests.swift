import Foundation
import RxTestSupport
import Testing

/// `rxvault unlock` and its agent, through the binary: commands without a passphrase while
/// unlocked, `lock`, the idle timeout, a crashed agent's socket, a second unlock, the vault file
/// replaced or its passphrase changed, another user, and the modes of the socket and its folder.
///
/// Each test has its own XDG_RUNTIME_DIR (its harness's), and every agent started there is
/// killed when the test ends, whatever happened.
final class AgentHarness: @unchecked Sendable {
    let cli: CLIHarness
    var runtime: String { cli.runtime }
    var agentFolder: String { runtime + "/rxvault" }

    init() throws {
        cli = try CLIHarness()
        try cli.initVault()
    }

    deinit {
        for pid in agents() { kill(pid, SIGKILL) }
    }

    /// The running agents of this test: processes whose command line names a socket in its folder.
    func agents() -> [pid_t] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap { name -> pid_t? in
            guard let pid = pid_t(name), isRunning(pid),
                let raw = FileManager.default.contents(atPath: "/proc/\(name)/cmdline")
            else { return nil }
            let arguments = raw.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
            return arguments.contains("_agent") && arguments.contains(where: { $0.hasPrefix(agentFolder + "/") })
                ? pid : nil
        }
    }

    /// Alive and not a zombie (an agent whose parent exited is reparented; its reaper may be slow).
    func isRunning(_ pid: pid_t) -> Bool { Subprocess.isRunning(pid) }

    /// Waits up to `seconds` for `condition` (RxTestSupport's `eventually`).
    func eventually(_ seconds: Double, _ condition: () -> Bool) -> Bool {
        RxTestSupport.eventually(within: seconds, condition)
    }

    /// `rxvault unlock` with the passphrase file; returns the agent's pid from its output.
    @discardableResult
    func unlock(_ extra: [String] = []) throws -> pid_t {
        let r = try cli.run(["unlock"] + extra)
        #expect(r.status == 0, "\(r)")
        #expect(r.stdout.hasPrefix("unlocked \(cli.vaultPath) until "), "\(r)")
        return try #require(Self.pid(in: r.stdout), "\(r)")
    }

    static func pid(in text: String) -> pid_t? {
        guard let range = text.range(of: "agent pid ") else { return nil }
        return pid_t(text[range.upperBound...].prefix { $0.isNumber })
    }

    /// Runs a command as the owner with no passphrase anywhere and no way to ask for one.
    func runWithoutPassphrase(_ arguments: [String]) throws -> CLIHarness.Result {
        try cli.run(arguments + ["--no-input"], environment: ["RXVAULT_PASSPHRASE_FILE": nil])
    }

    func socketFiles() -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: agentFolder)) ?? []).filter { $0.hasSuffix(".sock") }
    }

    func mode(_ path: String) -> Int? {
        var info = stat()
        guard lstat(path, &info) == 0 else { return nil }
        return Int(info.st_mode & 0o7777)
    }
}

@Suite(.serialized) struct AgentTests {
    /// The value of `status`'s "agent" line.
    func agentLine(_ result: CLIHarness.Result) -> String {
        result.stdout.split(separator: "\n").first { $0.hasPrefix("agent ") }.map {
            $0.dropFirst(5).trimmingCharacters(in: .whitespaces)
        } ?? ""
    }

    @Test func unlockedCommandsNeedNoPassphraseUntilLocked() throws {
        let h = try AgentHarness()
        let id = try h.cli.add(CLIHarness.glassesArguments)
        // Locked: without a passphrase source, nothing opens.
        #expect(try h.runWithoutPassphrase(["list"]).status == 64)
        #expect(try agentLine(h.cli.run(["status"])) == "locked")

        let pid = try h.unlock()
        #expect(h.agents() == [pid])
        // The folder is the user's, 0700; the socket 0600, named by the vault id.
        #expect(h.mode(h.agentFolder) == 0o700)
        let sockets = h.socketFiles()
        #expect(sockets.count == 1 && sockets[0].hasPrefix("agent-") && sockets[0].count == "agent-.sock".count + 32)
        #expect(h.mode(h.agentFolder + "/" + sockets[0]) == 0o600)

        // Reads and writes, with no passphrase file, no terminal and --no-input.
        let list = try h.runWithoutPassphrase(["list"])
        #expect(list.status == 0 && list.stdout.contains("Quintessa Marlowe"), "\(list)")
        #expect(try h.runWithoutPassphrase(["show", id]).stdout.contains("-2.25"))
        let added = try h.runWithoutPassphrase(CLIHarness.contactsArguments)
        #expect(added.status == 0, "\(added)")
        #expect(try h.runWithoutPassphrase(["edit", id, "--note", "edited while unlocked"]).status == 0)
        #expect(try h.runWithoutPassphrase(["check"]).status == 0)
        let status = try h.cli.run(["status", "--format", "json"], environment: ["RXVAULT_PASSPHRASE_FILE": nil])
        let document = try h.cli.json(status.stdout)
        let agent = try #require(document["agent"] as? [String: Any])
        #expect(
            agent["unlocked"] as? Bool == true && agent["pid"] as? Int == Int(pid)
                && agent["memoryLocked"] as? Bool == true)
        // No passphrase was given: the top level says so under a name of its own, and has no
        // "unlocked" a script could take for the agent's.
        #expect(document["passphraseCorrect"] as? Bool == false && document["unlocked"] == nil)
        let withPassphrase = try h.cli.json(h.cli.run(["status", "--format", "json"]).stdout)
        #expect(withPassphrase["passphraseCorrect"] as? Bool == true && withPassphrase["unlocked"] == nil)
        #expect(try agentLine(h.cli.run(["status"])).hasPrefix("unlocked until "))

        // The agent is not used when told not to, nor for passwd (it must prove the passphrase).
        #expect(try h.runWithoutPassphrase(["list", "--no-agent"]).status == 64)
        #expect(
            try h.cli.run(
                ["list", "--no-input"], environment: ["RXVAULT_PASSPHRASE_FILE": nil, "RXVAULT_NO_AGENT": "1"]
            ).status == 64)
        let passwd = try h.runWithoutPassphrase(["passwd", "--new-passphrase-file", h.cli.passphraseFile])
        #expect(passwd.status == 64, "\(passwd)")
        // An explicit passphrase still works (and a wrong one is still wrong).
        let wrong = try h.cli.write("not the passphrase\n", to: "wrong")
        #expect(try h.cli.run(["list", "--passphrase-file", wrong]).status == 77)
        // status checks a passphrase it is given itself, also from the environment: the agent's
        // key would prove nothing of it.
        let wrongStatus = try h.cli.run(["status"], environment: ["RXVAULT_PASSPHRASE_FILE": wrong])
        #expect(wrongStatus.status == 77, "\(wrongStatus)")
        #expect(try h.cli.run(["list", "--passphrase-file", h.cli.passphraseFile]).status == 0)
        // A client identity is still a client: the agent does not make it the owner.
        #expect(try h.cli.run(["add", "glasses", "--identity", h.cli.path("none.key")]).status == 64)

        let lock = try h.cli.run(["lock"])
        #expect(lock.status == 0 && lock.stdout == "locked \(h.cli.vaultPath)\n", "\(lock)")
        #expect(h.eventually(3) { !h.isRunning(pid) }, "the agent exits")
        #expect(h.socketFiles().isEmpty, "and removes its socket")
        #expect(try h.runWithoutPassphrase(["list"]).status == 64)
        #expect(try h.cli.run(["lock"]).stdout == "\(h.cli.vaultPath) was not unlocked\n")
    }

    /// The agent process ends by itself once its idle deadline passes. That each use moves the
    /// deadline is AgentServiceTests' to prove, on a clock they set, without waiting.
    @Test func theIdleTimeoutLocks() throws {
        let h = try AgentHarness()
        let pid = try h.unlock(["--timeout", "3s"])
        #expect(try h.runWithoutPassphrase(["list"]).status == 0)
        #expect(h.eventually(12) { !h.isRunning(pid) }, "locked 3 s after its last use")
        #expect(h.socketFiles().isEmpty)
        #expect(try h.runWithoutPassphrase(["list"]).status == 64)
        #expect(try agentLine(h.cli.run(["status"])) == "locked")
        // A timeout longer than the lifetime, or not a duration, is a usage error.
        #expect(try h.cli.run(["unlock", "--timeout", "2h", "--max-lifetime", "1h"]).status == 64)
        #expect(try h.cli.run(["unlock", "--timeout", "soon"]).status == 64)
        #expect(try h.cli.run(["unlock", "--timeout", "25h"]).status == 64)
    }

    @Test func aCrashedAgentsSocketIsRemovedAndSignalsLock() throws {
        let h = try AgentHarness()
        let first = try h.unlock()
        kill(first, SIGKILL)
        #expect(h.eventually(3) { !h.isRunning(first) })
        #expect(h.socketFiles().count == 1, "a killed agent leaves its socket")
        // A command finds no one listening: it removes the socket and asks for the passphrase.
        #expect(try h.runWithoutPassphrase(["list"]).status == 64)
        #expect(h.socketFiles().isEmpty)

        let second = try h.unlock()
        kill(second, SIGKILL)
        #expect(h.eventually(3) { !h.isRunning(second) })
        // unlock itself goes past a stale socket.
        let third = try h.unlock()
        #expect(third != second && h.agents() == [third])
        #expect(try h.runWithoutPassphrase(["list"]).status == 0)
        // SIGTERM: the agent wipes its key, removes its socket and exits.
        kill(third, SIGTERM)
        #expect(h.eventually(3) { !h.isRunning(third) })
        #expect(h.socketFiles().isEmpty)
    }

    @Test func aSecondUnlockSaysUntilWhenAndRestartsOnlyIfAsked() throws {
        let h = try AgentHarness()
        let pid = try h.unlock()
        // No passphrase needed to learn it is unlocked; the same agent stays.
        let again = try h.runWithoutPassphrase(["unlock"])
        #expect(again.status == 0, "\(again)")
        #expect(
            again.stdout.hasPrefix("\(h.cli.vaultPath) is already unlocked until ")
                && again.stdout.contains("agent pid \(pid)"))
        #expect(h.agents() == [pid])
        // --restart asks for the passphrase again and starts a new agent.
        #expect(try h.runWithoutPassphrase(["unlock", "--restart"]).status == 64)
        let restarted = try h.unlock(["--restart", "--timeout", "1h"])
        #expect(restarted != pid && h.agents() == [restarted])
        #expect(h.eventually(3) { !h.isRunning(pid) })
        // A wrong passphrase starts nothing.
        #expect(try h.cli.run(["lock"]).status == 0)
        let wrong = try h.cli.write("not the passphrase\n", to: "wrong")
        #expect(try h.cli.run(["unlock", "--passphrase-file", wrong]).status == 77)
        #expect(h.eventually(3) { h.agents().isEmpty })
    }

    @Test func aReplacedOrRestoredFileIsRefusedAndLocks() throws {
        let h = try AgentHarness()
        let id = try h.cli.add(CLIHarness.glassesArguments)
        #expect(try h.cli.run(["backup", h.cli.path("b.age")]).status == 0)

        // A copy of the vault elsewhere (same id, another file): the agent does not serve it.
        try FileManager.default.copyItem(atPath: h.cli.vaultPath, toPath: h.cli.path("copy.rxv"))
        let pid = try h.unlock()
        let copy = try h.runWithoutPassphrase(["list", "--vault", h.cli.path("copy.rxv")])
        #expect(
            copy.status == 64 && copy.stderr.contains("the agent holds \(h.cli.vaultPath), not this file"), "\(copy)")
        #expect(h.isRunning(pid), "the agent stays unlocked for its own file")
        let status = try h.cli.run(["status", "--vault", h.cli.path("copy.rxv")])
        #expect(agentLine(status) == "locked (another file of this vault is unlocked: \(h.cli.vaultPath))", "\(status)")
        // A second unlock of the copy is refused while the first file is unlocked.
        #expect(try h.cli.run(["unlock", "--vault", h.cli.path("copy.rxv")]).status == 75)

        // restore --force puts a new file in place: the agent notices, refuses and locks.
        #expect(try h.cli.run(["restore", h.cli.path("b.age"), "--force"]).status == 0)
        let after = try h.runWithoutPassphrase(["show", id])
        #expect(after.status == 64, "\(after)")
        #expect(h.eventually(4) { !h.isRunning(pid) }, "the agent locked")
        #expect(h.socketFiles().isEmpty)

        // The same through a request, before the agent's own check comes round: a file moved
        // into place and asked for at once.
        let second = try h.unlock()
        try FileManager.default.removeItem(atPath: h.cli.path("copy.rxv"))
        try FileManager.default.copyItem(atPath: h.cli.vaultPath, toPath: h.cli.path("copy.rxv"))
        #expect(rename(h.cli.path("copy.rxv"), h.cli.vaultPath) == 0)
        let refused = try h.runWithoutPassphrase(["list"])
        #expect(refused.status == 64, "\(refused)")
        // Either the request found it ("the agent locked: the file ... was replaced") or the
        // agent's check already had; either way it is gone.
        #expect(refused.stderr.contains("was replaced") || !h.isRunning(second), "\(refused)")
        #expect(h.eventually(4) { !h.isRunning(second) })
    }

    /// A file renamed over the unlocked one (what sync tools and editors do) makes no
    /// command wait on the agent: the first that asks finds it locked, and its socket is gone by
    /// the next. (`ServeReplacedFileTests` checks the same of the agent `serve` runs.)
    @Test func aFileReplacedByRenameLeavesNoSocketToWaitOn() throws {
        let h = try AgentHarness()
        let pid = try h.unlock()
        try FileManager.default.copyItem(atPath: h.cli.vaultPath, toPath: h.cli.path("copy.rxv"))
        #expect(rename(h.cli.path("copy.rxv"), h.cli.vaultPath) == 0)
        for arguments in [
            ["status", "--passphrase-file", h.cli.passphraseFile], ["list"],
            ["status", "--passphrase-file", h.cli.passphraseFile]
        ] {
            let start = Date()
            let result = try h.cli.run(arguments)
            #expect(result.status == 0, "\(result)")
            #expect(Date().timeIntervalSince(start) < 5, "\(arguments) took \(Date().timeIntervalSince(start)) s")
        }
        #expect(h.eventually(3) { !h.isRunning(pid) && h.socketFiles().isEmpty }, "\(h.socketFiles())")
    }

    @Test func aPassphraseChangedWhileUnlockedLocksIt() throws {
        let h = try AgentHarness()
        let pid = try h.unlock()
        let newPassphrase = try h.cli.write("a new passphrase for the vault\n", to: "new")
        let passwd = try h.cli.run(["passwd", "--new-passphrase-file", newPassphrase])
        #expect(passwd.status == 0, "\(passwd)")
        #expect(passwd.stderr.contains("is locked now"), "\(passwd)")
        #expect(h.eventually(3) { !h.isRunning(pid) })
        #expect(try h.runWithoutPassphrase(["list"]).status == 64)

        // Changed where this agent was not told (a copy changed elsewhere, put back in place):
        // the agent finds another key wrapping in the header and refuses.
        h.cli.environment["RXVAULT_PASSPHRASE_FILE"] = newPassphrase
        let second = try h.unlock()
        try FileManager.default.copyItem(atPath: h.cli.vaultPath, toPath: h.cli.path("elsewhere.rxv"))
        let changed = try h.cli.run([
            "passwd", "--vault", h.cli.path("elsewhere.rxv"), "--new-passphrase-file", h.cli.passphraseFile
        ])
        #expect(changed.status == 0, "\(changed)")
        #expect(h.isRunning(second), "the copy has another inode: its passwd does not lock this vault's agent")
        // Put back over the original in place (same inode, another header).
        let bytes = try #require(FileManager.default.contents(atPath: h.cli.path("elsewhere.rxv")))
        let handle = try #require(FileHandle(forWritingAtPath: h.cli.vaultPath))
        try handle.truncate(atOffset: 0)
        try handle.write(contentsOf: bytes)
        try handle.close()
        let refused = try h.runWithoutPassphrase(["list"])
        #expect(refused.status == 64)
        #expect(refused.stderr.contains("passphrase was changed"), "\(refused)")
        #expect(h.eventually(3) { !h.isRunning(second) })
        // The old passphrase now unlocks nothing; the new one does.
        #expect(try h.cli.run(["unlock", "--passphrase-file", newPassphrase]).status == 77)
        #expect(try h.cli.run(["unlock", "--passphrase-file", h.cli.passphraseFile]).status == 0)
    }

    @Test func anOlderFormatVaultMustBeUpgradedFirst() throws {
        let h = try AgentHarness()
        let fixture = try FormatUpgradeCLITests().formatTwoVault()
        fixture.environment["XDG_RUNTIME_DIR"] = h.runtime
        let refused = try fixture.run(["unlock"])
        #expect(refused.status == 64 && refused.stderr.contains("run 'rxvault upgrade' first"), "\(refused)")
        #expect(h.agents().isEmpty)
        #expect(try fixture.run(["upgrade"]).status == 0)
        let unlocked = try fixture.run(["unlock"])
        #expect(unlocked.status == 0, "\(unlocked)")
        #expect(try fixture.run(["list", "--no-input"], environment: ["RXVAULT_PASSPHRASE_FILE": nil]).status == 0)
        #expect(try fixture.run(["lock"]).status == 0)
    }

    @Test func anUnsafeFolderIsRefused() throws {
        let h = try AgentHarness()
        try FileManager.default.createDirectory(
            atPath: h.agentFolder, withIntermediateDirectories: false,
            attributes: [.posixPermissions: 0o755])
        let unlock = try h.cli.run(["unlock"])
        #expect(unlock.status == 77 && unlock.stderr.contains("chmod 700"), "\(unlock)")
        #expect(h.agents().isEmpty)
        // Commands warn and go on with the passphrase.
        let list = try h.cli.run(["list"])
        #expect(list.status == 0 && list.stderr.contains("not using an agent"), "\(list)")
    }

    static let setpriv = "/usr/bin/setpriv"
    static let asNobody = [
        setpriv, "--reuid=65534", "--regid=65534", "--clear-groups",
        "--inh-caps=+dac_override", "--ambient-caps=+dac_override"
    ]

    /// Whether this machine lets the suite act as another user: root, util-linux's setpriv and
    /// python3, and a nobody given CAP_DAC_OVERRIDE reads a root-only file (a container may
    /// not grant the capability).
    static let canActAsAnotherUser: Bool = {
        guard geteuid() == 0, FileManager.default.isExecutableFile(atPath: setpriv),
            FileManager.default.isExecutableFile(atPath: "/usr/bin/python3"),
            let folder = try? TemporaryDirectory(prefix: "rxvault-nobody")
        else { return false }
        let file = folder.path("root-only")
        guard
            FileManager.default.createFile(
                atPath: file, contents: Data("x".utf8), attributes: [.posixPermissions: 0o600])
        else { return false }
        return (try? Subprocess.run(asNobody + ["/usr/bin/head", "-c", "1", file], timeout: 30))?.status == 0
    }()

    /// Another user reaching the socket (here: nobody, given CAP_DAC_OVERRIDE so the folder's
    /// 0700 and the socket's 0600 do not stop it first) is refused by the agent's SO_PEERCRED
    /// check, and learns nothing; and rxvault run as that user refuses root's folder.
    @Test(
        .enabled(
            if: AgentTests.canActAsAnotherUser,
            "needs root, setpriv, python3 and CAP_DAC_OVERRIDE for nobody (setpriv --ambient-caps) to act as another user"
        ))
    func anotherUserIsRefused() throws {
        let h = try AgentHarness()
        try h.unlock()
        let socket = h.agentFolder + "/" + (try #require(h.socketFiles().first))
        let asNobody = Self.asNobody
        // A client of the protocol that asks for the key, then reports all it received.
        let client = """
            import json, socket, struct, sys, os
            print("uid", os.getuid())
            s = socket.socket(socket.AF_UNIX)
            s.connect(sys.argv[1])
            body = json.dumps({"v": 1, "op": "root-key", "file": {"vaultID": "00", "device": 0, "inode": 0, "keyWrapping": "00"}}).encode()
            s.sendall(bytes([1]) + struct.pack(">I", len(body)) + body)
            data = b""
            while True:
                chunk = s.recv(65536)
                if not chunk: break
                data += chunk
            print("received", len(data))
            print(data[5:5 + struct.unpack(">I", data[1:5])[0]].decode())
            """
        let probe = try Subprocess.run(asNobody + ["/usr/bin/python3", "-c", client, socket])
        let text = probe.stdout
        #expect(probe.status == 0 && text.contains("uid 65534"), "\(probe)")
        let lines = text.split(separator: "\n").map(String.init)
        let reply = try h.cli.json(try #require(lines.last))
        #expect(reply["ok"] as? Bool == false && reply["code"] as? String == "permission", "\(text)")
        #expect(reply["status"] == nil, "another user learns nothing of what the agent holds")
        // One frame only: the reply, no key after it.
        let received = try #require(lines.first { $0.hasPrefix("received ") }.flatMap { Int($0.dropFirst(9)) })
        #expect(received == 5 + (try #require(lines.last)).utf8.count, "\(text)")
        #expect(!text.contains(h.cli.vaultPath))

        // rxvault itself, run as nobody, will not use root's folder at all.
        var environment = h.cli.environment
        environment["RXVAULT_PASSPHRASE_FILE"] = nil
        let cliAsNobody = try Subprocess.run(asNobody + [CLIHarness.binary, "lock", "--all"], environment: environment)
        let cliText = cliAsNobody.stderr
        #expect(cliAsNobody.status == 77, "\(cliText)")
        #expect(cliText.contains("belongs to uid 0, not to you (uid 65534)"), "\(cliText)")
        // The agent is still there for its own user (nobody's connection and lock did nothing).
        #expect(try h.runWithoutPassphrase(["list"]).status == 0)
    }
}
