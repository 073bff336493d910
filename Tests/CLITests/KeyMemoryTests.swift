import Foundation
import RxTestSupport
import Testing

/// Keys are on locked memory as far as RLIMIT_MEMLOCK allows, and rxvault says once when it
/// does not (SECURITY.md, "Keys in memory").
@Suite struct KeyMemoryTests {
    static let warning =
        "rxvault: warning: could not lock key memory (RLIMIT_MEMLOCK, see 'ulimit -l'): keys may be written to swap; use encrypted swap"

    /// Without CAP_IPC_LOCK and with RLIMIT_MEMLOCK 0, a command that opens many keys (the
    /// passphrase's, the root key, each prescription's) works and says so once, on stderr, with
    /// nothing of a key; with the machine's own limits it says nothing.
    @Test func aCommandThatCannotLockSaysSoOnce() throws {
        guard getuid() == 0 else { return } // Only root can drop CAP_IPC_LOCK and still run as itself.
        let cli = try CLIHarness()
        try cli.initVault()
        for _ in 0..<3 { _ = try cli.add(CLIHarness.glassesArguments) }
        let unlockable = try cli.tool([
            "/usr/bin/setpriv", "--bounding-set=-ipc_lock", "--inh-caps=-ipc_lock", "/usr/bin/prlimit",
            "--memlock=0:0", CLIHarness.binary, "list"
        ])
        #expect(unlockable.status == 0 && unlockable.stdout.components(separatedBy: "\n").count >= 4, "\(unlockable)")
        #expect(unlockable.stderr == Self.warning + "\n", "said once, and nothing else: \(unlockable.stderr)")
        let usual = try cli.run(["list"])
        #expect(usual.status == 0 && usual.stderr.isEmpty, "\(usual)")
    }
}
