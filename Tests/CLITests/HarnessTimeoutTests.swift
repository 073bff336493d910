import Foundation
import Testing

/// The harness itself: a command that never ends fails its test within the timeout, and is
/// killed with everything it started, instead of stalling the suite (and CI) for ever.
@Suite struct HarnessTimeoutTests {
    @Test func aHangingCommandFailsAndIsKilled() throws {
        let cli = try CLIHarness()
        let pidFile = cli.path("sleeper.pid")
        // Inside setsid, as the harness runs rxvault: the process that hangs is a grandchild.
        let command = [CLIHarness.setsid, "--wait", "/bin/sh", "-c", "echo $$ > \"$0\"; exec sleep 600", pidFile]
        let started = Date()
        #expect(throws: CLIHarness.Timeout.self) {
            try CLIHarness.spawn(command, environment: cli.environment, directory: cli.directory, timeout: 2)
        }
        #expect(Date().timeIntervalSince(started) < 60, "the timeout did not end the wait")
        let pid = try #require(
            Int32(try String(contentsOfFile: pidFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)))
        // Killed: gone, or a zombie until init reaps it.
        var alive = true
        for _ in 0..<250 {
            let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)
            alive = stat.map { !$0.contains(") Z ") } ?? false
            if !alive { break }
            usleep(20_000)
        }
        #expect(!alive, "the hanging process \(pid) was left running")
    }

    @Test func aCommandWithinTheTimeoutReportsAsBefore() throws {
        let cli = try CLIHarness()
        let r = try cli.run(["--version"], timeout: 60)
        #expect(r.status == 0 && !r.stdout.isEmpty, "\(r)")
        let big = try CLIHarness.spawn(
            ["/bin/sh", "-c", "head -c 1000000 /dev/zero; echo done >&2"], environment: cli.environment,
            directory: cli.directory, timeout: 60)
        #expect(
            big.stdout.utf8.count == 1_000_000 && big.stderr == "done\n",
            "output larger than a pipe's buffer is read whole")
    }
}
