import Foundation
import RxAgent
import RxCrypto
import RxTestSupport
import RxVault
import Testing

/// A vault in a fresh folder, its passphrase and its root key (unwrapped the way `unlock` does).
final class UnlockedVault: @unchecked Sendable {
    let folder: TemporaryDirectory
    var directory: String { folder.path }
    let path: String
    let passphrase: SecretBytes
    let rootKey: SecretBytes

    init() throws {
        folder = try TemporaryDirectory(prefix: "rxagent")
        path = folder.path("vault.rxv")
        passphrase = secret("agent test passphrase")
        try Vault.create(at: path, passphrase: passphrase, kdf: TestKDF.fast)
        rootKey = try VaultHeader.read(at: path).unwrapRootKey(passphrase: passphrase)
    }

    func identity() throws -> VaultFileIdentity { try VaultFileIdentity.read(at: path) }

    /// A peer that is this process: one end of a socket pair, as the kernel reports it.
    func ownPeer() throws -> AgentPeer {
        var pair: [Int32] = [-1, -1]
        try #require(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair) == 0)
        defer {
            close(pair[0])
            close(pair[1])
        }
        return try AgentPeer.of(socket: pair[0])
    }
}

@Suite struct AgentServiceTests {
    @Test func handsTheRootKeyOnlyForTheFileItUnlockedAndUntilItLocks() throws {
        let v = try UnlockedVault()
        let service = try AgentService(
            vaultPath: v.path, rootKey: SecretBytes(copying: v.rootKey.withUnsafeBytes { $0 }),
            idleTimeout: 60, maxLifetime: 600, now: 1000)
        let peer = try v.ownPeer()
        #expect(peer.isSameUser && peer.pid == getpid())

        let (reply, key) = service.answer(AgentRequest(.rootKey, file: try v.identity()), from: peer, now: 1010)
        #expect(reply.ok)
        #expect(key == v.rootKey, "the key handed is the vault's root key")
        #expect(service.deadline == 1070, "a use moves the idle deadline")
        // The key opens the vault without the passphrase.
        _ = try Vault.open(at: v.path, with: .rootKey(try #require(key)))

        // A copy of the same vault (same id, another inode): refused, the agent stays unlocked.
        let copy = v.directory + "/copy.rxv"
        try FileManager.default.copyItem(atPath: v.path, toPath: copy)
        let other = service.answer(
            AgentRequest(.rootKey, file: try VaultFileIdentity.read(at: copy)), from: peer, now: 1011)
        #expect(!other.reply.ok && other.reply.code == "other-file" && other.key == nil)
        #expect(!service.isLocked)

        // No file named, another protocol version: refused.
        #expect(service.answer(AgentRequest(.rootKey), from: peer, now: 1012).reply.code == "bad-request")
        var future = AgentRequest(.status)
        future.v = 2
        #expect(service.answer(future, from: peer, now: 1012).reply.code == "bad-request")

        // Idle past the timeout: locked, the key wiped, nothing handed.
        let late = service.answer(AgentRequest(.rootKey, file: try v.identity()), from: peer, now: 1071)
        #expect(!late.reply.ok && late.reply.locked == true && late.key == nil)
        #expect(service.isLocked && service.lockReason?.contains("not used for 60 s") == true)
    }

    @Test func theMaximumLifetimeEndsItWhateverTheUse() throws {
        let v = try UnlockedVault()
        let service = try AgentService(
            vaultPath: v.path, rootKey: SecretBytes(copying: v.rootKey.withUnsafeBytes { $0 }),
            idleTimeout: 60, maxLifetime: 100, now: 0)
        let peer = try v.ownPeer()
        for t in stride(from: 10.0, to: 100, by: 30) {
            #expect(service.answer(AgentRequest(.rootKey, file: try v.identity()), from: peer, now: t).reply.ok)
        }
        #expect(service.deadline == 100, "the idle deadline never passes the lifetime")
        #expect(service.answer(AgentRequest(.status), from: peer, now: 100).reply.code == "locked")
        #expect(service.lockReason == "its maximum lifetime ended")
    }

    @Test func aChangedPassphraseOrAReplacedFileLocksIt() throws {
        let v = try UnlockedVault()
        let peer = try v.ownPeer()
        let service = try AgentService(
            vaultPath: v.path, rootKey: SecretBytes(copying: v.rootKey.withUnsafeBytes { $0 }),
            idleTimeout: 60, maxLifetime: 600, now: 0)
        let before = try v.identity()
        var text = Array("a new passphrase".utf8)
        try Vault.open(at: v.path, with: .passphrase(v.passphrase)).changePassphrase(to: SecretBytes(consuming: &text))
        #expect(service.fileChange(headerToo: false) == nil, "same file: the cheap check cannot see it")
        let (reply, key) = service.answer(AgentRequest(.rootKey, file: before), from: peer, now: 1)
        #expect(!reply.ok && reply.code == "file-changed" && reply.locked == true && key == nil)
        #expect(reply.message?.contains("passphrase was changed") == true, "\(reply.message ?? "")")

        // Another file moved into place: the cheap check (what the loop runs) sees it.
        let w = try UnlockedVault()
        let second = try AgentService(
            vaultPath: w.path, rootKey: SecretBytes(copying: w.rootKey.withUnsafeBytes { $0 }),
            idleTimeout: 60, maxLifetime: 600, now: 0)
        let copy = w.directory + "/copy.rxv"
        try FileManager.default.copyItem(atPath: w.path, toPath: copy)
        #expect(rename(copy, w.path) == 0)
        #expect(second.fileChange(headerToo: false)?.contains("was replaced") == true)
    }

    @Test func aWrongKeyIsNotTaken() throws {
        let v = try UnlockedVault()
        #expect(throws: VaultError.self) {
            try AgentService(vaultPath: v.path, rootKey: SecretBytes(randomCount: 32), idleTimeout: 60, maxLifetime: 60)
        }
    }
}

@Suite struct AgentDirectoryTests {
    @Test func itIsCreatedPrivateAndAnUnsafeOneIsRefused() throws {
        let scratch = try TemporaryDirectory(prefix: "rxa", short: true)
        let base = scratch.path
        let directory = AgentDirectory(path: base + "/rxvault")
        #expect(try directory.isSafe() == false, "missing: not created by a lookup")
        try directory.prepare()
        var info = stat()
        #expect(lstat(directory.path, &info) == 0 && info.st_mode & 0o777 == 0o700)

        chmod(directory.path, 0o755)
        #expect(throws: AgentError.self) { try directory.prepare() }
        #expect(throws: AgentError.self) { _ = try directory.isSafe() }
        chmod(directory.path, 0o700)
        // A symbolic link to a private folder is refused too.
        let real = base + "/real"
        try FileManager.default.createDirectory(atPath: real, withIntermediateDirectories: false)
        chmod(real, 0o700)
        #expect(symlink(real, base + "/link") == 0)
        #expect(throws: AgentError.self) { _ = try AgentDirectory(path: base + "/link").isSafe() }
    }

    /// Another user's folder: made here by giving a private folder to nobody, which takes root.
    @Test(.enabled(if: geteuid() == 0, "needs root, to give a folder to another user (nobody)"))
    func anotherUsersFolderIsRefused() throws {
        let scratch = try TemporaryDirectory(prefix: "rxa", short: true)
        let directory = AgentDirectory(path: scratch.path + "/rxvault")
        try directory.prepare()
        #expect(try directory.isSafe())
        #expect(chown(directory.path, 65534, 65534) == 0)
        let error = #expect(throws: AgentError.self) { try directory.isSafe() }
        #expect(error?.description.contains("belongs to uid 65534") == true, "\(String(describing: error))")
    }

    @Test func theStandardPlacesAndTheSocketPathLimit() throws {
        #expect(
            AgentDirectory.standard(environment: ["XDG_RUNTIME_DIR": "/run/user/1000"]).path == "/run/user/1000/rxvault"
        )
        #expect(
            AgentDirectory.standard(environment: ["XDG_RUNTIME_DIR": "relative"]).path == "/tmp/rxvault-\(geteuid())")
        #expect(AgentDirectory.standard(environment: [:]).path == "/tmp/rxvault-\(geteuid())")
        let id = String(repeating: "ab", count: 16)
        #expect(
            try AgentDirectory(path: "/run/user/1000/rxvault").socketPath(vaultIDHex: id)
                == "/run/user/1000/rxvault/agent-\(id).sock")
        #expect(throws: AgentError.self) {
            try AgentDirectory(path: "/tmp/" + String(repeating: "x", count: 80)).socketPath(vaultIDHex: id)
        }
    }
}
